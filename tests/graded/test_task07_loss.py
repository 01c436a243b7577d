"""Graded tests of Task 7.2: ``discriminator_loss``, ``electra_loss``, ``tie_embeddings``.

The two losses are called directly with arrays and Tensors (random logits, hand-made labels), the
way ``Electra.forward`` calls them; ``tie_embeddings`` on a tiny generator and discriminator (dropout
off). What the model does around them — sampling without a gradient path, the discriminator reading
x̂ — is library code, tested in tests/models/test_electra.py.
"""
import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor
from minilm.models.electra import ElectraConfig, ElectraDiscriminator, ElectraGenerator

MOD = "task07_electra.loss"

PAD, CLS, SEP, MASK = 0, 2, 3, 4
V = 12


def _bce(z, y):
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


def _nll(logits, labels):
    """−log softmax(logits)[label] at every position (0 where the label is -100), float64 (B, T)."""
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    out = -np.take_along_axis(logp, np.where(labels == -100, 0, labels)[..., None], -1)[..., 0]
    return np.where(labels == -100, 0.0, out)


def _mlm_batch(seed, B=3, T=8, V=7):
    """Random generator logits (B, T, V) and labels: an id at ~30% of the real positions, -100 elsewhere."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2, size=(B, T, V))
    labels = np.where(rng.random((B, T)) < 0.3, rng.integers(0, V, size=(B, T)), -100)
    labels[0, 1] = 3                                 # at least one masked position
    return logits, labels


def _rtd_batch(seed, B=4, T=10):
    """A batch laid out as ELECTRA's: [CLS] tokens [SEP] padding; a few replaced tokens (y = 1)."""
    rng = np.random.default_rng(seed)
    a = np.zeros((B, T), dtype=np.int64)
    first, last = np.zeros((B, T), bool), np.zeros((B, T), bool)
    for b in range(B):
        n = int(rng.integers(5, T + 1))
        a[b, :n], first[b, 0], last[b, n - 1] = 1, True, True
    y = ((rng.random((B, T)) < 0.25) & (a == 1) & ~first & ~last).astype(np.int64)
    y[0, 2] = 1
    z = rng.normal(0, 1.5, size=(B, T))
    z[a == 0] = 30.0                                 # padding: badly wrong if it counted
    z[first | last] = 6.0                            # [CLS]/[SEP], label 0: a large loss if they count
    return z, y, a, first | last


def _check(what, got, expected, mistakes, otherwise):
    """Fail unless got ≈ expected, naming the mistake (value, hint) whose value ``got`` matches."""
    if not np.isclose(got, expected, rtol=1e-5):
        hint = next((h for value, h in mistakes if np.isclose(got, value, rtol=1e-5)), otherwise)
        raise AssertionError(f"{what} = {got:.6f}, expected {expected:.6f}: {hint}")


# ---------------------------------------------------------------- discriminator_loss

@pytest.mark.task7_2
@pytest.mark.points(3)
def test_discriminator_loss_is_the_mean_over_real_tokens_and_ignores_padding(impl):
    discriminator_loss = impl(MOD).discriminator_loss
    z, y, a, _ = _rtd_batch(1)
    loss = discriminator_loss(Tensor(z), y, a)
    assert isinstance(loss, Tensor) and loss.size == 1, (
        f"discriminator_loss returned {type(loss).__name__}: expected a scalar Tensor")
    bce = _bce(z, y)
    _check("L_Disc", loss.item(), (bce * a).sum() / (a.sum() + 1e-6), [
        (bce.mean(), "that is the mean over every position, padding included: multiply by attention_mask"),
        ((bce * a).sum() / a.size, "that divides by B·T: divide by the number of real tokens, Σ a_t (+ 1e-6)")],
        "L_Disc = Σ_t a_t·BCE(z_t, y_t) / (Σ_t a_t + 1e-6)")


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_discriminator_loss_counts_cls_sep_and_original_tokens(impl):
    discriminator_loss = impl(MOD).discriminator_loss
    z, y, a, ends = _rtd_batch(2)
    bce = _bce(z, y)
    _check("L_Disc", discriminator_loss(Tensor(z), y, a).item(), (bce * a).sum() / (a.sum() + 1e-6), [
        (bce[y == 1].mean(), "that is the mean over the replaced tokens only: every real token counts, the "
                             "originals too (ELECTRA learns from all of them)"),
        (bce[(a == 1) & ~ends].mean(), "that leaves out [CLS] and [SEP]: they are real tokens and count")],
        "L_Disc averages the BCE over every position where attention_mask is 1")


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_discriminator_loss_gradient(impl):
    discriminator_loss = impl(MOD).discriminator_loss
    rng = np.random.default_rng(2)
    z = Tensor(rng.normal(size=(3, 7)), requires_grad=True)
    y = (rng.random((3, 7)) < 0.3).astype(np.int64)
    a = np.ones((3, 7), dtype=bool)
    a[0, 5:] = a[2, 2:] = False
    loss = discriminator_loss(z, y, a)
    assert loss.requires_grad, "the loss has no gradient path to the logits: build it from the Tensor, not from .data"
    loss.backward()
    sig = 1 / (1 + np.exp(-z.data))
    expected = (sig - y) * a / (a.sum() + 1e-6)
    assert not z.grad[~a].any(), "a padded position received a gradient: multiply by attention_mask"
    assert np.allclose(z.grad, expected, atol=1e-8), "the gradient should be (σ(z) − y)·a / Σa"


