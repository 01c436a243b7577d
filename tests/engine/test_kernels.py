"""The kernels (autograd/kernels) on both backends, against NumPy references written here.

Array-level: every kernel's forward and backward, awkward sizes (1×1, sizes that are not multiples
of a tile, a batch of 3), non-contiguous inputs, extreme values (logits ±1e4, fully masked rows),
float32 within float32 tolerance. Tensor-level tests of the fused ops: test_fused_ops.py.
"""
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd import MiniLMError, kernels, set_backend
from autograd.errors import ConfigError, ShapeError
from autograd.kernels import attention as attention_kernels

R = np.random.default_rng(7)
F32 = dict(rtol=2e-5, atol=2e-6)  # float32 results against float64 references


@pytest.fixture(params=kernels.BACKENDS)
def backend(request):
    """Every kernel on numba (even those the numba backend normally leaves to NumPy), or on NumPy."""
    with kernels.use_backend(request.param, student_kernels=True):
        yield request.param


def randn(*shape, dtype=np.float64, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(dtype)


# ---- references (float64) -------------------------------------------------------------------------
def ref_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ref_masked_softmax(s, mask, scale):
    z = np.where(mask, np.asarray(s, np.float64) * scale, -np.inf)
    out = np.zeros(np.broadcast_shapes(z.shape, np.shape(mask)))
    for idx in np.ndindex(out.shape[:-1]):
        row, keep = z[idx], np.broadcast_to(mask, out.shape)[idx]
        if keep.any():
            out[idx][keep] = ref_softmax(row[keep])
    return out


def ref_cross_entropy(x, t, ignore, eps):
    x = np.asarray(x, np.float64)
    logp = np.log(ref_softmax(x))
    V = x.shape[1]
    q = np.full(x.shape, eps / V)
    valid = t != ignore
    q[np.arange(len(t)), np.where(valid, t, 0)] += 1 - eps
    return np.where(valid, -(q * logp).sum(1), 0.0), valid


# ---- backend switch ---------------------------------------------------------------------------------
def test_backend_switch_and_errors():
    before = kernels.get_backend()
    with kernels.use_backend("numpy"):
        assert kernels.get_backend() == "numpy"
        assert kernels.implementation("layer_norm_forward") == "numpy"
    assert kernels.get_backend() == before
    with pytest.raises(MiniLMError, match="unknown backend 'cuda'"):
        set_backend("cuda")
    assert kernels.get_backend() == before


def test_numba_backend_leaves_the_kernels_numpy_wins_to_numpy():
    with kernels.use_backend("numba"):
        assert kernels.implementation("matmul") == "numpy"
        assert kernels.implementation("gelu_tanh_forward") == "numpy"
        assert kernels.implementation("gelu_none_forward") == "numba"
        assert kernels.implementation("scaled_masked_softmax_forward") == "numba"
    with kernels.use_backend("numba", student_kernels=True):
        assert all(kernels.implementation(k) == "numba" for k in kernels.NUMPY_ON_NUMBA_BACKEND)


def test_default_backend_is_numba():
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "MINILM_BACKEND"}
    code = "import autograd.kernels as k; print(k.get_backend(), k.implementation('matmul'))"
    run = dict(env=env, capture_output=True, text=True, check=True, cwd=root)
    assert subprocess.run([sys.executable, "-c", code], **run).stdout.split() == ["numba", "numpy"]
    env["MINILM_BACKEND"] = "numpy"
    assert subprocess.run([sys.executable, "-c", code], **run).stdout.split() == ["numpy", "numpy"]


# ---- matmul (Task 2.3's kernel) ---------------------------------------------------------------------
MATMUL_SHAPES = [((1, 1), (1, 1)), ((7, 13), (13, 5)), ((37, 70), (70, 33)), ((33, 1), (1, 65)),
                 ((3, 7, 13), (3, 13, 5)), ((3, 7, 13), (13, 5)), ((2, 1, 4, 6), (3, 6, 2)),
                 ((4, 0), (0, 3)), ((0, 5), (5, 2))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_numba_matches_numpy(sa, sb, dtype):
    a, b = randn(*sa, dtype=dtype), randn(*sb, dtype=dtype)
    out = kernels.matmul_numba(a, b)
    assert out.dtype == dtype and out.shape == np.matmul(a, b).shape
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64),
                               **(F32 if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)))


