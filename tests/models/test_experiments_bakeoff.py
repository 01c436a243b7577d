"""``minilm experiment bakeoff`` (minilm/experiments/bakeoff.py): its plan, the equal-compute checks,
the probe inputs, the token counter, the distilled student, and (slow) the --quick run end to end."""
import json
import math
from dataclasses import asdict, replace

import numpy as np
import pytest

from autograd.errors import ConfigError
from minilm.cli import build_parser
from minilm.experiments import EXPERIMENTS
from minilm.experiments import bakeoff as exp
from minilm.experiments import settings_of
from minilm.recipes.config import from_args
from tests.models.experiment_quick import quick_run


def test_registered_and_planned():
    assert EXPERIMENTS[exp.NAME] == "minilm.experiments.bakeoff"
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert full.conditions == quick.conditions == exp.CONDITIONS and len(exp.CONDITIONS) == 10
    assert [m.key for m in full.metrics] == ["finetuned", "finetuned_gain", "sentiment", "entailment",
                                             "sentiment_gain", "entailment_gain", "perplexity", "vs_unigram",
                                             "parameters", "tokens", "gflops"]
    assert not full.metrics[6].higher_is_better and not full.metrics[7].higher_is_better
    f, q = full.settings, quick.settings
    assert q["steps"] < f["steps"] and q["docs"] < f["docs"] and q["batch_tokens"] < f["batch_tokens"]
    assert q["n_embd"] <= f["n_embd"] and q["probe_test"] < f["probe_test"]
    json.dumps(f)
    assert "Held equal" in full.notes[0] and "1,000 optimizer steps" in full.notes[0] and "384,000" in full.notes[0]
    args = build_parser().parse_args(["experiment", exp.NAME, "--steps", "7", "--corpus", "x.txt"])
    settings = exp.plan(from_args(exp.CONFIG, args, base=exp.CONFIG())).settings
    assert settings["steps"] == 7 and settings["corpus"] == "x.txt"
    assert [c.metric for c in full.claims] == ["finetuned_gain"] * 2 and q["finetune_steps"] < f["finetune_steps"]
    no_tuning = exp.plan(replace(exp.CONFIG(), finetune_steps=0))      # without the fine-tune: read on the probe
    assert [c.metric for c in no_tuning.claims] == ["entailment_gain"] * 2
    assert [m.key for m in no_tuning.metrics] == [m.key for m in full.metrics][2:]
    assert all("fine-tun" not in c.paper for c in no_tuning.claims)


def test_gains_are_taken_against_the_families_own_init():
    got = exp.against_init({"sentiment": 0.75, "entailment": 0.5}, {"sentiment": 0.5, "entailment": 0.625})
    assert got == {"sentiment_init": 0.5, "entailment_init": 0.625, "sentiment_gain": 0.25, "entailment_gain": -0.125}


def test_every_probe_word_occurs_in_the_pre_training_text():
    """Issue: 33 of the sentiment probe's 39 word types (and "not") never occurred in pre-training, so
    no family could have learned them; the task sentences added to the text fix that, and the check
    sees the difference."""
    full = settings_of(exp.CONFIG())
    text = exp.pretraining_documents(full, seed=0)
    assert exp.missing_probe_words(text, full, seed=0) == {"sentiment": 0.0, "entailment": 0.0}
    without = {**full, "task_text": 0}
    without = exp.missing_probe_words(exp.pretraining_documents(without, seed=0), without, seed=0)
    assert without["sentiment"] > 0.8 and without["entailment"] > 0.05, without


def test_equal_compute_check_passes_and_fails():
    s = {**asdict(exp.CONFIG()), "steps": 250}         # 250 steps x 384 tokens = 96,000; ±10%, ±25%
    exp.check_equal(exp.BERT, 96_000, 100_000, 100_000, s)
    exp.check_equal(exp.T5, 104_000, 120_000, 100_000, s)
    with pytest.raises(ConfigError, match="tokens.*away from steps"):
        exp.check_equal(exp.GPT, 80_000, 100_000, 100_000, s)
    with pytest.raises(ConfigError, match="parameters.*away from a BERT"):
        exp.check_equal(exp.BART, 96_000, 130_000, 100_000, s)
    for exempt in exp.NOT_EQUAL_PARAMETERS:           # ELECTRA's generator, the half-depth student
        exp.check_equal(exempt, 96_000, 50_000, 100_000, s)
    with pytest.raises(ConfigError, match="tokens"):  # but their tokens are checked all the same
        exp.check_equal(exp.STUDENT, 50_000, 50_000, 100_000, s)


