"""``minilm experiment bart-noising`` (minilm/experiments/bart_noising.py) and the BART recipe's
``--noising`` option: the plan, the option's default (today's pipeline, exactly), each noising
function, the equal-compute check (and that it can fail), the common test inputs, and (slow) the
--quick run end to end."""
import json
import math

import numpy as np
import pytest

from autograd.errors import ConfigError, TrainingError
from minilm import corruption
from minilm.cli import build_parser
from minilm.experiments import EXPERIMENTS, config_of, settings_of
from minilm.experiments import bart_noising as exp
from minilm.recipes.config import from_args, override
from tests.models.experiment_quick import quick_run


def test_registered_and_planned():
    assert EXPERIMENTS[exp.NAME] == "minilm.experiments.bart_noising"
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert full.conditions == quick.conditions == [*exp.CONDITIONS, exp.REFERENCE, exp.NO_ENCODER]
    assert [m.key for m in full.metrics][:5] == ["finetuned", "probe", "decoder_probe", "loss_mean", "loss_infilling"]
    assert all(not m.higher_is_better for m in full.metrics if m.key.startswith("loss_"))
    for key in ("steps", "docs", "n_embd", "probe_test", "eval_blocks"):
        assert quick.settings[key] <= full.settings[key], key
    assert quick.settings["steps"] < full.settings["steps"]
    json.dumps(full.settings)
    assert "Table 1" in full.notes[0] and "Held equal" in full.notes[1]
    args = build_parser().parse_args(["experiment", exp.NAME, "--steps", "7", "--corpus", "x.txt"])
    settings = exp.plan(from_args(exp.CONFIG, args, base=exp.CONFIG())).settings
    assert settings["steps"] == 7 and settings["corpus"] == "x.txt"


def test_noising_default_is_todays_pipeline():
    from minilm.recipes.bart import BartRecipeConfig
    cfg = BartRecipeConfig()
    assert cfg.noising == "infilling+permutation"
    options = corruption.noising_options(cfg.noising, mask_ratio=cfg.mask_ratio,
                                         permute_sentences=cfg.permute_sentences, poisson_lambda=cfg.poisson_lambda)
    # the keywords the recipe passed before the option existed, and bart_noise's defaults for the rest
    assert options == {"mask_ratio": 0.3, "replace_length": 1, "poisson_lambda": 3.0, "permute_sentences": 1.0,
                       "rotate": 0.0}
    V, MASK, DOT = 40, 4, 5
    ids = np.array([2, 9, 10, DOT, 11, 12, 13, DOT, 14, 15, DOT, 16, 17, 18, 19, DOT, 3])
    for seed in range(20):
        old = corruption.bart_noise(ids, rng=np.random.default_rng(seed), mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                                    mask_ratio=0.3, permute_sentences=1.0, poisson_lambda=3.0)
        new = corruption.bart_noise(ids, rng=np.random.default_rng(seed), mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                                    **options)
        assert np.array_equal(old, new), "the default --noising must noise exactly as before"


def test_each_noising_function():
    V, MASK, DOT = 40, 4, 5
    ids = np.array([2, 9, 10, DOT, 11, 12, 13, DOT, 14, 15, DOT, 16, 17, 18, 19, DOT, 3])
    inner = sorted(ids[1:-1])

    def noise(name, seed):
        return corruption.bart_noise(ids, rng=np.random.default_rng(seed), mask_id=MASK, vocab_size=V,
                                     full_stop_id=DOT, **corruption.noising_options(name))
    saw_moved = {"rotation": False, "permutation": False}
    for seed in range(30):
        m, d, r, p = (noise(n, seed) for n in ("masking", "deletion", "rotation", "permutation"))
        assert m.size == ids.size and (m == MASK).sum() == math.ceil(15 * 0.3)    # one <mask> per token
        assert d.size == ids.size - math.ceil(15 * 0.3) and MASK not in d          # words gone, no <mask>
        for name, x in (("rotation", r), ("permutation", p)):
            assert x.size == ids.size and sorted(x[1:-1]) == inner and MASK not in x
            saw_moved[name] |= not np.array_equal(x, ids)
        assert (r[0], r[-1]) == (2, 3)
        infilled = noise("infilling", seed)                                        # one <mask> per span
        assert MASK in infilled and (infilled == MASK).sum() <= math.ceil(15 * 0.3)
    assert all(saw_moved.values())
    for bad in ("", "shuffle", "masking+deletion", "infilling+infilling"):
        with pytest.raises(ConfigError, match="noising"):
            corruption.noising_options(bad)


