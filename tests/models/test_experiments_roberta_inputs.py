"""``minilm experiment roberta-inputs`` (minilm/experiments/roberta_inputs.py): its plan, the equal-tokens
check, the RoBERTa recipe's input formats (--packing segment-pair / sentence-pair, --tokens-per-batch),
the one-sentence NSP pairs, and (slow) the --quick run end to end."""
import json
import math

import numpy as np
import pytest

from autograd.errors import ConfigError, MiniLMError
from minilm.cli import build_parser
from minilm.data import sentence_pair_instances
from minilm.experiments import EXPERIMENTS, settings_of
from minilm.experiments import roberta_inputs as exp
from minilm.recipes import roberta
from minilm.recipes.config import from_args, override
from tests.models.experiment_quick import quick_run
from minilm.recipes.config import override


def test_registered_and_planned():
    assert EXPERIMENTS[exp.NAME] == "minilm.experiments.roberta_inputs"
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert full.conditions == quick.conditions == exp.CONDITIONS
    assert set(exp.FORMATS.values()) == {"full", "doc", "segment-pair", "sentence-pair"}
    assert [m.key for m in full.metrics] == ["entailment_finetuned", "entailment_probe", "sentiment_probe",
                                             "mlm_accuracy", "tokens_seen_k"]
    assert 0 < quick.settings["ft_steps"] < full.settings["ft_steps"]
    for key in ("steps", "docs", "tokens_per_batch", "probe_test"):
        assert quick.settings[key] < full.settings[key], key
    json.dumps(full.settings)
    assert any("Held equal" in n for n in full.notes)
    args = build_parser().parse_args(["experiment", exp.NAME, "--steps", "7", "--corpus", "some.txt"])
    settings = exp.plan(from_args(exp.CONFIG, args, base=exp.CONFIG())).settings
    assert settings["steps"] == 7 and settings["corpus"] == "some.txt"


def test_equal_tokens_check_passes_and_fails():
    settings = {"steps": 10, "tokens_per_batch": 100, "token_tolerance": 0.05}
    exp.check_tokens(1000, settings)
    exp.check_tokens(951, settings)
    with pytest.raises(ConfigError, match="94.0%"):
        exp.check_tokens(940, settings, "SENTENCE-PAIR+NSP")
    with pytest.raises(ConfigError):
        exp.check_tokens(1001, settings)


def test_recipe_defaults_keep_todays_behaviour():
    cfg = roberta.RobertaRecipeConfig()
    assert cfg.packing == "full" and cfg.tokens_per_batch == 0 and cfg.batch_size == 32


def test_sentence_pairs_hold_one_sentence_a_segment():
    docs = [[[10 + d * 10 + i] * (i + 1) for i in range(4)] for d in range(5)]   # doc d, sentence i: distinct ids
    pairs = sentence_pair_instances(docs, max_seq_length=32, rng=np.random.default_rng(0), cls_id=0, sep_id=1)
    assert len(pairs) == 5 * 3
    random_next = 0
    for k, inst in enumerate(pairs):
        d, i = divmod(k, 3)
        ids = inst.input_ids
        first_sep = ids.index(1, 1)
        a, b = ids[1:first_sep], ids[first_sep + 1:-1]
        assert ids[0] == 0 and ids[-1] == 1 and a == docs[d][i]
        assert inst.segment_ids == [0] * (len(a) + 2) + [1] * (len(b) + 1)
        if inst.is_random_next:
            random_next += 1
            assert b not in docs[d] and any(b in other for other in docs)
        else:
            assert b == docs[d][i + 1]
    assert 0 < random_next < len(pairs)
    cut = sentence_pair_instances([[[5] * 20, [6] * 20], [[7] * 3]], max_seq_length=16,
                                  rng=np.random.default_rng(0), cls_id=0, sep_id=1)
    assert all(len(i.input_ids) <= 16 for i in cut)
    with pytest.raises(MiniLMError, match="at least 2"):
        sentence_pair_instances([[[5], [6]]], max_seq_length=16, rng=np.random.default_rng(0), cls_id=0, sep_id=1)