def test_matmul_numba_non_contiguous_and_errors():
    a = randn(13, 7).T  # (7, 13), Fortran order
    b = randn(5, 13)[:, ::-1].T  # (13, 5), negative strides
    np.testing.assert_allclose(kernels.matmul_numba(a, b), a @ b, rtol=1e-12)
    with pytest.raises(ShapeError, match="need"):
        kernels.matmul_numba(randn(2, 3), randn(4, 2))
    with pytest.raises(ShapeError, match="float32 or float64"):
        kernels.matmul_numba(np.ones((2, 2), int), np.ones((2, 2), int))


@pytest.mark.parametrize("student_kernels", [False, True])
def test_kernels_matmul_follows_the_switch(student_kernels):
    a, b = randn(3, 7, 13, dtype=np.float32), randn(13, 5, dtype=np.float32)
    with kernels.use_backend("numba", student_kernels=student_kernels):
        np.testing.assert_allclose(kernels.matmul(a, b), np.matmul(a, b), **F32)
        ints = kernels.matmul(np.ones((2, 3), int), np.ones((3, 2), int))  # not a float: NumPy
        assert ints.dtype.kind == "i" and (ints == 3).all()


# ---- softmax and log-softmax ------------------------------------------------------------------------
@pytest.mark.parametrize("shape,axis", [((1, 1), -1), ((7, 13), -1), ((3, 5, 4), 0), ((3, 5, 4), 1), ((6,), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_kernels(backend, shape, axis, dtype):
    x = randn(*shape, dtype=dtype, scale=3.0)
    g = randn(*shape)
    p = kernels.softmax_forward(x, axis)
    assert p.dtype == dtype and p.shape == shape
    tol = F32 if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    P = ref_softmax(x, axis)
    np.testing.assert_allclose(p, P, **tol)
    np.testing.assert_allclose(kernels.log_softmax_forward(x, axis), np.log(P), **tol)
    dx = kernels.softmax_backward(g.astype(dtype), p, axis)
    np.testing.assert_allclose(dx, P * (g - (g * P).sum(axis, keepdims=True)), **tol)
    dlx = kernels.log_softmax_backward(g.astype(dtype), np.log(P).astype(dtype), axis)
    np.testing.assert_allclose(dlx, g - P * g.sum(axis, keepdims=True), **tol)


def test_softmax_extreme_logits_and_non_contiguous(backend):
    x = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4], [0.0, 1e4, 1e4]], np.float32)
    p = kernels.softmax_forward(x)
    np.testing.assert_allclose(p, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0, 0.5, 0.5]], atol=1e-7)
    lp = kernels.log_softmax_forward(x)
    assert np.isfinite(lp).all()
    np.testing.assert_allclose(lp[0], [0.0, -1e4, -2e4])
    xt = randn(13, 7).T  # non-contiguous (7, 13)
    np.testing.assert_allclose(kernels.softmax_forward(xt, -1), ref_softmax(xt), rtol=1e-12)


# ---- scaled masked softmax (Task 2.4's kernel) --------------------------------------------------------
MASKS = {
    "causal": lambda B, H, Tq, Tk: np.tril(np.ones((Tq, Tk), bool), k=Tk - Tq),
    "padding": lambda B, H, Tq, Tk: (np.arange(Tk) < np.array([Tk, 2, 1])[:B, None])[:, None, None, :],
    "random_with_empty_rows": lambda B, H, Tq, Tk: (R.random((B, H, Tq, Tk)) < 0.5) & (np.arange(Tq) % 3 != 0)[:, None],
    "none": lambda B, H, Tq, Tk: None,
}


