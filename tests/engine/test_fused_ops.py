"""The fused ops (autograd/fused.py, reached through autograd.functional) against their composed
twins (``functional._softmax_composed`` ...) on both backends: forward and backward with a random
upstream gradient in float32, and float64 gradchecks of every fused op.

Layer norm is Task 2.5, and the library keeps no composed copy of a task's answer (STYLE.md, habit
11): its twin is the same call on the NumPy backend, where the fused node runs the slot itself."""
import contextlib
import math

import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor, fused, gradcheck, kernels
from autograd.errors import ShapeError

R = np.random.default_rng(11)


@pytest.fixture(params=["numba", "numba_default", "numpy"])
def backend(request):
    """Every kernel on numba; the numba backend's default mixture (NumPy where it is faster); NumPy."""
    name = request.param.split("_")[0]
    with kernels.use_backend(name, student_kernels=request.param == "numba"):
        yield request.param


def t(*shape, dtype=np.float64, scale=1.0, grad=True):
    return Tensor((R.standard_normal(shape) * scale).astype(dtype), requires_grad=grad)


def on_numpy(fn):
    """``fn`` as a twin that runs forward and backward on the NumPy backend (the task slots)."""
    fn.numpy_backend = True
    return fn


def fwd_bwd(fn, *inputs):
    """Forward value and every input's gradient for a random upstream gradient."""
    for x in inputs:
        x.grad = None
    with kernels.use_backend("numpy") if getattr(fn, "numpy_backend", False) else contextlib.nullcontext():
        out = fn(*inputs)
        up = np.random.default_rng(3).standard_normal(out.shape).astype(out.dtype)
        out.backward(up)
    return out.data, [x.grad for x in inputs]


def assert_twins(fused_fn, composed_fn, *inputs, node=None, rtol=2e-5, atol=2e-6):
    out_f, grads_f = fwd_bwd(fused_fn, *inputs)
    out_c, grads_c = fwd_bwd(composed_fn, *inputs)
    assert out_f.dtype == out_c.dtype and out_f.shape == out_c.shape
    np.testing.assert_allclose(out_f, out_c, rtol=rtol, atol=atol)
    for gf, gc in zip(grads_f, grads_c):
        np.testing.assert_allclose(gf, gc, rtol=rtol, atol=atol)
    if node is not None:  # the fast path really is one fused node
        assert fused_fn(*inputs)._ctx.function is node


MASK = np.tril(np.ones((5, 7), bool), k=2)
MASK[1] = False  # a fully masked row
TARGET = np.array([[1, -100, 3], [0, 6, -100]])