@pytest.fixture(scope="module")
def recipes():
    settings = settings_of(override(exp.CONFIG.quick(), docs=16, tokens_per_batch=300, vocab_size=300))
    return settings, {c: roberta.RobertaRecipe(exp.recipe_config(c, 0, settings)) for c in exp.FORMATS}


def test_pair_formats_train_bert_with_nsp(recipes):
    from minilm.models.bert_heads import BertForPreTraining
    settings, built = recipes
    for condition in ("SEGMENT-PAIR+NSP", "SENTENCE-PAIR+NSP"):
        r = built[condition]
        assert r.pairs and isinstance(r.model, BertForPreTraining) and r.model_config.type_vocab_size == 2
        batch = r.batch(np.random.default_rng([0, 3]))
        assert batch["segment_ids"].shape == batch["input_ids"].shape and batch["segment_ids"].max() == 1
        assert set(np.unique(batch["nsp_labels"])) <= {0, 1}
        loss, info = r.loss(r.model, batch)
        out = r.model(batch["input_ids"], batch["segment_ids"], batch["attention_mask"],
                      mlm_labels=batch["labels"], nsp_labels=batch["nsp_labels"])
        assert math.isclose(loss.item(), out["mlm_loss"].item() + out["nsp_loss"].item(), rel_tol=1e-5)
        assert info["tokens"] <= settings["tokens_per_batch"]
        assert 0 <= r.evaluate(r.model)["nsp_accuracy"] <= 1
    sentence = built["SENTENCE-PAIR+NSP"].train_blocks
    segment = built["SEGMENT-PAIR+NSP"].train_blocks
    assert np.mean([len(b) for b in sentence]) < np.mean([len(b) for b in segment])   # one sentence a segment
    assert not built["FULL-SENTENCES"].pairs and not hasattr(built["FULL-SENTENCES"].model, "bert")


def test_every_format_is_probed_without_segment_ids(recipes, monkeypatch):
    """The +NSP models were trained with a segment embedding, the others have none: the probe gives it to
    no one, so no format gets a trained marker of the hypothesis that the others lack."""
    _, built = recipes
    for recipe in built.values():
        seen = []
        if recipe.pairs:
            bert = recipe.model.bert
            monkeypatch.setattr(recipe.model, "bert", lambda ids, segs, mask: seen.append(segs) or bert(ids, segs, mask))
        ids = np.array([[recipe.tokenizer.bos_id, 7, recipe.tokenizer.eos_id, 9, recipe.tokenizer.eos_id]])
        exp.encoder(recipe)(ids, np.ones_like(ids))
        assert seen in ([], [None])


def test_doc_sentences_never_cross_a_document(recipes):
    _, built = recipes
    sep = built["FULL-SENTENCES"].tokenizer.eos_id          # the separator FULL-SENTENCES puts between documents
    assert any(sep in b for b in built["FULL-SENTENCES"].train_blocks)
    assert not any(sep in b for b in built["DOC-SENTENCES"].train_blocks)


def test_token_budget_fills_every_step_and_walks_the_epoch_in_order(recipes):
    settings, built = recipes
    budget = settings["tokens_per_batch"]
    for condition, r in built.items():
        lengths = [len(b) for b in r.train_blocks]
        walked, step = [], 0
        while len(walked) < len(lengths):
            schedule = r.epoch_schedule(step)
            used = sum(lengths[i] for _, i in schedule)
            assert used <= budget or len(schedule) == 1, condition
            walked += schedule
            step += 1
            nxt = r.epoch_schedule(step)[0]
            assert used + lengths[nxt[1]] > budget, condition        # the next input would not have fitted
        first = [i for e, i in walked if e == 0]
        assert sorted(first) == list(range(len(lengths))), condition   # epoch 0 reads every input once
        assert exp.tokens_seen(r, 3) == sum(lengths[i] for s in range(3) for _, i in r.epoch_schedule(s))


