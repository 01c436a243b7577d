"""Matrix multiplication, batched with NumPy broadcasting of the batch dimensions.

Forward runs on the selected kernel backend (``autograd.kernels.matmul``); backward is Task 1.4.
"""
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
        import numpy as np
        np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise ShapeError(f"matmul: {a_shape} @ {b_shape}: batch dimensions {a_shape[:-2]} and "
                         f"{b_shape[:-2]} do not broadcast") from None


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        check_matmul_shapes(a.shape, b.shape)
        ctx.save_for_backward(a, b)
        return kernels.matmul(a, b)

    @staticmethod
    def backward(ctx, grad_output):
        return matmul_backward(grad_output, *ctx.saved_tensors)