# name: (fused call, composed twin, input shapes, fused node)
OPS = {
    "softmax": (lambda x: F.softmax(x, axis=-1), lambda x: F._softmax_composed(x, axis=-1), [(3, 4, 7)], fused.Softmax),
    "softmax_axis0": (lambda x: F.softmax(x, axis=0), lambda x: F._softmax_composed(x, axis=0), [(3, 4, 7)], fused.Softmax),
    "log_softmax": (lambda x: F.log_softmax(x, 1), lambda x: F._log_softmax_composed(x, 1), [(3, 4, 7)], fused.LogSoftmax),
    "cross_entropy": (lambda x: F.cross_entropy(x, TARGET, label_smoothing=0.1),
                      lambda x: F._cross_entropy_composed(x, TARGET, label_smoothing=0.1), [(2, 3, 7)], None),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, TARGET, reduction="none"),
                           lambda x: F._cross_entropy_composed(x, TARGET, reduction="none"), [(2, 3, 7)], None),
    "cross_entropy_sum": (lambda x: F.cross_entropy(x, TARGET[0], reduction="sum"),
                          lambda x: F._cross_entropy_composed(x, TARGET[0], reduction="sum"), [(3, 7)],
                          fused.SoftmaxCrossEntropy),
    "scaled_masked_softmax": (lambda s: F.scaled_masked_softmax(s, MASK, 1 / math.sqrt(8)),
                              lambda s: F._scaled_masked_softmax_composed(s, MASK, 1 / math.sqrt(8)),
                              [(2, 3, 5, 7)], fused.ScaledMaskedSoftmax),
    "scaled_softmax_no_mask": (lambda s: F.scaled_masked_softmax(s, None, 0.5),
                               lambda s: F._scaled_masked_softmax_composed(s, None, 0.5), [(2, 5, 7)], None),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, w, b), on_numpy(lambda x, w, b: F.layer_norm(x, w, b)),
                   [(2, 5, 6), (6,), (6,)], fused.LayerNorm),
    "layer_norm_plain": (lambda x: F.layer_norm(x, eps=1e-3), on_numpy(lambda x: F.layer_norm(x, eps=1e-3)),
                         [(4, 9)], fused.LayerNorm),
    "gelu": (lambda x: F.gelu(x), lambda x: F._gelu_composed(x), [(3, 4, 5)], fused.GELU),
    "embedding": (lambda w: F.embedding(np.array([[3, 0, 3], [4, 3, 1]]), w),
                  lambda w: F._embedding_composed(np.array([[3, 0, 3], [4, 3, 1]]), w), [(5, 6)], fused.Embedding),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_fused_matches_composed_twin_float32(backend, name):
    fused_fn, composed_fn, shapes, node = OPS[name]
    inputs = [t(*s, dtype=np.float32, scale=2.0) for s in shapes]
    assert_twins(fused_fn, composed_fn, *inputs, node=node)


@pytest.mark.parametrize("name", sorted(OPS))
def test_fused_gradcheck_float64(backend, name):
    fused_fn, _, shapes, _ = OPS[name]
    inputs = [t(*s) for s in shapes]
    assert gradcheck(fused_fn, *inputs, rng=np.random.default_rng(5))


def test_gelu_exact_gradcheck_and_values(backend):
    x = t(3, 4, scale=2.0)
    assert gradcheck(lambda x: F.gelu(x, approximate="none"), x, rng=np.random.default_rng(1))
    want = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.data.ravel()]
    np.testing.assert_allclose(F.gelu(x, approximate="none").data.ravel(), want, rtol=1e-12)
    assert F._gelu_composed(x, approximate="none")._ctx.function is fused.GELU


def test_non_contiguous_inputs(backend):
    base = t(7, 13, dtype=np.float32)
    assert_twins(lambda b: F.softmax(b.T, axis=-1), lambda b: F._softmax_composed(b.T, axis=-1), base)
    assert_twins(lambda b: F.layer_norm(b.T), on_numpy(lambda b: F.layer_norm(b.T)), base, rtol=1e-4, atol=1e-5)
    assert_twins(lambda b: F.gelu(b[:, ::2]), lambda b: F._gelu_composed(b[:, ::2]), base)
    s = t(3, 7, 5, dtype=np.float32)  # scores (B, Tk, Tq) transposed to (B, Tq, Tk)
    assert_twins(lambda s: F.scaled_masked_softmax(s.transpose(0, 2, 1), MASK, 0.3),
                 lambda s: F._scaled_masked_softmax_composed(s.transpose(0, 2, 1), MASK, 0.3), s)


def test_extreme_values(backend):
    x = Tensor(np.array([[1e4, 0.0, -1e4], [-1e4, 1e4, 1e4]], np.float32), requires_grad=True)
    for fn in (F.softmax, F.log_softmax):
        out = fn(x)
        out.backward(np.ones(out.shape, np.float32))
        assert np.isfinite(out.data).all() and np.isfinite(x.grad).all()
    loss = F.cross_entropy(x, np.array([2, 0]), label_smoothing=0.1)
    row0 = 0.9 * 2e4 + 0.1 * 1e4  # nll = lse − x_t = 1e4 − (−1e4); smoothing term = lse − mean(x)
    row1 = 0.9 * (2e4 + math.log(2)) + 0.1 * (1e4 + math.log(2) - 1e4 / 3)
    np.testing.assert_allclose(loss.data, (row0 + row1) / 2, rtol=1e-6)