@pytest.mark.task7_2
@pytest.mark.points(1)
def test_discriminator_loss_all_padding_is_zero(impl):
    discriminator_loss = impl(MOD).discriminator_loss
    loss = discriminator_loss(Tensor(np.ones((2, 3))), np.zeros((2, 3), np.int64), np.zeros((2, 3)))
    assert np.isfinite(loss.item()) and abs(loss.item()) < 1e-9, (
        f"an all-padding batch gave {loss.item()}: it must give 0, not NaN (divide by Σa + 1e-6)")


# ---------------------------------------------------------------- electra_loss

def _electra_loss(impl, logits, labels, main, **weights):
    out = impl(MOD).electra_loss(Tensor(logits), labels, Tensor(np.float64(main)), **weights)
    assert isinstance(out, tuple) and len(out) == 2, (
        f"electra_loss returned {type(out).__name__}: expected the pair (loss, mlm_loss)")
    loss, mlm_loss = out
    for name, t in (("loss", loss), ("mlm_loss", mlm_loss)):
        assert isinstance(t, Tensor) and t.size == 1, f"{name} is {type(t).__name__}: expected a scalar Tensor"
    return loss.item(), mlm_loss.item()


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_electra_loss_mlm_counts_the_masked_positions_only(impl):
    for seed in (0, 1):
        logits, labels = _mlm_batch(seed)
        nll = _nll(logits, labels)
        _check("mlm_loss", _electra_loss(impl, logits, labels, 0.4)[1], nll[labels != -100].mean(), [
            (nll.sum() / labels.size, "that divides by every position: L_MLM averages over the masked ones "
                                      "(labels ≠ -100) only"),
            (nll.sum(), "that is a sum: L_MLM is the mean over the masked positions")],
            "L_MLM = mean over {t : labels_t ≠ -100} of −log softmax(logits_t)[labels_t]")


@pytest.mark.task7_2
@pytest.mark.points(4)
def test_electra_loss_weights_the_main_loss_by_lambda(impl):
    logits, labels = _mlm_batch(2)
    mlm = _nll(logits, labels)[labels != -100].mean()
    main = 0.37
    for weights, lam in (({}, 50.0), ({"disc_weight": 7.0}, 7.0), ({"disc_weight": 1.0}, 1.0)):
        call = f"electra_loss(..., {', '.join(f'{k}={v}' for k, v in weights.items()) or 'default weights'})"
        _check(f"{call}: loss", _electra_loss(impl, logits, labels, main, **weights)[0], mlm + lam * main, [
            (mlm + main, "λ is missing: multiply the main loss by disc_weight"),
            (mlm + 50 * main, "λ is hard-coded: use the disc_weight argument")],
            "L = gen_weight·L_MLM + disc_weight·main_loss")


