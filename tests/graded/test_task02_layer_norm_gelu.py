"""Graded tests of Task 2.5: layer norm forward/backward and GELU (tanh and exact)
(slots in exercises/task02_kernels/layer_norm.py and gelu.py)."""
import math

import numpy as np
import pytest

from tests.helpers import numeric_grad

LN = "task02_kernels.layer_norm"
GELU = "task02_kernels.gelu"
R = np.random.default_rng(25)


def ref_layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).sum(-1, keepdims=True) / x.shape[-1]  # biased
    return (x - mu) / np.sqrt(var + eps) * w + b


def ref_gelu(x, approximate):
    x = np.asarray(x, np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))(x)


# ---- layer norm ------------------------------------------------------------------------------------
@pytest.mark.task2_5
@pytest.mark.points(2)
@pytest.mark.parametrize("eps", [1e-5, 0.1])
def test_layer_norm_forward(impl, eps):
    forward = impl(LN).layer_norm_forward
    x = R.standard_normal((3, 2, 4)) * 2 + 1  # C = 4: the unbiased variance is 4/3 too big
    w, b = R.standard_normal(4), R.standard_normal(4)
    out, mean, rstd = forward(x, w, b, eps=eps)
    np.testing.assert_allclose(out, ref_layer_norm(x, w, b, eps), rtol=1e-10, atol=1e-12,
        err_msg=(f"layer_norm_forward (eps={eps}): expected (x − mean) / sqrt(var + eps) · w + b over the "
                 "last axis (biased var)"))
    assert mean.shape == (3, 2, 1) and rstd.shape == (3, 2, 1), \
        ("layer_norm_forward on (3, 2, 5) should return mean and rstd of shape (3, 2, 1) (keepdims), got "
         f"{np.shape(mean)}, {np.shape(rstd)}")
    np.testing.assert_allclose(mean, x.mean(-1, keepdims=True), rtol=1e-12,
        err_msg="layer_norm_forward: mean should be x.mean(-1, keepdims=True)")
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x.var(-1, keepdims=True) + eps), rtol=1e-10,
        err_msg=("layer_norm_forward: rstd should be 1 / sqrt(var + eps) with the biased variance (ddof=0), "
                 f"eps={eps} inside the root"))


@pytest.mark.task2_5
def test_layer_norm_keeps_float32(impl):
    forward = impl(LN).layer_norm_forward
    x = R.standard_normal((5, 8)).astype(np.float32)
    w, b = np.ones(8, np.float32), np.zeros(8, np.float32)
    out, mean, rstd = forward(x, w, b)
    assert out.dtype == np.float32, f"a float32 input must give a float32 output, got {out.dtype}"
    np.testing.assert_allclose(out, ref_layer_norm(x.astype(np.float64), 1.0, 0.0, 1e-5), rtol=1e-4, atol=1e-5,
        err_msg="layer_norm_forward on float32: values differ from the float64 reference")


@pytest.mark.task2_5
@pytest.mark.points(3)
def test_layer_norm_backward_against_central_differences(impl):
    mod = impl(LN)
    x = R.standard_normal((2, 3, 5))
    w, b = R.standard_normal(5) + 1, R.standard_normal(5)
    g = R.standard_normal(x.shape)
    eps = 1e-5
    _, mean, rstd = mod.layer_norm_forward(x, w, b, eps=eps)
    dx, dw, db = mod.layer_norm_backward(g, x, w, mean, rstd)
    assert dx.shape == x.shape and dw.shape == (5,) and db.shape == (5,), \
        (f"layer_norm_backward: expected dx {x.shape}, dw (5,), db (5,), got {np.shape(dx)}, {np.shape(dw)}, "
         f"{np.shape(db)} (sum dw, db over all but the last axis)")
    np.testing.assert_allclose(dx, numeric_grad(lambda z: ref_layer_norm(z, w, b, eps), x, g), rtol=1e-6, atol=1e-8,
        err_msg="layer_norm_backward: dx differs from finite differences (the mean and the variance both depend on x)")
    np.testing.assert_allclose(dw, numeric_grad(lambda z: ref_layer_norm(x, z, b, eps), w, g), rtol=1e-6, atol=1e-8,
        err_msg="layer_norm_backward: dw should be Σ g · x̂ over every axis but the last")
    np.testing.assert_allclose(db, numeric_grad(lambda z: ref_layer_norm(x, w, z, eps), b, g), rtol=1e-6, atol=1e-8,
        err_msg="layer_norm_backward: db should be Σ g over every axis but the last")


# ---- GELU ------------------------------------------------------------------------------------------
@pytest.mark.task2_5
@pytest.mark.points(2)
@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_gelu_forward(impl, approximate):
    forward = impl(GELU).gelu_forward
    x = np.linspace(-6, 6, 121).reshape(11, 11)
    np.testing.assert_allclose(forward(x, approximate=approximate), ref_gelu(x, approximate), rtol=1e-7, atol=1e-9,
        err_msg=(f"gelu_forward(approximate={approximate!r}): tanh is 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))), "
                 "none is 0.5x(1 + erf(x/√2))"))


@pytest.mark.task2_5
def test_gelu_forms_differ_and_keep_float32(impl):
    forward = impl(GELU).gelu_forward
    x = np.array([-2.7, -1.0, 0.5, 3.0], np.float32)
    for approximate in ("tanh", "none"):
        y = forward(x, approximate=approximate)
        assert y.dtype == np.float32, f"gelu_forward({approximate!r}) on float32 must return float32, got {y.dtype}"
        np.testing.assert_allclose(y, ref_gelu(x, approximate), rtol=1e-5, atol=1e-6,
            err_msg=f"gelu_forward({approximate!r}) on float32 differs from the reference")
    assert abs(forward(np.array([-2.7]), "tanh") - forward(np.array([-2.7]), "none"))[0] > 3e-4, \
        "at x = -2.7 the tanh and the exact (erf) GELU differ by > 3e-4: is approximate ignored?"


@pytest.mark.task2_5
@pytest.mark.points(2)
@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_gelu_backward_against_central_differences(impl, approximate):
    backward = impl(GELU).gelu_backward
    x = np.linspace(-5, 5, 24).reshape(4, 6) + 0.01
    g = R.standard_normal(x.shape)
    want = numeric_grad(lambda z: ref_gelu(z, approximate), x, g)
    np.testing.assert_allclose(backward(g, x, approximate=approximate), want, rtol=1e-6, atol=1e-8,
        err_msg=f"gelu_backward(approximate={approximate!r}) differs from finite differences of gelu_forward")