def test_compute_estimate_counts_the_parameters_a_token_passes():
    assert exp.active_parameters(exp.BERT, 900) == 900
    assert exp.active_parameters(exp.T5, 900) == 450                 # one of the two stacks
    assert exp.active_parameters(exp.STUDENT, 600, teacher_parameters=900) == 900   # + a forward of the teacher


class _Tok:
    pad_id, cls_id, sep_id = 0, 1, 2

    def encode(self, text):
        return [3 + len(w) for w in text.split()]

    def build_inputs(self, a, b=None):
        ids = [1, *a, 2] + ([*b, 2] if b is not None else [])
        return ids, [0] * len(ids)

    def encode_pair(self, a, b):
        return self.build_inputs(self.encode(a), self.encode(b))


def test_probe_inputs_follow_each_family_and_are_cut():
    tok = _Tok()
    assert exp.pair_ids(exp.BERT, tok, "a bb", "ccc", 40) == [1, 4, 5, 2, 6, 2]
    assert exp.pair_ids(exp.BERT, tok, "a bb", None, 40) == [1, 4, 5, 2]
    assert exp.pair_ids(exp.GPT, tok, "a bb", "ccc", 40) == [4, 5, 2, 6, 2]      # no [CLS] for GPT
    assert exp.pair_ids(exp.GPT, tok, "a bb ccc", None, 2) == [4, 5]


def test_probe_tasks_are_the_same_for_every_family_of_a_seed():
    s = dict(probe_train=10, probe_test=7)
    a, b = exp.probe_tasks(0, s), exp.probe_tasks(0, s)
    assert set(a) == {"sentiment", "entailment"}
    for task in a:
        x_tr, y_tr, x_te, y_te = a[task]
        assert len(x_tr) == len(y_tr) == 10 and len(x_te) == len(y_te) == 7
        assert x_tr == b[task][0] and (y_te == b[task][3]).all()
    assert a["sentiment"][0][0][1] is None and a["entailment"][0][0][1] is not None


def test_counted_adds_the_tokens_and_delegates():
    class R:
        family, batch_size = "x", 3

        def loss(self, model, batch):
            return batch, {"tokens": batch}
    c = exp.Counted(R())
    c.loss(None, 5)
    c.loss(None, 7)
    assert c.tokens == 12 and c.family == "x" and c.batch_size == 3


@pytest.fixture(scope="module")
def tiny_bert():
    s = asdict(replace(exp.CONFIG.quick(), docs=20, vocab_size=200, seq_len=24, n_embd=16))
    return exp.calibrated(exp.BERT, s, 0), s


def test_calibrated_batch_holds_about_batch_tokens(tiny_bert):
    recipe, s = tiny_bert
    tokens = np.mean([exp.batch_tokens(recipe, np.random.default_rng(k)) for k in range(8)])
    assert abs(tokens - s["batch_tokens"]) / s["batch_tokens"] < 0.2


def test_student_starts_from_every_other_teacher_layer_and_its_loss_is_finite(tiny_bert):
    recipe, _ = tiny_bert
    teacher = recipe.model
    student = exp.DistilledStudent(recipe, teacher, seed=0)
    assert student.model.config.n_layer == 1 and teacher.config.n_layer == 2
    t_layer = dict(teacher.bert.encoder.named_parameters())
    s_layer = dict(student.model.bert.encoder.named_parameters())
    for name, p in s_layer.items():                   # layer map [0]: the student's block is teacher block 0
        assert np.array_equal(p.data, t_layer[name].data), name
    loss, metrics = student.loss(student.model, student.batch(np.random.default_rng(0)))
    assert math.isfinite(loss.item()) and metrics["tokens"] > 0
    loss.backward()
    assert any(np.abs(p.grad).sum() > 0 for p in student.model.parameters() if p.grad is not None)
    assert all(p.grad is None or not np.abs(p.grad).sum() for p in teacher.parameters())



