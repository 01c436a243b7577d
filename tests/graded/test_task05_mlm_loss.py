"""Graded tests of Task 5.2 (the loss half): ``mlm_loss(logits, labels)``, the masked-LM loss.

L = Σ_t m_t · (−log softmax(logits_t)[labels_t]) / max(Σ_t m_t, 1), with m_t = (labels_t != -100).
Every test compares with a float64 NumPy reference written here.
"""
import numpy as np
import pytest

from autograd import Tensor

MOD = "task05_bert.mlm_loss"
IGNORE = -100


def _reference(logits: np.ndarray, labels: np.ndarray) -> float:
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    m = labels != IGNORE
    if not m.any():
        return 0.0
    return float(-logp[m, labels[m]].mean())


def _case(seed, B=4, T=12, V=9, rate=0.3, dtype=np.float64):
    """Random logits (B, T, V) and labels with about ``rate`` of the positions predicted."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 2.0, size=(B, T, V)).astype(dtype)
    labels = rng.integers(0, V, size=(B, T))
    labels[rng.random((B, T)) >= rate] = IGNORE
    labels[0, 0] = 3  # at least one predicted position
    return logits, labels


@pytest.mark.task5_2
@pytest.mark.points(2)
def test_value_is_the_mean_over_masked_positions(impl):
    mlm_loss = impl(MOD).mlm_loss
    for seed in range(3):
        logits, labels = _case(seed)
        loss = mlm_loss(Tensor(logits), labels)
        assert isinstance(loss, Tensor) and loss.size == 1, "mlm_loss must return a scalar Tensor"
        np.testing.assert_allclose(loss.item(), _reference(logits, labels), rtol=1e-6, atol=1e-9,
                                   err_msg="expected the mean of −log p(label) over positions with "
                                           "labels != -100")


@pytest.mark.task5_2
@pytest.mark.points(2)
def test_unmasked_positions_play_no_part(impl):
    """Changing the logits where labels == -100 changes nothing, and they get no gradient."""
    mlm_loss = impl(MOD).mlm_loss
    logits, labels = _case(3)
    ignored = labels == IGNORE
    other = logits.copy()
    other[ignored] = np.random.default_rng(9).normal(0.0, 5.0, size=other[ignored].shape)
    a, b = mlm_loss(Tensor(logits), labels).item(), mlm_loss(Tensor(other), labels).item()
    assert a == pytest.approx(b, rel=1e-9, abs=1e-12), \
        "the loss changed when only logits at unmasked positions (labels == -100) changed"
    x = Tensor(logits, requires_grad=True)
    mlm_loss(x, labels).backward()
    assert x.grad is not None, "no gradient reached the logits: build the loss from Tensor ops"
    assert np.all(x.grad[ignored] == 0.0), "positions with labels == -100 received a gradient"
    assert np.abs(x.grad[~ignored]).sum() > 0, "masked positions received no gradient"


@pytest.mark.task5_2
@pytest.mark.points(2)
def test_padding_rows_do_not_shrink_the_loss(impl):
    """Appending rows where nothing is predicted (padding) keeps the loss: divide by Σ m_t, not B·T."""
    mlm_loss = impl(MOD).mlm_loss
    logits, labels = _case(4, B=3, T=10, rate=0.2)
    base = mlm_loss(Tensor(logits), labels).item()
    rng = np.random.default_rng(5)
    pad_logits = np.concatenate([logits, rng.normal(size=(5,) + logits.shape[1:])], axis=0)
    pad_labels = np.concatenate([labels, np.full((5, labels.shape[1]), IGNORE)], axis=0)
    padded = mlm_loss(Tensor(pad_logits), pad_labels).item()
    assert padded == pytest.approx(base, rel=1e-9), \
        f"appending rows with labels == -100 changed the loss from {base:.6f} to {padded:.6f}: the " \
        "mean must count masked positions only"


@pytest.mark.task5_2
@pytest.mark.points(1)
def test_a_mean_not_a_sum(impl):
    """The same batch twice gives the same loss."""
    mlm_loss = impl(MOD).mlm_loss
    logits, labels = _case(6)
    once = mlm_loss(Tensor(logits), labels).item()
    twice = mlm_loss(Tensor(np.concatenate([logits, logits])), np.concatenate([labels, labels])).item()
    assert twice == pytest.approx(once, rel=1e-9), "doubling the batch changed the loss: use a mean"


@pytest.mark.task5_2
@pytest.mark.points(2)
def test_nothing_masked_gives_zero_not_nan(impl):
    mlm_loss = impl(MOD).mlm_loss
    logits, _ = _case(7)
    labels = np.full(logits.shape[:-1], IGNORE)
    x = Tensor(logits, requires_grad=True)
    loss = mlm_loss(x, labels)
    assert np.isfinite(loss.item()), "nothing masked must give 0, not NaN (0/0)"
    assert loss.item() == 0.0, f"with nothing masked the loss must be exactly 0, got {loss.item()}"
    loss.backward()
    assert x.grad is not None and np.all(np.isfinite(x.grad)) and np.all(x.grad == 0.0), \
        "with nothing masked the gradient must be zero everywhere (and finite)"


@pytest.mark.task5_2
@pytest.mark.points(1)
def test_gradient_is_softmax_minus_onehot_over_n(impl):
    mlm_loss = impl(MOD).mlm_loss
    logits, labels = _case(8, B=2, T=6, V=5, rate=0.5)
    x = Tensor(logits, requires_grad=True)
    mlm_loss(x, labels).backward()
    m = labels != IGNORE
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    expected = np.zeros_like(logits)
    expected[m] = p[m]
    expected[m, labels[m]] -= 1.0
    expected /= m.sum()
    np.testing.assert_allclose(x.grad, expected, rtol=1e-6, atol=1e-10,
        err_msg=("∂loss/∂logits should be (softmax − one-hot)/N at the N predicted positions and 0 elsewhere "
                 "(mean over predicted tokens only)"))


@pytest.mark.task5_2
@pytest.mark.points(1)
def test_float32_and_flat_inputs(impl):
    """(N, V) logits with (N,) labels work too, and float32 stays finite and accurate."""
    mlm_loss = impl(MOD).mlm_loss
    logits, labels = _case(10, dtype=np.float32)
    flat = mlm_loss(Tensor(logits.reshape(-1, logits.shape[-1])), labels.reshape(-1)).item()
    full = mlm_loss(Tensor(logits), labels).item()
    ref = _reference(logits.astype(np.float64), labels)
    assert flat == pytest.approx(ref, rel=1e-5) and full == pytest.approx(ref, rel=1e-5), \
        (f"float32 logits: expected {ref:.6f} for both (N, V) and (B, T, V) inputs, got {flat:.6f} (flat) "
         f"and {full:.6f} (batched)")