@pytest.fixture(scope="module")
def tiny():
    """Tiny settings and two recipes of seed 0 that differ only in their noising."""
    from minilm.recipes import bart
    settings = settings_of(override(exp.CONFIG.quick(), docs=20, steps=3, eval_blocks=8, probe_train=24, probe_test=30))
    build = lambda noising: bart.BartRecipe(exp.recipe_config(settings, 0, noising))  # noqa: E731
    return settings, build("infilling+permutation"), build("deletion")


def test_recipe_option_and_common_test_inputs(tiny):
    settings, default, deletion = tiny
    assert default.cfg.noising == "infilling+permutation" and deletion.noising["replace_length"] == 0
    src, _, labels = deletion.batch(np.random.default_rng(1))
    same_src, _, same_labels = default.batch(np.random.default_rng(1))
    assert np.array_equal(labels, same_labels), "the blocks of a step must not depend on the noise"
    assert not (src == deletion.tokenizer.mask_id).any()
    for noising in exp.TEST_NOISES:               # every condition is tested on the same noised inputs
        a = exp.common_test_pairs(default, 0, noising, 5)
        b = exp.common_test_pairs(deletion, 0, noising, 5)
        assert len(a) == 5 and all(np.array_equal(x, y) for p, q in zip(a, b) for x, y in zip(p, q))


def test_equal_compute_is_checked_and_can_fail(tiny):
    settings, _, deletion = tiny
    exp.check_equal_targets(100, 100, "x")
    with pytest.raises(TrainingError, match="equal compute"):
        exp.check_equal_targets(99, 100, "x")
    enc, tgt = exp.pretrain(deletion, settings, 0, "token deletion")
    assert tgt == exp.expected_target_tokens(deletion, settings["steps"], 0) and enc < tgt   # deletion shortens
    # a batch that draws its noise before its blocks reads other blocks than the other conditions
    batch = deletion.batch
    deletion.batch = lambda rng: (rng.random(), batch(rng))[1]
    with pytest.raises(TrainingError, match="equal compute"):
        exp.pretrain(deletion, settings, 0, "token deletion")


def test_reference_rows_and_an_unknown_condition(tiny):
    settings, _, _ = tiny
    ref = exp.run_one(exp.REFERENCE, 0, settings)
    assert ref["target_tokens"] == 0 and math.isnan(ref["encoder_per_target"]) and 0.0 <= ref["probe"] <= 1.0
    assert not any(k.startswith("loss_") for k in ref), "the untrained losses (~ln V) stay out of the table"
    assert all(ref[f"untrained_loss_{n}"] > 4.0 for n in exp.TEST_NOISES)
    counts = exp.run_one(exp.NO_ENCODER, 0, settings)
    assert 0.0 < counts["probe"] <= 1.0 and 0.0 < counts["loss_mean"] < ref["untrained_loss_mean"]
    assert len({counts[f"loss_{n}"] for n in exp.TEST_NOISES}) == 1          # the bigram never reads the input
    with pytest.raises(ValueError, match="unknown condition"):
        exp.run_one("span corruption", 0, settings)


def test_decoder_final_token_reads_the_whole_input_at_its_last_token(tiny):
    """BART §3.2's classifier input: the decoder's state at the input's last real token (after the
    start token), the same whatever the padding, and moved by that last token itself."""
    settings, default, _ = tiny
    model, tok = default.model, default.tokenizer
    short = tok.encode_pair("the dog runs .", "a dog runs .")[0]
    long = tok.encode_pair("the big dog next to the house runs .", "an animal runs .")[0]
    from minilm.data import pad_batch
    ids, mask = pad_batch([short, long], tok.pad_id)
    both = exp.decoder_final_states(model, ids, mask)
    alone = exp.decoder_final_states(model, *pad_batch([short], tok.pad_id))
    assert both.shape == (2, model.config.n_embd)
    np.testing.assert_allclose(both[0], alone[0], rtol=1e-5, atol=1e-6)      # pads after it change nothing
    # the model's own decode() of <start> x_1 … x_L: its logits at x_L's position are that state's
    L = len(short)
    x = np.array([short])
    dec = np.array([[model.config.start_id, *short]])
    logits = model.decode(dec, model.encode(x, np.ones_like(x, dtype=bool)), np.ones_like(x, dtype=bool)).data
    np.testing.assert_allclose(logits[0, L], alone[0] @ model.shared.weight.data.T, rtol=1e-4, atol=1e-5)
    assert not np.allclose(logits[0, L - 1], alone[0] @ model.shared.weight.data.T, rtol=1e-4, atol=1e-5)
    settings = dict(settings, probe_train=24, probe_test=30)
    assert 0.0 <= exp.decoder_probe(model, tok, 0, settings) <= 1.0
    counts = exp.run_one(exp.NO_ENCODER, 0, settings)
    assert counts["decoder_probe"] == counts["probe"]                         # the bag of words, in both columns