def test_student_loss_weighs_each_term_as_asked(tiny_bert):
    """DistilledStudent(weights=...): the paper's 5 : 2 : 1 by default; a zero drops a term (the soft
    targets, for tools/distil_at_pretraining.py): MLM alone is the student's own MLM loss."""
    recipe, _ = tiny_bert
    teacher, batch = recipe.model, recipe.batch(np.random.default_rng(0))
    mlm_only = exp.DistilledStudent(recipe, teacher, seed=0, weights={"soft": 0.0, "mlm": 1.0, "cos": 0.0})
    out = mlm_only.model(batch["input_ids"], batch["segment_ids"], batch["attention_mask"],
                         mlm_labels=batch["mlm_labels"])
    assert mlm_only.loss(mlm_only.model, batch)[0].item() == pytest.approx(out["mlm_loss"].item())
    paper = exp.DistilledStudent(recipe, teacher, seed=0)
    assert paper.weights == exp.DISTIL_WEIGHTS == {"soft": 5.0, "mlm": 2.0, "cos": 1.0}
    assert paper.loss(paper.model, batch)[0].item() > 2 * out["mlm_loss"].item()     # + soft + cosine > 0

def _tiny_gpt_and_bert():
    from minilm.models.bert import BertConfig
    from minilm.models.bert_heads import BertForPreTraining
    from minilm.models.gpt import GPT, GPTConfig
    gpt = GPT(GPTConfig(vocab_size=10, block_size=8, n_layer=1, n_head=2, n_embd=8, dropout=0.0),
              rng=np.random.default_rng(0))
    bert = BertForPreTraining(BertConfig(vocab_size=10, max_position_embeddings=8, n_layer=1, n_head=2, n_embd=8,
                                         dropout=0.0), rng=np.random.default_rng(0))
    return gpt, bert


def test_the_fine_tuned_classifier_reads_the_state_that_has_read_the_pair():
    """GPT's label comes from its last real token (the only one that has read the whole pair), the
    encoders' from the first; padding never changes it; the loss trains the network itself."""
    gpt, bert = _tiny_gpt_and_bert()
    ids, mask = np.array([[3, 4, 5, 0], [3, 6, 0, 0]]), np.array([[1, 1, 1, 0], [1, 1, 0, 0]])
    for condition, model in ((exp.GPT, gpt), (exp.BERT, bert)):
        clf = exp.FamilyClassifier(condition, model, 3, rng=np.random.default_rng(1))
        logits = clf(ids, None, mask)["logits"].data                                    # (2, 3)
        padded = ids.copy()
        padded[:, -1] = 7                                               # a pad's id: masked out either way
        assert logits.shape == (2, 3) and np.allclose(clf(padded, None, mask)["logits"].data, logits), condition
        last = ids.copy()
        last[0, 2] = 8                                                  # the first pair's last real token
        assert not np.allclose(clf(last, None, mask)["logits"].data[0], logits[0]), condition
        out = clf(ids, None, mask, labels=np.array([0, 2]))
        out["loss"].backward()
        assert any(p.grad is not None and np.abs(p.grad).sum() > 0 for p in model.parameters()), condition
    # GPT reads the last token only: the first sentence's first token alone does not decide it
    clf = exp.FamilyClassifier(exp.GPT, gpt, 3, rng=np.random.default_rng(1))
    h = exp.encoder(exp.GPT, gpt)(ids, mask).data
    assert np.allclose(clf(ids, None, mask)["logits"].data[1], h[1, 1] @ clf.classifier.weight.data.T
                       + clf.classifier.bias.data, atol=1e-5)