@pytest.mark.task7_2
@pytest.mark.points(2)
def test_electra_loss_weights_the_generator_by_gen_weight(impl):
    logits, labels = _mlm_batch(3)
    mlm = _nll(logits, labels)[labels != -100].mean()
    for gen_weight in (0.5, 0.0):
        got, got_mlm = _electra_loss(impl, logits, labels, 0.2, gen_weight=gen_weight, disc_weight=3.0)
        expected = gen_weight * mlm + 3.0 * 0.2
        assert np.isclose(got, expected, rtol=1e-5, atol=1e-9), (
            f"gen_weight={gen_weight}: loss {got:.5f}, expected gen_weight·L_MLM + λ·main = {expected:.5f}")
        assert np.isclose(got_mlm, mlm, rtol=1e-5), (
            f"gen_weight={gen_weight}: mlm_loss {got_mlm:.5f} should be L_MLM itself ({mlm:.5f}), unweighted")


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_electra_loss_gradient_reaches_the_logits_and_the_main_loss(impl):
    logits, labels = _mlm_batch(4)
    z = Tensor(logits, requires_grad=True)
    main = Tensor(np.float64(0.3), requires_grad=True)
    loss, _ = impl(MOD).electra_loss(z, labels, main, gen_weight=0.5, disc_weight=50.0)
    assert loss.requires_grad, "the loss has no gradient path: keep L_MLM and the main loss Tensors, not .data"
    loss.backward()
    assert z.grad is not None, ("no gradient reached the generator's logits: compute L_MLM from the Tensor "
                                "(F.cross_entropy), not from .data")
    masked = labels != -100
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    onehot = np.eye(logits.shape[-1])[np.where(masked, labels, 0)]
    expected = 0.5 * (p - onehot) * masked[..., None] / masked.sum()
    assert not z.grad[~masked].any(), "an unmasked position received a gradient: L_MLM skips the -100 labels"
    assert np.allclose(z.grad, expected, atol=1e-8), \
        "d loss / d logits should be gen_weight·(softmax − one-hot)/|m| at the masked positions"
    assert main.grad is not None and np.isclose(float(main.grad), 50.0), (
        f"d loss / d main_loss = {None if main.grad is None else float(main.grad)}, expected λ = 50")


# ---------------------------------------------------------------- tie_embeddings

def _pair(seed=0, **kw):
    cfg = ElectraConfig(**{**dict(vocab_size=V, max_position_embeddings=16, n_layer=1, n_head=2, n_embd=16,
                                  dropout=0.0, pad_id=PAD, mask_id=MASK, special_ids=(CLS, SEP)), **kw})
    rng = np.random.default_rng(seed)
    return cfg, ElectraGenerator(cfg, rng=rng), ElectraDiscriminator(cfg, rng=rng)


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_tie_shares_the_embedding_parameters_themselves(impl):
    for kw in ({}, {"embedding_size": 8}):
        cfg, gen, disc = _pair(**kw)
        before = {id(p) for p in gen.parameters()} | {id(p) for p in disc.parameters()}
        result = impl(MOD).tie_embeddings(gen, disc)
        assert result is None, \
            f"tie_embeddings changes the two models in place and returns None, got {type(result).__name__}"
        g = dict(gen.embeddings.named_parameters())
        d = dict(disc.embeddings.named_parameters())
        assert g.keys() == d.keys(), \
            ("after tying, the generator and the discriminator must have the same embedding parameters, "
             f"got {sorted(g)} and {sorted(d)}")
        for name in d:
            assert g[name] is d[name], f"generator embeddings.{name} is not the discriminator's Parameter (a copy?)"
        assert gen.lm_head.decoder.weight is disc.embeddings.word_embeddings.weight, \
            "the generator's tied decoder must read the shared word table"
        after = {id(p) for p in gen.parameters()} | {id(p) for p in disc.parameters()}
        assert len(after) == len(before) - len(d), "the generator's own embedding tables should be gone"


@pytest.mark.task7_2
@pytest.mark.points(3)
def test_both_losses_update_one_table(impl):
    _, gen, disc = _pair(seed=1)
    impl(MOD).tie_embeddings(gen, disc)
    rng = np.random.default_rng(4)
    ids = np.concatenate([np.full((6, 1), CLS), rng.integers(5, V, size=(6, 8)), np.full((6, 1), SEP)], axis=1)
    mlm_labels = np.where(rng.random(ids.shape) < 0.3, ids, -100)
    mlm_labels[0, 1] = ids[0, 1]
    y = (rng.random(ids.shape) < 0.2).astype(np.float64)
    losses = {"the generator's MLM loss": lambda: F.cross_entropy(gen(ids), mlm_labels),
              "the discriminator's loss": lambda: F.binary_cross_entropy_with_logits(disc(ids), y)}
    table = disc.embeddings.word_embeddings.weight
    grads = []
    for name, loss in losses.items():
        for p in list(gen.parameters()) + list(disc.parameters()):
            p.grad = None
        loss().backward()
        assert table.grad is not None and np.any(table.grad != 0), f"{name} does not reach the shared word table"
        grads.append(table.grad.copy())
    old = table.data.copy()
    table.data -= 0.5 * (grads[0] + grads[1])                    # one SGD step on L_MLM + L_Disc
    assert not np.array_equal(old, table.data), "test set-up: the SGD step on the shared table should change it"
    assert np.array_equal(gen.embeddings.word_embeddings.weight.data, table.data), \
        "after an update the generator still reads the old table: share the Parameter, do not copy it"
    assert np.array_equal(gen.lm_head.decoder.weight.data, table.data), \
        "after an update the generator's decoder still reads the old table: point it at the shared Parameter"
