"""Matrix multiplication, batched with NumPy broadcasting of the batch dimensions.

Forward runs on the selected kernel backend (``kernels.active.matmul``); backward is Task 1.4.

A (..., M, K) @ (K, N) product — what ``Linear`` does to a (B, T, C) batch — is one matrix
product in disguise: the leading axes fold into the rows, (B·T, C) @ (C, N). ``MatMul`` runs it as
that single 2-D product, forward and backward, instead of B separate (T, C) @ (C, N) products:
one big BLAS call uses the cores well, while B small ones pay B call overheads (and, on a busy
machine, B rounds of waking BLAS threads), and the weight gradient comes out of one product
``aᵀ @ g`` instead of a (B, C, N) stack summed over B. The result is the same product.
"""
import math

import numpy as np

from . import kernels, tasks
from .errors import ShapeError
from .function import Function

# Task 1.4: solutions/task01_autograd/matmul.py
matmul_backward = tasks.bind("task01_autograd.matmul", "matmul_backward")


def check_matmul_shapes(a_shape, b_shape):
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise ShapeError(f"matmul: {a_shape} @ {b_shape}: both operands need at least 2 dimensions "
                         f"(reshape a vector to (1, n) or (n, 1))")
    if a_shape[-1] != b_shape[-2]:
        raise ShapeError(f"matmul: {a_shape} @ {b_shape}: inner sizes {a_shape[-1]} != {b_shape[-2]}")
    try:
        np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise ShapeError(f"matmul: {a_shape} @ {b_shape}: batch dimensions {a_shape[:-2]} and "
                         f"{b_shape[:-2]} do not broadcast") from None


def _fold_rows(a, b) -> bool:
    """True for (..., M, K) @ (K, N) with leading axes: run it as one (rows, K) @ (K, N) product."""
    return a.ndim > 2 and b.ndim == 2


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        check_matmul_shapes(a.shape, b.shape)
        ctx.folded = _fold_rows(a, b)
        if ctx.folded:
            lead = a.shape[:-1]                                  # (..., M)
            a = a.reshape(math.prod(lead), a.shape[-1])          # (rows, K): a view if a is contiguous
            ctx.save_for_backward(a, b)
            return kernels.active.matmul(a, b).reshape(lead + (b.shape[-1],))  # (..., M, N)
        ctx.save_for_backward(a, b)
        return kernels.active.matmul(a, b)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        if ctx.folded:  # unfold grad_output the same way: (..., M, N) -> (rows, N)
            g2 = grad_output.reshape(a.shape[0], grad_output.shape[-1])
            grad_a, grad_b = matmul_backward(g2, a, b)
            return grad_a.reshape(grad_output.shape[:-1] + (a.shape[1],)), grad_b
        return matmul_backward(grad_output, a, b)
