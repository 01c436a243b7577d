"""Graded tests of Task 7.2 (generator half): ``generator_step``.

Every ELECTRA objective runs it: ELECTRA itself (``replaced_token_detection``) and the ablations of
Task 7.3. The model is a tiny ELECTRA (V = 12, so the generator often samples the original token)
with dropout off; the reference steps are replayed here with the library's own functions.
"""
import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor
from minilm.corruption import electra_corrupt, electra_mask, replaced_token_labels, sample_from_logits
from minilm.models.electra import Electra, ElectraConfig

MOD = "task07_electra.loss"
PAD, CLS, SEP, MASK = 0, 2, 3, 4
V = 12


def _model(**kw):
    cfg = ElectraConfig(**{**dict(vocab_size=V, max_position_embeddings=16, n_layer=1, n_head=2, n_embd=16,
                                  dropout=0.0, pad_id=PAD, mask_id=MASK, special_ids=(CLS, SEP)), **kw})
    return Electra(cfg, rng=np.random.default_rng(0))


def _batch(B=24, T=14, seed=0):
    rng = np.random.default_rng(seed)
    ids = np.full((B, T), PAD, dtype=np.int64)
    for b in range(B):
        n = int(rng.integers(4, T - 1))
        ids[b, 0], ids[b, 1:n + 1], ids[b, n + 1] = CLS, rng.integers(5, V, size=n), SEP
    return ids, ids != PAD


def _replay(model, ids, am, seed):
    """The reference steps 1-8, drawn from the same Generator."""
    cfg, rng = model.config, np.random.default_rng(seed)
    gen_inputs, masked, mlm_labels = electra_mask(ids, mask_id=cfg.mask_id, special_ids=cfg.special_ids,
                                                  pad_id=cfg.pad_id, rng=rng, mask_prob=cfg.mask_prob)
    logits = model.generator(gen_inputs, am)
    samples = sample_from_logits(logits.data[masked], rng=rng, temperature=cfg.temperature,
                                 disallow_ids=ids[masked] if cfg.disallow_correct else None)
    disc_inputs = electra_corrupt(ids, masked, samples)
    return dict(mlm_loss=F.cross_entropy(logits, mlm_labels).item(), masked=masked, disc_inputs=disc_inputs,
                disc_labels=replaced_token_labels(ids, disc_inputs, masked))


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_generator_step_mlm_loss_on_the_masked_input(impl):
    model, (ids, am) = _model(), _batch()
    out = impl(MOD).generator_step(model, ids, am, rng=np.random.default_rng(3))
    want = _replay(model, ids, am, 3)
    assert isinstance(out.get("mlm_loss"), Tensor) and out["mlm_loss"].size == 1, (
        f"mlm_loss is {type(out.get('mlm_loss')).__name__}: expected a scalar Tensor (it is trained)")
    clean = F.cross_entropy(model.generator(ids, am), np.where(want["masked"], ids, -100)).item()
    assert np.isclose(out["mlm_loss"].item(), want["mlm_loss"], rtol=1e-5), (
        f"mlm_loss {out['mlm_loss'].item():.5f}, expected {want['mlm_loss']:.5f}"
        + (" — that is the loss on the CLEAN ids: the generator must read gen_inputs, with [MASK]"
           if np.isclose(out["mlm_loss"].item(), clean, rtol=1e-5) else
           ": the mean cross-entropy over the masked positions only (mlm_labels is -100 elsewhere)"))
    assert np.array_equal(out["generator_inputs"], electra_mask(
        ids, mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD, rng=np.random.default_rng(3), mask_prob=0.15)[0]), (
        "generator_inputs differ from the given masking: return the given lines' gen_inputs")


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_generator_step_samples_into_the_masked_positions(impl):
    model, (ids, am) = _model(), _batch(seed=1)
    out = impl(MOD).generator_step(model, ids, am, rng=np.random.default_rng(4))
    want = _replay(model, ids, am, 4)
    d = out["disc_inputs"]
    assert isinstance(d, np.ndarray) and np.issubdtype(d.dtype, np.integer), (
        f"disc_inputs is {type(d).__name__}: expected a NumPy integer array (sampled ids carry no gradient)")
    masked = want["masked"]
    assert np.array_equal(d[~masked], ids[~masked]), (
        "disc_inputs changed an unmasked token: only masked ones are replaced")
    argmax = model.generator(out["generator_inputs"], am).data.argmax(-1)
    if not np.array_equal(d, want["disc_inputs"]):
        hint = ("these are the generator's argmax, not samples" if np.array_equal(d[masked], argmax[masked]) else
                "these are the original ids: write the samples in" if np.array_equal(d, ids) else
                "sample with sample_from_logits(mlm_logits.data[masked], rng=rng, temperature=...), "
                "right after the masking, on the same rng")
        raise AssertionError(f"disc_inputs at the masked positions {d[masked][:8].tolist()}..., "
                             f"expected {want['disc_inputs'][masked][:8].tolist()}...: {hint}")


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_generator_step_a_correct_sample_is_original(impl):
    model, (ids, am) = _model(), _batch(seed=2)
    out = impl(MOD).generator_step(model, ids, am, rng=np.random.default_rng(5))
    d, y, masked = out["disc_inputs"], np.asarray(out["disc_labels"]), out["masked"]
    lucky = masked & (d == ids)
    assert lucky.any(), "test set-up: no masked position sampled its original token"
    assert (y[lucky] == 0).all(), (
        f"{int((y[lucky] != 0).sum())} masked positions whose sample equals the original are labelled 1: "
        "y_t = 1[x̂_t ≠ x_t], a correct sample is 'original'")
    assert np.array_equal(y, (masked & (d != ids)).astype(y.dtype)), (
        "disc_labels must be 1 exactly where a masked token was replaced by a different id")


@pytest.mark.task7_2
@pytest.mark.points(1)
def test_generator_step_gradient_reaches_the_generator(impl):
    model, (ids, am) = _model(), _batch(seed=3)
    out = impl(MOD).generator_step(model, ids, am, rng=np.random.default_rng(6))
    out["mlm_loss"].backward()
    w = model.generator.lm_head.dense.weight
    assert w.grad is not None and np.abs(w.grad).sum() > 0, (
        "mlm_loss.backward() left the generator's MLM head without a gradient: build mlm_loss from "
        "model.generator(...)'s Tensor, not from .data")
