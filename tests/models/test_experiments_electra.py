"""The two ELECTRA experiments (minilm/experiments/electra_ablation.py, generator_size.py and their
shared electra_common.py): the probe, the features, the pairs, the plans, and one quick run each."""
import json
import math

import numpy as np
import pytest

from autograd import Tensor
from autograd.errors import ConfigError
from minilm.experiments import (EXPERIMENTS, config_of, electra_ablation, electra_common, electra_efficiency,
                                generator_size, settings_of)
from minilm.models.electra import ElectraConfig
from minilm.recipes.config import override
from tests.models.experiment_quick import quick_run


# ---- the linear probe -------------------------------------------------------------------------

def test_probe_separates_separable_classes_and_is_chance_on_noise():
    rng = np.random.default_rng(0)
    centers = 4.0 * rng.standard_normal((3, 10))
    y = rng.integers(0, 3, size=600)
    x = centers[y] + rng.standard_normal((600, 10))
    assert electra_common.probe_accuracy(x[:300], y[:300], x[300:], y[300:]) > 0.97
    noise = rng.standard_normal((600, 10))
    acc = electra_common.probe_accuracy(noise[:300], y[:300], noise[300:], y[300:])
    assert abs(acc - 1 / 3) < 0.1  # no signal: chance, within ~3.5 standard errors of 300 draws


def test_probe_standardises_with_the_training_rows_only():
    # a feature scaled by 1000 must not swamp the others: the probe sees standardised features
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=400)
    x = np.stack([y + 0.3 * rng.standard_normal(400), 1000 * rng.standard_normal(400)], axis=1)
    assert electra_common.probe_accuracy(x[:200], y[:200], x[200:], y[200:]) > 0.9
    # test rows shifted far away are not re-centred on their own mean
    shifted = x[200:] + np.array([5.0, 0.0])
    assert electra_common.probe_accuracy(x[:200], y[:200], shifted, y[200:]) < 0.7


def test_probe_is_deterministic_and_leaves_inputs_alone():
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((100, 4)), rng.integers(0, 3, size=100)
    before = x.copy()
    a = electra_common.probe_accuracy(x[:50], y[:50], x[50:], y[50:])
    assert a == electra_common.probe_accuracy(x[:50], y[:50], x[50:], y[50:])
    np.testing.assert_array_equal(x, before)


# ---- features and pairs -----------------------------------------------------------------------

def test_sentence_features_are_cls_beside_the_mean_over_real_tokens():
    h = np.arange(2 * 3 * 2, dtype=np.float64).reshape(2, 3, 2)  # (N, T, H)

    def encode(ids, mask):  # the first id says which row of h to return
        return Tensor(h[ids[:, 0]])
    mask = np.array([[1, 1, 0], [1, 1, 1]])
    f = electra_common.sentence_features(encode, np.array([[0, 5, 5], [1, 5, 5]]), mask, batch_size=1)
    assert f.shape == (2, 4)
    np.testing.assert_allclose(f[0], [0, 1, 1, 2])       # h[CLS] = (0, 1); mean of rows 0, 1 only (pad ignored)
    np.testing.assert_allclose(f[1], [6, 7, 8, 9])


class _Tok:
    """The three calls entailment_pairs needs, on whitespace words."""
    pad_id, cls_id, sep_id = 0, 2, 3

    def encode_pair(self, a, b):
        ids = [2, *[10 + len(w) for w in a.split()], 3, *[10 + len(w) for w in b.split()], 3]
        return ids, [0] * len(ids)


def test_entailment_pairs_layout_and_labels():
    ids, mask, y, texts = electra_common.entailment_pairs(_Tok(), 30, np.random.default_rng(0))
    assert ids.shape[0] == mask.shape[0] == len(y) == len(texts) == 30
    assert (ids[:, 0] == 2).all() and set(y) <= {0, 1, 2}
    for row, m, (p, h) in zip(ids, mask, texts):
        n = int(m.sum())
        assert n == len(p.split()) + len(h.split()) + 3 and (row[n:] == 0).all() and row[n - 1] == 3
    again = electra_common.entailment_pairs(_Tok(), 30, np.random.default_rng(0))
    np.testing.assert_array_equal(ids, again[0])


def test_bag_of_words_reference_beats_chance_on_entailment():
    acc = electra_common.bag_of_words_accuracy(0, {"probe_train": 300, "probe_test": 300})
    assert 0.4 < acc <= 1.0


# ---- which network is probed -------------------------------------------------------------------

