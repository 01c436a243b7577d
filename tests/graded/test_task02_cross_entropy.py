"""Graded tests of Task 2.2: cross-entropy with ignore_index and label smoothing
(slots in exercises/task02_kernels/cross_entropy.py)."""
import numpy as np
import pytest

from tests.helpers import numeric_grad

MOD = "task02_kernels.cross_entropy"
R = np.random.default_rng(22)
IGNORE = -100


def ref_losses(logits, target, eps=0.0, ignore=IGNORE):
    """Per-row −Σ q·log p with q = (1 − ε)·onehot + ε/V; 0 on ignored rows (written independently)."""
    out = np.zeros(len(target))
    for n, (row, t) in enumerate(zip(np.asarray(logits, np.float64), target)):
        if t == ignore:
            continue
        logp = row - row.max() - np.log(np.exp(row - row.max()).sum())
        q = np.full(row.shape, eps / row.size)
        q[t] += 1 - eps
        out[n] = -(q * logp).sum()
    return out


def ref_loss(logits, target, eps=0.0, reduction="mean"):
    per_row = ref_losses(logits, target, eps)
    n_valid = int((np.asarray(target) != IGNORE).sum())
    return {"none": per_row, "sum": per_row.sum(), "mean": per_row.sum() / max(n_valid, 1)}[reduction]


def data(N=6, V=5):
    logits = R.standard_normal((N, V)) * 2
    target = R.integers(0, V, N)
    target[[1, 4]] = IGNORE
    return logits, target


@pytest.mark.task2_2
@pytest.mark.points(2)
def test_mean_of_negative_log_likelihood(impl):
    forward = impl(MOD).cross_entropy_forward
    logits = R.standard_normal((4, 7))
    target = np.array([0, 6, 3, 3])
    loss, probs = forward(logits, target)
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    assert np.shape(loss) == (), \
        ("cross_entropy_forward with the default reduction='mean' should return a scalar loss, got shape "
         f"{np.shape(loss)}")
    np.testing.assert_allclose(loss, -np.log(p[np.arange(4), target]).mean(), rtol=1e-12,
        err_msg="cross_entropy_forward: the mean loss should be the mean over rows of −log softmax(logits)[target]")
    np.testing.assert_allclose(probs, p, rtol=1e-12,
        err_msg="cross_entropy_forward should also return the softmax probabilities of the logits (for the backward)")


@pytest.mark.task2_2
@pytest.mark.points(2)
def test_ignored_rows_add_nothing_and_are_not_counted(impl):
    forward = impl(MOD).cross_entropy_forward
    logits, target = data()
    loss, _ = forward(logits, target, ignore_index=IGNORE)
    valid = target != IGNORE
    want = ref_losses(logits, target).sum() / valid.sum()  # 4 valid rows, not 6
    np.testing.assert_allclose(loss, want, rtol=1e-12,
        err_msg="with ignore_index=-100 the mean is over the 4 valid rows only: sum of their losses / 4, not / 6")
    per_row, _ = forward(logits, target, ignore_index=IGNORE, reduction="none")
    assert per_row.shape == (6,), \
        f"reduction='none' should give one loss per row, shape (6,), got {np.shape(per_row)}"
    np.testing.assert_allclose(per_row, ref_losses(logits, target), rtol=1e-12,
        err_msg="reduction='none': each valid row should hold −log p[target]")
    assert (per_row[~valid] == 0).all(), "reduction='none': the ignored rows (target -100) must have loss exactly 0"
    # another ignore_index: 0 is a class id here, -100 is not special any more
    t0 = np.array([0, 2, 0, 1])
    loss0, _ = forward(logits[:4], t0, ignore_index=0)
    np.testing.assert_allclose(loss0, ref_losses(logits[:4], t0, ignore=0).sum() / 2, rtol=1e-12,
        err_msg=("with ignore_index=0, rows with target 0 are ignored (and -100 is an ordinary target no "
                 "more): mean over the 2 others"))