def test_shared_mlm_blocks_are_the_same_for_every_format(recipes):
    settings, built = recipes
    full = built["FULL-SENTENCES"]
    # FULL-SENTENCES' own held-out set is the shared one: the same accuracy by both routes
    cfg = exp.recipe_config("FULL-SENTENCES", 0, settings)
    assert math.isclose(exp.shared_mlm_accuracy(full, cfg), full.evaluate(full.model)["mlm_accuracy"])
    for condition, r in built.items():
        assert 0 <= exp.shared_mlm_accuracy(r, exp.recipe_config(condition, 0, settings)) <= 1


def test_whole_word_mask_and_pairs_refuse_to_combine():
    with pytest.raises(ConfigError, match="whole-word"):
        roberta.RobertaRecipe(override(roberta.RobertaRecipeConfig(), docs=8, vocab_size=300, packing="sentence-pair",
                              whole_word_mask=True))


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    assert r["conditions"] == exp.CONDITIONS and r["seeds"] == [0, 1, 2]
    assert len(r["runs"]) == 3 * len(exp.CONDITIONS)
    for key in ("entailment_probe", "sentiment_probe", "entailment_finetuned", "mlm_accuracy"):
        for c in exp.CONDITIONS:
            values = r["summary"][key][c]["values"]
            assert len(values) == 3 and all(0 <= v <= 1 for v in values)
    budget = r["settings"]["steps"] * r["settings"]["tokens_per_batch"] / 1000
    for c in exp.FORMATS:   # equal tokens seen, as run_one checked
        assert all(0.95 * budget <= v <= budget for v in r["summary"]["tokens_seen_k"][c]["values"]), c
    assert (tmp_path / f"{exp.NAME}.png").exists() and (tmp_path / f"{exp.NAME}.md").exists()


def test_pretraining_text_holds_every_word_of_the_probes(tmp_path):
    """task_text mixes unlabelled task sentences into the corpus the recipe reads: every word type of
    the entailment and sentiment probes then occurs in pre-training (without it, 'not' and the
    hypernyms never do); task_text=0 leaves the recipe config as it is."""
    import re
    from minilm.data import entailment_dataset, read_corpus, sentiment_dataset
    from minilm.experiments import roberta_inputs as ri
    from minilm.experiments import settings_of
    settings = settings_of(ri.CONFIG.quick())
    cfg = ri.recipe_config("FULL-SENTENCES", 0, settings)
    assert ri.with_task_text(cfg, {**settings, "task_text": 0}, 0, str(tmp_path)) is cfg
    mixed = ri.with_task_text(cfg, {**settings, "task_text": 800}, 0, str(tmp_path))
    docs = read_corpus(mixed.corpus)
    assert len(docs) == cfg.docs + 100                               # 800 sentences in documents of 8

    def words(texts):
        return set(re.findall(r"[a-z']+", " ".join(texts).lower()))
    seen = words(s for d in docs for s in d)
    rng = np.random.default_rng([0, 77])
    probe = words(t for e in entailment_dataset(300, rng=rng) for t in (e.premise, e.hypothesis))
    probe |= words(e.text for e in sentiment_dataset(300, rng=np.random.default_rng([0, 78])))
    assert {"not", "animal", "person"} <= probe and probe <= seen, sorted(probe - seen)
    assert not {"not", "animal"} <= words(s for d in docs[:cfg.docs] for s in d)   # the corpus alone lacks them