def test_encoder_of_picks_the_network_and_its_width():
    from minilm.models.electra import Electra
    model = Electra(ElectraConfig(vocab_size=20, max_position_embeddings=8, n_layer=1, n_head=2, n_embd=16,
                                  generator_hidden_fraction=0.5, dropout=0.0), rng=np.random.default_rng(0))
    ids, mask = np.array([[2, 7, 8, 3]]), np.ones((1, 4), dtype=np.int64)
    encode, H = electra_common.encoder_of(model, "discriminator")
    assert H == 16 and encode(ids, mask).shape == (1, 4, 16)
    encode, G = electra_common.encoder_of(model, "generator")
    assert G == 8 and encode(ids, mask).shape == (1, 4, 8)
    with pytest.raises(ConfigError, match="network='teacher'"):
        electra_common.encoder_of(model, "teacher")


def test_ablation_rows_use_the_right_objective_and_network():
    c = electra_ablation.CONDITIONS
    assert {c[k][0]["objective"] for k in ("ELECTRA", "All-tokens MLM", "Replace MLM", "ELECTRA 15%")} == \
        {"electra", "all_tokens_mlm", "replace_mlm", "electra15"}
    assert all(c[k][1] == "discriminator" for k in ("ELECTRA", "All-tokens MLM", "Replace MLM", "ELECTRA 15%"))
    bert, network = c["BERT (MLM)"]
    assert network == "generator" and bert["disc_weight"] == 0.0
    # equal width and depth: BERT's generator is as big as the other rows' main network
    cfg = ElectraConfig(vocab_size=50, n_embd=64, n_head=4, generator_hidden_fraction=bert["generator_hidden_fraction"])
    assert cfg.generator_hidden == cfg.n_embd and cfg.generator_layers == cfg.n_layer
    assert c["no pre-training"] is None and set(electra_ablation.PAPER_GLUE) < set(c)


def test_generator_fractions_give_distinct_widths_at_the_default_size():
    H = electra_ablation.CONFIG().recipe.model.n_embd
    widths = [ElectraConfig(vocab_size=50, n_embd=H, n_head=4, generator_hidden_fraction=f).generator_hidden
              for f in generator_size.FRACTIONS.values()]
    assert widths == sorted(set(widths)) and widths[-1] == H and len(widths) == len(generator_size.FRACTIONS)


# ---- the plans ---------------------------------------------------------------------------------

@pytest.mark.parametrize("module", [electra_ablation, generator_size])
def test_plans_are_complete_and_quick_is_smaller(module):
    assert EXPERIMENTS[module.NAME] == module.__name__
    full, quick = module.plan(module.CONFIG()), module.plan(module.CONFIG.quick())
    assert json.loads(json.dumps(full.settings)) == full.settings
    for key in ("steps", "lr", "warmup", "docs", "n_layer", "n_head", "n_embd", "batch_size", "max_seq_length",
                "vocab_size", "probe_train", "probe_test"):
        assert key in full.settings and key in quick.settings
    assert quick.settings["steps"] < full.settings["steps"] and quick.settings["n_embd"] < full.settings["n_embd"]
    assert [m.key for m in full.metrics][:3] == ["finetuned", "probe", "disc_auc"]
    assert {c.metric for c in full.claims} == {"finetuned"}            # the paper's readout decides ...
    no_finetuning = module.plan(override(module.CONFIG(), finetune_steps=0))
    assert {c.metric for c in no_finetuning.claims} == {"probe"}       # ... unless the run has none
    if full.x is not None:    # every row on the x axis but the untrained reference
        assert set(full.x) == set(full.conditions) - {"no pre-training"}


def test_command_line_options_reach_the_settings():
    from minilm.cli import build_parser
    from minilm.recipes.config import from_args
    args = build_parser().parse_args(["experiment", "electra-ablation", "--steps", "7", "--probe-train", "50"])
    s = electra_ablation.plan(from_args(electra_ablation.CONFIG, args, base=electra_ablation.CONFIG())).settings
    assert s["steps"] == 7 and s["probe_train"] == 50 and s["lr"] == electra_ablation.CONFIG().recipe.train.lr
    assert s["temperature"] == 2.0 and s["task_text"] == 800 and s["finetune_steps"] == 200   # the defaults
    args = build_parser().parse_args(["experiment", "electra-efficiency", "--temperature", "1", "--finetune-steps", "0"])
    s = electra_efficiency.plan(from_args(electra_efficiency.CONFIG, args, base=electra_efficiency.CONFIG())).settings
    assert s["temperature"] == 1.0 and s["finetune_steps"] == 0                             # the paper's T, probe only
    args = build_parser().parse_args(["experiment", "generator-size", "--quick", "--lr", "0.001"])
    cfg = from_args(generator_size.CONFIG, args, base=generator_size.CONFIG.quick())
    assert generator_size.plan(cfg).settings["lr"] == 0.001