def test_fine_tuned_readout_trains_every_weight_of_a_copy_from_the_final_token(tiny):
    """BART's MNLI readout (§3.2): FinalTokenClassifier's logits come from the decoder's final-token
    state, a training step moves the encoder, the decoder and the new layer, and finetuned() leaves
    the pre-trained model as it was."""
    settings, default, _ = tiny
    model, tok = default.model, default.tokenizer
    from minilm.data import pad_batch
    ids, mask = pad_batch([tok.encode_pair("the dog runs .", "a dog runs .")[0]], tok.pad_id)
    clf = exp.FinalTokenClassifier(model, 3, rng=np.random.default_rng(0))
    out = clf(ids, None, mask, labels=np.array([1]))
    expected = exp.decoder_final_states(model, ids, mask) @ clf.classifier.weight.data.T + clf.classifier.bias.data
    np.testing.assert_allclose(out["logits"].data, expected, rtol=1e-4, atol=1e-5)
    out["loss"].backward()
    for part in ("model.encoder", "model.decoder", "classifier"):
        grads = [p.grad for n, p in clf.named_parameters() if n.startswith(part)]
        assert any(g is not None and np.abs(g).sum() > 0 for g in grads), part
    before = {n: p.data.copy() for n, p in model.named_parameters()}
    acc = exp.finetuned(model, tok, 0, dict(settings, probe_train=24, probe_test=30, finetune_steps=2))
    assert 0.0 <= acc <= 1.0
    assert all(np.array_equal(p.data, before[n]) for n, p in model.named_parameters())


def test_mnli_claim_reads_the_fine_tuned_readout_or_the_probe_without_it():
    on = exp.plan(exp.CONFIG())
    off = exp.plan(override(exp.CONFIG(), finetune_steps=0))
    assert [c.metric for c in on.claims] == ["loss_mean", "finetuned", "finetuned"]
    assert "finetuned" in [m.key for m in on.metrics] and "finetuned" not in [m.key for m in off.metrics]
    assert [c.metric for c in off.claims] == ["loss_mean", "decoder_probe", "decoder_probe"]
    assert (off.claims[1].why_not, off.claims[2].why_not) == ("", exp.SHUFFLING_WHY_NOT_PROBE)
    assert all("by a probe of the frozen model" in c.paper and "fine-tuned" not in c.paper for c in off.claims[1:])
    assert on.claims[2].why_not == exp.SHUFFLING_WHY_NOT and "every weight fine-tuned" in on.claims[2].paper


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    conditions = [*exp.CONDITIONS, exp.REFERENCE, exp.NO_ENCODER]
    assert r["conditions"] == conditions and r["seeds"] == [0, 1, 2] and len(r["runs"]) == 3 * len(conditions)
    for key in ("finetuned", "probe", "loss_mean", *(f"loss_{n}" for n in exp.TEST_NOISES)):
        for c in conditions if key in ("finetuned", "probe") else [*exp.CONDITIONS, exp.NO_ENCODER]:
            values = r["summary"][key][c]["values"]
            assert len(values) == 3 and all(math.isfinite(v) for v in values), (key, c)
    assert (tmp_path / f"{exp.NAME}.png").exists() and (tmp_path / f"{exp.NAME}.md").exists()
    # equal compute: within a seed every pre-trained condition read the same target tokens
    for seed in (0, 1, 2):
        counts = {run["metrics"]["target_tokens"] for run in r["runs"]
                  if run["seed"] == seed and run["condition"] in exp.CONDITIONS}
        assert len(counts) == 1, counts
    # even at toy size, every pre-trained decoder reads its encoder: it beats the bigram model of the clean text
    bigram = r["summary"]["loss_mean"][exp.NO_ENCODER]["mean"]
    for c in exp.CONDITIONS:
        assert r["summary"]["loss_mean"][c]["mean"] < bigram, c


def test_rotation_path_declares_document_rotation(tmp_path):
    """``minilm train bart --noising rotation`` runs Task 9.3's document_rotation, which the default
    pipeline never calls: minilm/recipes/slots.py must list it for that command line."""
    import contextlib
    import io
    from autograd import tasks
    from minilm import cli
    from minilm.recipes import slots
    argv = ["train", "bart", "--noising", "rotation", "--steps", "1", "--docs", "20", "--no-progress",
            "--out", str(tmp_path)]
    with tasks.trace() as seen, contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(argv) == 0
    declared = slots.command_slots(cli.build_parser().parse_args(argv))
    assert ("task09_seq2seq.noising", "document_rotation") in seen and seen <= declared, sorted(seen - declared)