def test_findings_are_read_on_the_fine_tuned_score_unless_it_is_skipped():
    """The paper fine-tunes: the claims read that column, and the frozen probe only with --ft-steps 0,
    each with the reason measured for its own readout."""
    quick = exp.CONFIG.quick()
    skipped = exp.plan(override(quick, ft_steps=0))
    assert "entailment_finetuned" not in [m.key for m in skipped.metrics]
    assert [c.metric for c in skipped.claims] == ["entailment_probe"] * 3
    assert all(c.why_not == exp.PROBE_WHY_NOT and "probe" in c.paper for c in skipped.claims)
    plan = exp.plan(override(quick, ft_steps=5))
    assert "entailment_finetuned" in [m.key for m in plan.metrics]
    assert [c.metric for c in plan.claims] == ["entailment_finetuned"] * 3 and plan.claims == exp.CLAIMS
    assert all(c.why_not == exp.FINETUNED_WHY_NOT and "fine-tuned" in c.paper for c in plan.claims)
    assert [(c.above, c.below) for c in plan.claims] == [(c.above, c.below) for c in skipped.claims]
    assert any(n.startswith("Fine-tuned:") for n in plan.notes)
    args = build_parser().parse_args(["experiment", exp.NAME, "--ft-steps", "5", "--ft-lrs", "1e-3"])
    settings = exp.plan(from_args(exp.CONFIG, args, base=quick)).settings
    assert settings["ft_steps"] == 5 and exp.ft_lrs(settings) == [1e-3]
    with pytest.raises(ConfigError, match="--ft-lrs"):
        exp.ft_lrs({"ft_lrs": "fast"})
    with pytest.raises(ConfigError, match="positive"):
        exp.ft_lrs({"ft_lrs": "1e-3,0"})


@pytest.fixture(scope="module")
def tiny_recipe():
    settings = settings_of(override(exp.CONFIG.quick(), docs=12, probe_train=16, probe_test=8, ft_steps=2))
    recipe = roberta.RobertaRecipe(exp.recipe_config("FULL-SENTENCES", 0, settings))
    return recipe, settings


def test_finetuned_readout_chooses_the_rate_on_dev_and_reports_test(tiny_recipe, monkeypatch):
    """The learning rate is chosen on the dev pairs (the first quarter of the training pairs, never
    trained on) and the chosen run's test accuracy is reported, not the best test accuracy; every
    rate starts from the pre-trained weights, which are left in place afterwards."""
    from minilm.downstream import finetune
    recipe, settings = tiny_recipe
    settings = {**settings, "ft_lrs": "1e-3,2e-3,3e-3"}
    data = exp.probe_data(recipe.tokenizer, 0, settings)["entailment"]
    before = {k: v.copy() for k, v in recipe.model.state_dict().items()}
    calls = []

    def fake_finetune(clf, ids, mask, labels, *, lr, **kw):
        assert all(np.array_equal(v, before[k]) for k, v in recipe.model.state_dict().items())  # fresh start
        assert len(labels) == settings["probe_train"] - exp.dev_size(settings)
        calls.append(lr)
        recipe.model.parameters()[0].data += 1.0                       # fine-tuning moves the weights

    dev_acc, test_acc = {1e-3: 0.5, 2e-3: 0.9, 3e-3: 0.7}, {1e-3: 0.4, 2e-3: 0.6, 3e-3: 1.0}

    def fake_accuracy(clf, ids, mask, labels, **kw):
        table = dev_acc if len(labels) == exp.dev_size(settings) else test_acc
        return np.arange(len(labels)) < round(table[calls[-1]] * len(labels))

    monkeypatch.setattr(finetune, "finetune_classifier", fake_finetune)
    monkeypatch.setattr(finetune, "classification_accuracy", fake_accuracy)
    assert exp.finetuned_accuracy(recipe, data, 0, settings) == pytest.approx(0.625)   # 2e-3's test: 5 of 8
    assert calls == [1e-3, 2e-3, 3e-3]
    assert all(np.array_equal(v, before[k]) for k, v in recipe.model.state_dict().items())


def test_finetuned_readout_trains_a_copy(tiny_recipe):
    recipe, settings = tiny_recipe
    before = {k: v.copy() for k, v in recipe.model.state_dict().items()}
    scores = exp.probes(recipe, 0, settings)
    assert 0 <= scores["entailment_finetuned"] <= 1
    assert all(np.array_equal(v, before[k]) for k, v in recipe.model.state_dict().items())