def test_no_pretraining_row_is_an_untrained_encoder():
    s = settings_of(override(electra_ablation.CONFIG.quick(), docs=8, probe_train=12, probe_test=12))
    recipe, metrics = electra_common.pretrain(config_of(electra_ablation.CONFIG, s).recipe, 0, steps=0)
    assert metrics == {}
    out = electra_ablation.run_one("no pre-training", 0, dict(s, finetune_steps=2))
    assert set(out) == {"probe", "finetuned"} and 0.0 <= out["probe"] <= 1.0 and 0.0 <= out["finetuned"] <= 1.0


# ---- one quick run of each experiment (slow) ---------------------------------------------------

def _run_quick(name, tmp_path, capsys):
    from minilm.cli import main
    out = quick_run(name, tmp_path)   # seed 0: the recorded numbers
    assert (tmp_path / f"{name}.md").exists() and (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    assert out["seeds"] == [0, 1, 2]
    runs = {(r["condition"], r["seed"]): r["metrics"] for r in out["runs"]}
    assert set(runs) == {(c, s) for c in out["conditions"] for s in (0, 1, 2)}
    for metrics in runs.values():
        assert "probe" in metrics and all(math.isfinite(v) for v in metrics.values())
        assert 0.0 <= metrics["probe"] <= 1.0
    return out, runs


@pytest.mark.slow
def test_electra_ablation_quick(tmp_path, capsys):
    out, runs = _run_quick("electra-ablation", tmp_path, capsys)
    assert out["conditions"] == list(electra_ablation.CONDITIONS)
    for s in (0, 1, 2):
        # only the replaced-token detectors report an AUC; ELECTRA's beats chance (0.5) even at toy size
        assert runs[("ELECTRA", s)]["disc_auc"] > 0.55 and 0.0 <= runs[("ELECTRA 15%", s)]["disc_auc"] <= 1.0
        assert not {"disc_auc", "disc_auc_masked"} & set(runs[("BERT (MLM)", s)])
        assert "disc_auc" not in runs[("Replace MLM", s)]
        assert set(runs[("no pre-training", s)]) == {"probe", "finetuned"}
        assert set(runs[("bag of words", s)]) == {"probe"}


@pytest.mark.slow
def test_generator_size_quick(tmp_path, capsys):
    out, runs = _run_quick("generator-size", tmp_path, capsys)
    assert out["conditions"] == list(generator_size.FRACTIONS) + ["no pre-training"]
    for (condition, seed), m in runs.items():
        if condition == "no pre-training":
            assert set(m) == {"probe", "finetuned"}
            continue
        assert m["disc_auc"] > 0.55, (condition, seed)  # the discriminator beats chance at every size
        assert 0.0 < m["replaced_rate"] < 0.2  # at most the masked 15%, minus correct samples


def test_the_page_says_which_probe_words_the_pre_training_text_lacks(tmp_path):
    """The ELECTRA experiments mix task sentences into the pre-training text (task_text); the page
    counts the probe's word types that the text still lacks, and names some."""
    from minilm.data import entailment_dataset
    s = settings_of(electra_ablation.CONFIG.quick())
    rng = np.random.default_rng([0, 77])                     # the probe's pairs for seed 0
    words = entailment_dataset(s["probe_train"], rng=rng)[0].premise.lower().rstrip(" .").split()
    unseen, types, share = electra_common.unseen_probe_words([[" ".join(words) + " .", "zzz qqq ."]], s)
    assert not set(words) & set(unseen) and len(unseen) == types - len(set(words)) and 0 < share < 1
    corpus = tmp_path / "text.txt"
    corpus.write_text(" ".join(words) + " .\n\nzzz qqq .\n", encoding="utf-8")
    bare = electra_ablation.plan(config_of(electra_ablation.CONFIG, dict(s, corpus=str(corpus), task_text=0)))
    assert f"{len(unseen)} of the entailment probe's {types} word types" in bare.notes[-2]
    assert "with no sentences of the tasks" in bare.notes[-2]
    for experiment in (electra_ablation, generator_size, electra_efficiency):   # as recorded: 800 task sentences,
        default = experiment.plan(experiment.CONFIG()).notes                    # the generator sampled at T = 2
        text = [n for n in default if n.startswith("Pre-training text:")]
        assert len(text) == 1 and "every one of the entailment probe's" in text[0]   # every probe word occurs
        assert electra_common.TEMPERATURE_NOTE.format(temperature=2) in default
        paper = experiment.plan(override(experiment.CONFIG(), temperature=1.0)).notes   # the paper's T: the caveat
        assert electra_common.DISCRIMINATOR_CAVEAT in paper and electra_common.DISCRIMINATOR_CAVEAT not in default
        assert electra_common.TEMPERATURE_NOTE.format(temperature=1) not in paper


def test_discriminator_tool_measures_the_detector_against_its_base_rate(capsys):
    """tools/electra_discriminator.py: H(r) is the loss of always answering the replaced share; the
    logit features pool the detector's output per segment; one --quick seed prints one row."""
    from tests.models.hf_fixture_tool import import_tool
    tool = import_tool("electra_discriminator")
    assert tool.base_rate_entropy(0.5) == pytest.approx(math.log(2)) and tool.base_rate_entropy(0.0) == 0.0
    assert tool.base_rate_entropy(0.127) == pytest.approx(0.3806, abs=1e-4)
    ids = np.array([[2, 7, 8, 3, 9, 3, 0]])                  # [CLS] a b [SEP] c [SEP] pad, sep_id 3
    assert tool.segments_of(ids, 3).tolist() == [[0, 0, 0, 0, 1, 1, 1]]

    class Detector:                                           # logits = the ids, so the pooling is visible
        def discriminator(self, ids, mask):
            return Tensor(ids.astype(np.float64) - 5.0)
    mask = (ids > 0).astype(np.int64)
    f = tool.logit_features(Detector(), ids, mask, tool.segments_of(ids, 3))
    assert f.tolist() == [[(-3 + 2 + 3 - 2) / 4, 3.0, 2, (4 - 2) / 2, 4.0, 1]]   # the pad's logit (-5) never counts
    rng = np.random.default_rng(0)
    assert tool.effective_dimension(rng.normal(size=(4000, 8))) == pytest.approx(8, rel=0.05)   # every direction
    line = rng.normal(size=(500, 1)) * rng.normal(size=(1, 8))
    assert tool.effective_dimension(line) == pytest.approx(1.0)                  # one direction
    assert tool.main(["--quick", "--seeds", "0"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert rows[0].split()[:3] == ["seed", "L_disc", "H(base)"] and rows[0].split()[-2:] == ["dim", "dim@init"]
    assert len(rows) == 2
    seed, loss, base, auc, probe, logit_probe, dim, dim_init = (float(x) for x in rows[1].split())
    assert seed == 0 and 0 < loss < 1 and 0.2 < base < 0.5 and 0 <= auc <= 1
    assert 0 < probe <= 100 and 0 < logit_probe <= 100
    assert 1 <= dim <= 32 and 1 <= dim_init <= 32                               # --quick: width 32


@pytest.mark.parametrize("network", ["discriminator", "generator"])
def test_finetune_readout_trains_a_copy_and_keeps_the_rate_best_on_dev(network, monkeypatch):
    """electra_common.finetune_entailment: every weight of a copy trains (the model passed in is left
    as it was); each rate is scored on the dev pairs, and the test score is the best rate's."""
    from minilm.downstream import finetune
    s = dict(settings_of(electra_ablation.CONFIG.quick()), probe_train=24, probe_test=30)
    recipe, _ = electra_common.pretrain(config_of(electra_ablation.CONFIG, s).recipe, 0, steps=0)
    before = {k: v.copy() for k, v in recipe.model.state_dict().items()}
    dev_scores = iter([0.2, 0.5, 0.9, 0.7, 0.4])   # rate 1: dev, then test (best so far); rate 2 the same; rate 3: dev
    scored, trained = [], []
    real_accuracy, real_finetune = finetune.classification_accuracy, finetune.finetune_classifier

    def accuracy(clf, ids, mask, labels, **kw):
        scored.append((clf, len(labels)))
        real_accuracy(clf, ids, mask, labels, **kw)
        return np.array([next(dev_scores)])

    def train(clf, *a, **kw):
        trained.append({k: v.copy() for k, v in clf.state_dict().items()})
        return real_finetune(clf, *a, **kw)
    monkeypatch.setattr(finetune, "classification_accuracy", accuracy)
    monkeypatch.setattr(finetune, "finetune_classifier", train)
    acc, lr = electra_common.finetune_entailment(recipe.model, network, recipe.tokenizer, 0, s, steps=3,
                                                 lrs=(1e-4, 2e-4, 3e-4), dev=20)
    assert lr == 2e-4 and acc == pytest.approx(0.7)          # the 4th score: the test pairs of rate 2's model
    assert [n for _, n in scored] == [20, 30, 20, 30, 20] and scored[3][0] is scored[2][0]
    after = scored[2][0].state_dict()
    changed = [k for k in after if k.startswith("encoder_model.") and not np.array_equal(after[k], trained[1][k])]
    layer = "encoder_model.model.{}.encoder.layer.0.attn.q_proj.weight"
    assert layer.format(network) in changed                                   # the kept network trained ...
    other = "generator" if network == "discriminator" else "discriminator"
    assert layer.format(other) not in changed                                 # ... and only that one
    assert all(np.array_equal(v, before[k]) for k, v in recipe.model.state_dict().items())  # the original did not
