"""Fused operations: one ``Function`` each, forward and backward side by side, on the kernels.

``functional.py`` builds softmax, cross-entropy, layer norm, ... from primitives, and the chain rule
gives their backward for free — but every primitive writes a temporary array and records a graph
node. Here each of these ops is a single node whose forward and backward are one kernel call:
``kernels.active.<kernel>``, a field of the table of numba or NumPy functions that ``set_backend``
picks (``autograd/kernels/__init__.py``). ``functional.py`` routes through these
classes and keeps the composed versions (``_softmax_composed``, ...) as the twins that
``tests/engine/test_fused_ops.py`` compares them with.

``Linear`` is the one fused op whose twin is a product and a sum (``x @ W.T + b``): as one node it
adds the bias into the product's output in place and saves only ``x`` and ``W``, where the
composed version keeps the product *and* the sum alive until the backward.

Softmax and LogSoftmax share one forward and backward (``_AlongAxis``): each states the two kernels
it runs, forward beside backward.

Letters: N rows, V classes, C features, B batch, H heads, Tq queries, Tk keys.
"""
from __future__ import annotations

import numpy as np

from . import kernels
from .elementwise import unbroadcast
from .function import Function
from .errors import ShapeError
from .linalg import matmul_backward


class _AlongAxis(Function):
    """An op along one ``axis`` whose backward needs only its output: ``forward_kernel`` and
    ``backward_kernel`` name fields of ``kernels.active`` (looked up at each call, so that
    ``set_backend`` takes effect), called as ``forward(x, axis)`` and ``backward(g, out, axis)``."""

    @classmethod
    def forward(cls, ctx, x, axis=-1):
        out = getattr(kernels.active, cls.forward_kernel)(x, axis)
        ctx.save_for_backward(out)
        ctx.axis = axis
        return out

    @classmethod
    def backward(cls, ctx, grad_output):
        (out,) = ctx.saved_tensors
        return getattr(kernels.active, cls.backward_kernel)(grad_output, out, ctx.axis)


class Softmax(_AlongAxis):
    """p = softmax(x) along ``axis`` (max subtracted first)."""
    forward_kernel = "softmax_forward"
    backward_kernel = "softmax_backward"            # p ⊙ (g − Σ g⊙p)


class LogSoftmax(_AlongAxis):
    """log softmax(x) = x − m − log Σ exp(x − m) along ``axis``."""
    forward_kernel = "log_softmax_forward"
    backward_kernel = "log_softmax_backward"        # g − exp(out)·Σ g


class SoftmaxCrossEntropy(Function):
    """Cross-entropy of logits (N, V) against targets (N,): log-softmax and NLL in one node.

    ``ignore_index`` rows add 0 and are not counted by "mean"; label smoothing ε uses
    q = (1 − ε)·onehot + ε/V. Returns a 0-d loss ("mean", "sum") or (N,) losses ("none").
    """

    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
        loss, probs = kernels.active.cross_entropy_forward(logits, target, ignore_index, label_smoothing,
                                                           reduction)
        ctx.save_for_backward(probs)
        ctx.args = target, ignore_index, label_smoothing, reduction
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (probs,) = ctx.saved_tensors
        return kernels.active.cross_entropy_backward(grad_output, probs, *ctx.args)  # w·(p − q)


class ScaledMaskedSoftmax(Function):
    """Attention weights P = softmax over allowed keys of scale·scores (..., Tq, Tk).

    ``mask`` is boolean, broadcastable to scores, **True = may attend**; masked entries get weight 0
    and a row with no allowed key is all zeros (no NaN). ``mask=None`` allows everything.
    """

    @staticmethod
    def forward(ctx, scores, mask=None, scale=1.0):
        out = kernels.active.scaled_masked_softmax_forward(scores, mask, scale)
        ctx.save_for_backward(out)
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return kernels.active.scaled_masked_softmax_backward(grad_output, out, ctx.scale)  # s·P⊙(G − ΣG⊙P)


class LayerNorm(Function):
    """(x − μ)/√(σ² + ε) · weight + bias over the last axis; x (..., C), weight and bias (C,)."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        out, mean, rstd = kernels.active.layer_norm_forward(x, weight, bias, eps)
        ctx.save_for_backward(x, weight, mean, rstd)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        dx, dweight, dbias = kernels.active.layer_norm_backward(grad_output, *ctx.saved_tensors)
        return dx, dweight, dbias


class GELU(Function):
    """x·Φ(x) (``approximate="none"``) or its tanh approximation (``"tanh"``), elementwise."""

    @staticmethod
    def forward(ctx, x, approximate="tanh"):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        return kernels.active.gelu_forward(x, approximate)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return kernels.active.gelu_backward(grad_output, x, ctx.approximate)


class Embedding(Function):
    """Rows of ``weight`` (V, C) picked by integer ``ids`` (...) → (..., C); backward scatter-adds."""

    @staticmethod
    def forward(ctx, weight, ids):
        ctx.ids, ctx.num_embeddings = ids, weight.shape[0]
        return np.take(weight, ids, axis=0)

    @staticmethod
    def backward(ctx, grad_output):
        C = grad_output.shape[-1]
        return kernels.active.embedding_backward(grad_output.reshape(-1, C), ctx.ids.reshape(-1),
                                                 ctx.num_embeddings)


class Linear(Function):
    """y = x Wᵀ + b: x (..., C_in), W (C_out, C_in), b (C_out,) → (..., C_out) (``nn.Linear``).

    The leading axes fold into rows, so forward and backward are 2-D products (``linalg.py`` says
    why); the backward is Task 1.4's ``matmul_backward`` on those rows and Task 1.2's
    ``unbroadcast`` for the bias, exactly what the composed ``x @ W.T + b`` would call.
    """

    @staticmethod
    def forward(ctx, x, weight, bias):
        if x.ndim == 0 or weight.ndim != 2 or x.shape[-1] != weight.shape[1] or bias.shape != weight.shape[:1]:
            raise ShapeError(f"linear: x {x.shape}, weight {weight.shape}, bias {bias.shape}: expected "
                             "x (..., C_in), weight (C_out, C_in), bias (C_out,)")
        lead, c_in = x.shape[:-1], x.shape[-1]
        x2 = x.reshape(-1, c_in)                                 # (N, C_in): a view if contiguous
        out = kernels.active.matmul(x2, weight.T)                # (N, C_out)
        if out.dtype == np.result_type(out, bias):
            out += bias                                          # in place: no second (N, C_out) array
        else:
            out = out + bias                                     # a wider bias widens y, as x @ W.T + b does
        ctx.save_for_backward(x2, weight)
        ctx.bias_shape = bias.shape
        return out.reshape(lead + (weight.shape[0],))

    @staticmethod
    def backward(ctx, grad_output):
        x2, weight = ctx.saved_tensors
        g2 = grad_output.reshape(x2.shape[0], weight.shape[0])  # (N, C_out)
        grad_x2, grad_wt = matmul_backward(g2, x2, weight.T)    # (N, C_in), (C_in, C_out)
        grad_x = grad_x2.reshape(grad_output.shape[:-1] + (x2.shape[1],))
        return grad_x, grad_wt.T, unbroadcast(g2, ctx.bias_shape)
