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
    assert p.shape == x.shape, f"softmax_forward on (3, 4, 5), axis={axis}: expected shape (3, 4, 5), got {p.shape}"
    np.testing.assert_allclose(p, ref_softmax(x, axis), rtol=1e-12, atol=1e-15,
                               err_msg=f"softmax_forward on (3, 4, 5), axis={axis}: values differ from "
                                       "exp(x - max) / sum(exp(x - max)) along that axis")
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-12,
                               err_msg=(f"softmax_forward, axis={axis}: the probabilities must sum to 1 along "
                                        f"axis {axis}"))


@pytest.mark.task2_1
@pytest.mark.points(2)
def test_softmax_forward_is_stable_for_huge_logits(impl):
    softmax_forward = impl(MOD).softmax_forward
    x = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4], [1e4, 1e4, 0.0]])
    with np.errstate(all="ignore"):
        p = softmax_forward(x)
    assert np.isfinite(p).all(), "exp(1e4) overflows: subtract the row maximum first"
    np.testing.assert_allclose(p, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]], atol=1e-12,
                               err_msg="softmax_forward of [[1e4, 0, -1e4], [-1e4]*3, [1e4, 1e4, 0]] should be "
                                       "[[1, 0, 0], [1/3]*3, [.5, .5, 0]]")


@pytest.mark.task2_1
@pytest.mark.points(2)
def test_log_softmax_forward_values_and_huge_logits(impl):
    log_softmax_forward = impl(MOD).log_softmax_forward
    x = R.standard_normal((4, 6)) * 3
    np.testing.assert_allclose(log_softmax_forward(x, axis=0), np.log(ref_softmax(x, 0)), rtol=1e-12,
                               err_msg="log_softmax_forward on (4, 6), axis=0: values differ from log(softmax(x, 0))")
    # several rows along the last axis: a max or sum without keepdims=True broadcasts across rows
    for shape in ((4, 4), (3, 5)):
        x = R.standard_normal(shape) * 3
        try:
            got = log_softmax_forward(x, axis=-1)
        except ValueError as e:
            pytest.fail(f"log_softmax_forward on a {shape} input, axis=-1, raised {e}: reduce with keepdims=True so "
                        "the row max and the row sum broadcast against x")
        np.testing.assert_allclose(got, np.log(ref_softmax(x, -1)), rtol=1e-12,
                                   err_msg=f"log_softmax_forward on a {shape} input, axis=-1: each row must use its "
                                           "own max and sum — values that mix rows mean a reduction lost its axis "
                                           "(use keepdims=True)")
    with np.errstate(all="ignore"):
        out = log_softmax_forward(np.array([[1e4, 0.0, -1e4]]))
    assert np.isfinite(out).all(), "log(softmax) underflows to log(0) = -inf: use x - m - log(sum(exp(x - m)))"
    np.testing.assert_allclose(out, [[0.0, -1e4, -2e4]], rtol=1e-12,
                               err_msg="log_softmax_forward([[1e4, 0, -1e4]]) should be [[0, -1e4, -2e4]]")


@pytest.mark.task2_1
def test_forward_keeps_float32(impl):
    mod = impl(MOD)
    x = (R.standard_normal((2, 3)) * 50).astype(np.float32)
    p, lp = mod.softmax_forward(x), mod.log_softmax_forward(x)
    assert p.dtype == np.float32 and lp.dtype == np.float32, \
        f"a float32 input must give float32 outputs, got softmax {p.dtype} and log_softmax {lp.dtype}"
    np.testing.assert_allclose(p, ref_softmax(x), rtol=1e-5, atol=1e-7,
                               err_msg=("softmax_forward on float32 logits of size ~50: values differ from "
                                        "the reference"))


@pytest.mark.task2_1
@pytest.mark.points(3)
@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax_backward_against_central_differences(impl, axis):
    softmax_backward = impl(MOD).softmax_backward
    x = R.standard_normal((2, 4, 3))
    g = R.standard_normal(x.shape)  # a random upstream gradient: a constant one gives exactly 0
    got = softmax_backward(g, ref_softmax(x, axis), axis=axis)
    np.testing.assert_allclose(got, numeric_grad(lambda z: ref_softmax(z, axis), x, g), rtol=1e-6, atol=1e-8,
                               err_msg=f"softmax_backward, axis={axis}: expected p·(g − Σ g·p) with the sum along "
                                       f"axis {axis} (keepdims=True)")


@pytest.mark.task2_1
@pytest.mark.points(3)
@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax_backward_against_central_differences(impl, axis):
    log_softmax_backward = impl(MOD).log_softmax_backward
    x = R.standard_normal((3, 5))
    g = R.standard_normal(x.shape)
    f = lambda z: np.log(ref_softmax(z, axis))  # noqa: E731
    got = log_softmax_backward(g, f(x), axis=axis)
    np.testing.assert_allclose(got, numeric_grad(f, x, g), rtol=1e-6, atol=1e-8,
                               err_msg=f"log_softmax_backward, axis={axis}: expected g − exp(out)·Σ g along axis "
                                       f"{axis} (out is log-probabilities: exp it)")