@pytest.mark.parametrize("name", sorted(MASKS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scaled_masked_softmax(backend, name, dtype):
    B, H, Tq, Tk = 3, 2, 5, 7
    s = randn(B, H, Tq, Tk, dtype=dtype, scale=4.0)
    mask = MASKS[name](B, H, Tq, Tk)
    full = np.ones((1, 1, 1, 1), bool) if mask is None else mask
    scale = 1 / math.sqrt(8)
    p = kernels.scaled_masked_softmax_forward(s, mask, scale)
    P = ref_masked_softmax(s, full, scale)
    tol = F32 if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    assert p.dtype == dtype and not np.isnan(p).any()
    np.testing.assert_allclose(p, P, **tol)
    assert (p[~np.broadcast_to(full, p.shape)] == 0).all()
    g = randn(B, H, Tq, Tk)
    ds = kernels.scaled_masked_softmax_backward(g.astype(dtype), p, scale)
    np.testing.assert_allclose(ds, scale * P * (g - (g * P).sum(-1, keepdims=True)), **tol)


@pytest.mark.parametrize("shape", [(7,), (4, 6), (2, 3, 4, 5, 6)])
def test_scaled_masked_softmax_any_rank_and_extremes(backend, shape):
    s = randn(*shape, scale=1e4)  # scores of order ±1e4
    mask = R.random(shape[-2:] if len(shape) > 1 else shape) < 0.6
    if len(shape) > 1:
        mask[0] = False  # a fully masked row
    p = kernels.scaled_masked_softmax_forward(s, mask, 0.5)
    assert not np.isnan(p).any()
    np.testing.assert_allclose(p, ref_masked_softmax(s, mask, 0.5), rtol=1e-12, atol=1e-14)
    if len(shape) > 1:
        assert (p[..., 0, :] == 0).all()
        ds = kernels.scaled_masked_softmax_backward(np.ones(shape), p, 0.5)
        assert (ds[..., 0, :] == 0).all() and not np.isnan(ds).any()


def test_numpy_reference_matches_numba_kernel_directly():
    s, mask = randn(2, 3, 4, 5), R.random((2, 1, 4, 5)) < 0.5
    np.testing.assert_allclose(attention_kernels.scaled_masked_softmax_forward_numba(s, mask, 0.3),
                               attention_kernels.scaled_masked_softmax_forward_numpy(s, mask, 0.3), rtol=1e-12)


# ---- cross-entropy ----------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_kernels(backend, reduction, eps, dtype):
    N, V = 9, 13
    x = randn(N, V, dtype=dtype, scale=3.0)
    t = R.integers(0, V, N)
    t[[1, 4]] = -100
    loss, probs = kernels.cross_entropy_forward(x, t, -100, eps, reduction)
    per_row, valid = ref_cross_entropy(x, t, -100, eps)
    want = {"none": per_row, "sum": per_row.sum(), "mean": per_row.sum() / valid.sum()}[reduction]
    tol = F32 if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    assert loss.dtype == dtype and probs.dtype == dtype
    np.testing.assert_allclose(loss, want, **tol)
    np.testing.assert_allclose(probs, ref_softmax(x), **tol)
    up = randn(N) if reduction == "none" else np.asarray(1.7)
    grad = kernels.cross_entropy_backward(up.astype(dtype), probs, t, -100, eps, reduction)
    q = np.full((N, V), eps / V)
    q[np.arange(N), np.where(valid, t, 0)] += 1 - eps
    w = {"none": up, "sum": np.full(N, 1.7), "mean": np.full(N, 1.7 / valid.sum())}[reduction] * valid
    np.testing.assert_allclose(grad, w[:, None] * (ref_softmax(x) - q), **tol)


def test_cross_entropy_extremes(backend):
    x = np.array([[1e4, 0.0, -1e4], [0.0, 0.0, 0.0]], np.float32)
    loss, _ = kernels.cross_entropy_forward(x, np.array([2, 0]), -100, 0.0, "none")
    np.testing.assert_allclose(loss, [2e4, math.log(3)], rtol=1e-6)
    loss, probs = kernels.cross_entropy_forward(x, np.array([-100, -100]), -100, 0.1, "mean")
    assert loss == 0.0
    grad = kernels.cross_entropy_backward(np.asarray(1.0, np.float32), probs, np.array([-100, -100]), -100, 0.1, "mean")
    assert (grad == 0).all()


# ---- layer norm -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (3, 5, 4), (2, 40, 33)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_kernels(backend, shape, dtype):
    x = randn(*shape, dtype=dtype, scale=2.0) + 3.0
    C = shape[-1]
    w, b = randn(C, dtype=dtype), randn(C, dtype=dtype)
    out, mean, rstd = kernels.layer_norm_forward(x, w, b, 1e-5)
    X = x.astype(np.float64)
    mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
    xhat = (X - mu) / np.sqrt(var + 1e-5)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    assert out.dtype == dtype and mean.shape == shape[:-1] + (1,) and rstd.shape == mean.shape
    np.testing.assert_allclose(out, xhat * w + b, **tol)
    np.testing.assert_allclose(mean, mu, **tol)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(var + 1e-5), **tol)
    g = randn(*shape)
    dx, dw, db = kernels.layer_norm_backward(g.astype(dtype), x, w, mean, rstd)
    gh = g * w
    want_dx = (gh - gh.mean(-1, keepdims=True) - xhat * (gh * xhat).mean(-1, keepdims=True)) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(dx, want_dx, **tol)
    np.testing.assert_allclose(dw, (g * xhat).reshape(-1, C).sum(0), **tol)
    np.testing.assert_allclose(db, g.reshape(-1, C).sum(0), **tol)


# ---- GELU -------------------------------------------------------------------------------------------
def ref_gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in np.ravel(x)]).reshape(np.shape(x))