def test_fine_tuning_leaves_the_pretrained_network_as_it_was(tiny_bert):
    recipe, s = tiny_bert
    before = recipe.model.state_dict()
    acc = exp.finetuned_entailment(exp.BERT, recipe.model, recipe.tokenizer, 0,
                                   {**s, "probe_train": 16, "probe_test": 20, "finetune_steps": 2}, dev=10)
    assert 0.0 <= acc <= 1.0 and (acc * 20) == pytest.approx(round(acc * 20))   # a share of the 20 test pairs
    after = recipe.model.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_encoders_give_one_vector_per_token():
    from minilm.models.gpt import GPT, GPTConfig
    from minilm.models.xlnet import XLNet, XLNetConfig
    ids, mask = np.array([[3, 4, 5, 0], [3, 6, 0, 0]]), np.array([[1, 1, 1, 0], [1, 1, 0, 0]])
    gpt = GPT(GPTConfig(vocab_size=10, block_size=8, n_layer=1, n_head=2, n_embd=8), rng=np.random.default_rng(0))
    xl = XLNet(XLNetConfig(vocab_size=10, max_position_embeddings=8, n_layer=1, n_head=2, n_embd=8),
               rng=np.random.default_rng(0))
    for condition, model in ((exp.GPT, gpt), (exp.XLNET, xl)):
        h = exp.encoder(condition, model)(ids, mask)
        assert h.shape == (2, 4, 8)
    # GPT's causal stack: a token's vector does not depend on what follows it
    other = ids.copy()
    other[0, 2] = 7
    a, b = exp.encoder(exp.GPT, gpt)(ids, mask).data, exp.encoder(exp.GPT, gpt)(other, mask).data
    assert np.allclose(a[0, :2], b[0, :2]) and not np.allclose(a[0, 2], b[0, 2])


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    assert r["conditions"] == exp.CONDITIONS and r["seeds"] == [0, 1, 2]
    assert len(r["runs"]) == 3 * len(exp.CONDITIONS)
    for c in exp.CONDITIONS:
        for key in ("sentiment", "entailment", "parameters"):
            values = r["summary"][key][c]["values"]
            assert len(values) == 3 and all(math.isfinite(v) for v in values), (c, key)
    for run in r["runs"]:   # each family against its own init: the gain is trained − untrained, per run
        m = run["metrics"]
        for name in ("sentiment", "entailment", "finetuned"):
            assert m[f"{name}_gain"] == pytest.approx(m[name] - m[f"{name}_init"]), (run["condition"], name)
            assert 0.0 <= m[name] <= 1.0, (run["condition"], name)
        if run["condition"] == exp.RANDOM:
            assert m["sentiment_gain"] == m["entailment_gain"] == m["finetuned_gain"] == 0.0
    ppl = r["summary"]["perplexity"]
    assert math.isfinite(ppl[exp.GPT]["mean"]) and ppl[exp.GPT]["mean"] < 300       # V = 300: below uniform
    assert all(v is None for c in exp.CONDITIONS if c != exp.GPT for v in ppl[c]["values"])
    assert (tmp_path / f"{exp.NAME}.png").exists() and (tmp_path / f"{exp.NAME}.md").exists()


def test_vs_unigram_reads_each_familys_token_loss_against_its_own_unigram(monkeypatch):
    """The plateau column: BERT's MLM loss (not MLM + NSP), ELECTRA's generator loss (not + 50 x the
    discriminator's), every other family's own loss, each minus the unigram model's on its targets."""
    settings = {**exp.settings_of(exp.CONFIG.quick()), "task_text": 0, "finetune_steps": 0}
    fake = {"metrics": {"loss": 9.0, "mlm_loss": 4.0}, "baselines": {"unigram_loss": 5.0}}
    monkeypatch.setattr(exp, "_train", lambda recipe, s, seed: fake)
    monkeypatch.setattr(exp, "check_equal", lambda *a, **k: None)
    monkeypatch.setattr(exp, "probe_scores", lambda *a, **k: {"sentiment": 0.5, "entailment": 0.4,
                                                              "sentiment_negated": 0.5})
    monkeypatch.setattr(exp, "calibrated", lambda c, s, seed: exp.recipe_of(c, s, seed))
    assert exp.run_one(exp.BERT, 0, settings)["vs_unigram"] == -1.0        # 4.0 - 5.0
    assert exp.run_one(exp.ELECTRA, 0, settings)["vs_unigram"] == -1.0
    assert exp.run_one(exp.GPT, 0, settings)["vs_unigram"] == 4.0          # 9.0 - 5.0
    assert math.isnan(exp.run_one(exp.RANDOM, 0, settings)["vs_unigram"])


def test_the_recipes_report_a_unigram_loss_on_their_masked_targets():
    """BERT's, DeBERTa's and ELECTRA's baselines give the MLM loss of p(w) fitted on the training
    text: a number between the loss of the true frequencies and that of the uniform guess."""
    settings = {**exp.settings_of(exp.CONFIG.quick()), "task_text": 0}
    for condition in (exp.BERT, exp.DEBERTA, exp.ELECTRA):
        recipe = exp.recipe_of(condition, settings, 0)
        if condition == exp.ELECTRA:
            recipe.evaluate(recipe.model)                                   # its baselines come with the masks
        u = recipe.baselines()["unigram_loss"]
        assert 2.0 < u < math.log(recipe.tokenizer.vocab_size), (condition, u)