@pytest.mark.task2_2
@pytest.mark.points(2)
def test_all_ignored_gives_zero_not_nan(impl):
    mod = impl(MOD)
    logits = R.standard_normal((3, 4))
    target = np.full(3, IGNORE)
    with np.errstate(all="ignore"):
        loss, probs = mod.cross_entropy_forward(logits, target, label_smoothing=0.1)
        grad = mod.cross_entropy_backward(np.asarray(1.0), probs, target, label_smoothing=0.1)
    assert float(loss) == 0.0, f"all targets ignored: expected 0.0, got {loss}"
    assert grad.shape == (3, 4) and (grad == 0).all(), \
        "when every row is ignored the gradient must be (3, 4) zeros (no division by 0 valid rows)"


@pytest.mark.task2_2
@pytest.mark.points(3)
@pytest.mark.parametrize("eps", [0.1, 0.3])
def test_label_smoothing_follows_pytorch(impl, eps):
    forward = impl(MOD).cross_entropy_forward
    logits, target = data(N=6, V=5)
    loss, _ = forward(logits, target, label_smoothing=eps)
    np.testing.assert_allclose(loss, ref_loss(logits, target, eps), rtol=1e-12,
        err_msg=(f"label_smoothing={eps}: expected PyTorch's (1 − ε)·NLL + ε·mean over classes of −log p "
                 "(ε spread over all K classes)"))
    per_row, _ = forward(logits, target, label_smoothing=eps, reduction="none")
    np.testing.assert_allclose(per_row, ref_losses(logits, target, eps), rtol=1e-12,
        err_msg=f"label_smoothing={eps}, reduction='none': per-row smoothed losses differ from PyTorch's")


@pytest.mark.task2_2
@pytest.mark.points(2)
def test_huge_logits_and_sum_reduction(impl):
    forward = impl(MOD).cross_entropy_forward
    logits = np.array([[1e4, 0.0, -1e4], [0.0, 0.0, 0.0]])
    with np.errstate(all="ignore"):
        loss, _ = forward(logits, np.array([2, 1]), reduction="sum")
    assert np.isfinite(loss), "exp(1e4) overflows: use a stable log-softmax"
    np.testing.assert_allclose(loss, 2e4 + np.log(3), rtol=1e-12,
        err_msg=("logits ±1e4 with reduction='sum': expected 2e4 + log 3 — compute log-softmax as x − max "
                 "− log Σ exp(x − max)"))


@pytest.mark.task2_2
def test_float32_is_kept(impl):
    forward = impl(MOD).cross_entropy_forward
    logits, target = data()
    loss, probs = forward(logits.astype(np.float32), target, label_smoothing=0.1)
    assert loss.dtype == np.float32 and probs.dtype == np.float32, \
        f"float32 logits must give a float32 loss and probs, got {np.asarray(loss).dtype} and {probs.dtype}"
    np.testing.assert_allclose(loss, ref_loss(logits, target, 0.1), rtol=1e-5,
        err_msg="float32 logits with label_smoothing=0.1: the loss differs from the float64 reference")


@pytest.mark.task2_2
@pytest.mark.points(3)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_backward_against_central_differences(impl, reduction, eps):
    mod = impl(MOD)
    logits, target = data()
    _, probs = mod.cross_entropy_forward(logits, target, label_smoothing=eps, reduction=reduction)
    up = R.standard_normal(len(target)) if reduction == "none" else np.asarray(1.7)
    grad = mod.cross_entropy_backward(up, probs, target, ignore_index=IGNORE, label_smoothing=eps,
                                      reduction=reduction)
    want = numeric_grad(lambda z: ref_loss(z, target, eps, reduction), logits, up)
    assert grad.shape == logits.shape, \
        f"cross_entropy_backward should return a gradient of the logits' shape {logits.shape}, got {np.shape(grad)}"
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-8,
        err_msg=(f"cross_entropy_backward (reduction={reduction!r}, label_smoothing={eps}): expected (p − "
                 "smoothed one-hot)·upstream, / valid rows for mean"))
    assert (grad[target == IGNORE] == 0).all(), \
        "cross_entropy_backward: the ignored rows (target -100) must get gradient exactly 0"