def test_fully_masked_rows_are_zero_without_nan(backend):
    s = Tensor(R.standard_normal((2, 2, 3, 4)), requires_grad=True)
    mask = np.ones((2, 1, 3, 4), bool)
    mask[1, 0, 2] = False  # batch 1, query 2 sees nothing
    p = F.scaled_masked_softmax(s, mask, 0.5)
    p.backward(R.standard_normal(p.shape))
    assert (p.data[1, :, 2] == 0).all() and (s.grad[1, :, 2] == 0).all()
    assert not np.isnan(p.data).any() and not np.isnan(s.grad).any()
    np.testing.assert_allclose(p.data[0].sum(-1), 1.0)


def test_cross_entropy_all_ignored_and_ignore_none(backend):
    x = t(3, 4)
    loss = F.cross_entropy(x, np.full(3, -100), label_smoothing=0.2)
    loss.backward()
    assert loss.item() == 0.0 and (x.grad == 0).all()
    x2 = t(3, 4)
    assert_twins(lambda x: F.cross_entropy(x, np.array([0, 3, 1]), ignore_index=None),
                 lambda x: F._cross_entropy_composed(x, np.array([0, 3, 1]), ignore_index=None), x2)


def test_fallbacks_keep_semantics():
    x16 = Tensor(R.standard_normal((2, 3)).astype(np.float16))
    np.testing.assert_allclose(F.softmax(x16).data, F._softmax_composed(x16).data)
    ints = F.softmax(np.array([[1, 2, 3]]))  # integers: composed, promotes like NumPy
    assert ints.dtype == np.float64
    x, w, b = t(2, 3, 4), t(3, 4), t(1, 4)  # weight and bias that are not (C,): x̂ · w + b, broadcast
    assert_twins(lambda x, w, b: F.layer_norm(x, w, b), lambda x, w, b: F.layer_norm(x) * w + b, x, w, b)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, w, b), x, w, b, rng=np.random.default_rng(2))
    x16 = Tensor(R.standard_normal((2, 5)).astype(np.float16), requires_grad=True)  # not a kernel dtype: the slot
    ln16 = F.layer_norm(x16)
    assert ln16.dtype == np.float16 and ln16._ctx.function is fused.LayerNorm
    x64 = x16.data.astype(np.float64)
    want = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln16.data, want, rtol=5e-3, atol=5e-3)
    assert F.gelu(Tensor(np.array([1, 2])), approximate="none").dtype == np.float64


def test_errors():
    with pytest.raises(ShapeError, match="mask must be boolean"):
        F.scaled_masked_softmax(t(2, 3), np.ones((2, 3), int))
    with pytest.raises(ShapeError, match=r"mask \(4,\) does not broadcast to scores \(2, 3\)"):
        F.scaled_masked_softmax(t(2, 3), np.ones(4, bool))
    with pytest.raises(ShapeError, match="axis 2 is out of range"):
        F.softmax(t(2, 3), axis=2)
    with pytest.raises(ShapeError, match="outside the vocabulary"):
        F.embedding(np.array([-1]), t(4, 2))
    with pytest.raises(ShapeError, match="feature axis"):
        F.layer_norm(Tensor(np.array(1.0)))


def test_matmul_on_the_numba_kernel_through_the_engine():
    a, b = t(3, 7, 13), t(13, 5)
    with kernels.use_backend("numba", student_kernels=True):
        out = a @ b
        assert gradcheck(lambda a, b: a @ b, t(2, 3, 4), t(4, 5))
    np.testing.assert_allclose(out.data, a.data @ b.data, rtol=1e-12)
