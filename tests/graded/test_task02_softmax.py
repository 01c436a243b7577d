"""Graded tests of Task 2.1: stable softmax / log-softmax and their backward
(slots in exercises/task02_kernels/softmax.py)."""
import numpy as np
import pytest

from tests.helpers import numeric_grad

MOD = "task02_kernels.softmax"
R = np.random.default_rng(21)


def ref_softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.task2_1
@pytest.mark.points(2)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_forward_values_any_axis(impl, axis):
    softmax_forward = impl(MOD).softmax_forward
    x = R.standard_normal((3, 4, 5)) * 3
    p = softmax_forward(x, axis=axis)
    assert p.shape == x.shape
    np.testing.assert_allclose(p, ref_softmax(x, axis), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-12)


@pytest.mark.task2_1
@pytest.mark.points(2)
def test_softmax_forward_is_stable_for_huge_logits(impl):
    softmax_forward = impl(MOD).softmax_forward
    x = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4], [1e4, 1e4, 0.0]])
    with np.errstate(all="ignore"):
        p = softmax_forward(x)
    assert np.isfinite(p).all(), "exp(1e4) overflows: subtract the row maximum first"
    np.testing.assert_allclose(p, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]], atol=1e-12)


@pytest.mark.task2_1
@pytest.mark.points(2)
def test_log_softmax_forward_values_and_huge_logits(impl):
    log_softmax_forward = impl(MOD).log_softmax_forward
    x = R.standard_normal((4, 6)) * 3
    np.testing.assert_allclose(log_softmax_forward(x, axis=0), np.log(ref_softmax(x, 0)), rtol=1e-12)
    with np.errstate(all="ignore"):
        out = log_softmax_forward(np.array([[1e4, 0.0, -1e4]]))
    assert np.isfinite(out).all(), "log(softmax) underflows to log(0) = -inf: use x - m - log(sum(exp(x - m)))"
    np.testing.assert_allclose(out, [[0.0, -1e4, -2e4]], rtol=1e-12)


@pytest.mark.task2_1
def test_forward_keeps_float32(impl):
    mod = impl(MOD)
    x = (R.standard_normal((2, 3)) * 50).astype(np.float32)
    p, lp = mod.softmax_forward(x), mod.log_softmax_forward(x)
    assert p.dtype == np.float32 and lp.dtype == np.float32
    np.testing.assert_allclose(p, ref_softmax(x), rtol=1e-5, atol=1e-7)


@pytest.mark.task2_1
@pytest.mark.points(3)
@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax_backward_against_central_differences(impl, axis):
    softmax_backward = impl(MOD).softmax_backward
    x = R.standard_normal((2, 4, 3))
    g = R.standard_normal(x.shape)  # a random upstream gradient: a constant one gives exactly 0
    got = softmax_backward(g, ref_softmax(x, axis), axis=axis)
    np.testing.assert_allclose(got, numeric_grad(lambda z: ref_softmax(z, axis), x, g), rtol=1e-6, atol=1e-8)


@pytest.mark.task2_1
@pytest.mark.points(3)
@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax_backward_against_central_differences(impl, axis):
    log_softmax_backward = impl(MOD).log_softmax_backward
    x = R.standard_normal((3, 5))
    g = R.standard_normal(x.shape)
    f = lambda z: np.log(ref_softmax(z, axis))  # noqa: E731
    got = log_softmax_backward(g, f(x), axis=axis)
    np.testing.assert_allclose(got, numeric_grad(f, x, g), rtol=1e-6, atol=1e-8)