@pytest.mark.parametrize("approximate", ["tanh", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_kernels(backend, approximate, dtype):
    x = np.linspace(-8, 8, 60).reshape(3, 4, 5).astype(dtype)
    X = x.astype(np.float64)
    tol = F32 if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernels.gelu_forward(x, approximate), ref_gelu(X, approximate), **tol)
    g = randn(3, 4, 5)
    h = 1e-6
    slope = (ref_gelu(X + h, approximate) - ref_gelu(X - h, approximate)) / (2 * h)
    np.testing.assert_allclose(kernels.gelu_backward(g.astype(dtype), x, approximate), g * slope,
                               rtol=1e-5 if dtype == np.float32 else 1e-7, atol=1e-6)
    with pytest.raises(ConfigError, match="approximate='erf'"):
        kernels.gelu_forward(x, "erf")


def test_erf_helper_is_exact():
    x = np.linspace(-6, 6, 101)
    np.testing.assert_array_equal(kernels.erf(x), [math.erf(v) for v in x])
    assert kernels.erf(x.astype(np.float32)).dtype == np.float32
    assert kernels.erf(np.arange(3)).dtype == np.float64


# ---- embedding backward -----------------------------------------------------------------------------
@pytest.mark.parametrize("C", [1, 5, 70])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_backward_scatter_adds(backend, C, dtype):
    V = 11
    ids = np.array([3, 0, 3, 10, 3, 0, 7])  # repeated ids must sum
    g = randn(len(ids), C, dtype=dtype)
    out = kernels.embedding_backward(g, ids, V)
    want = np.zeros((V, C))
    for n, i in enumerate(ids):
        want[i] += g[n]
    assert out.dtype == dtype and out.shape == (V, C)
    np.testing.assert_allclose(out, want, rtol=1e-6 if dtype == np.float32 else 1e-12, atol=1e-6)


# ---- saved state is backend-neutral -------------------------------------------------------------------
def test_forward_on_one_backend_backward_on_the_other():
    x, g = randn(4, 6), randn(4, 6)
    w, b = randn(6), randn(6)
    with kernels.use_backend("numba", student_kernels=True):
        p = kernels.softmax_forward(x)
        out, mean, rstd = kernels.layer_norm_forward(x, w, b)
        loss, probs = kernels.cross_entropy_forward(x, np.array([1, -100, 5, 0]), -100, 0.1, "mean")
    with kernels.use_backend("numpy"):
        np.testing.assert_allclose(kernels.softmax_forward(x), p, rtol=1e-12)
        dx_np = kernels.layer_norm_backward(g, x, w, mean, rstd)[0]
        gce_np = kernels.cross_entropy_backward(np.asarray(1.0), probs, np.array([1, -100, 5, 0]), -100, 0.1, "mean")
    with kernels.use_backend("numba", student_kernels=True):
        np.testing.assert_allclose(kernels.layer_norm_backward(g, x, w, mean, rstd)[0], dx_np, rtol=1e-10)
        gce = kernels.cross_entropy_backward(np.asarray(1.0), probs, np.array([1, -100, 5, 0]), -100, 0.1, "mean")
        np.testing.assert_allclose(gce, gce_np, rtol=1e-12, atol=1e-15)
