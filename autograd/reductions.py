"""Reductions: sum, mean, max. Forward is NumPy; backward is Task 1.3."""
import numpy as np

from . import tasks
from .errors import ShapeError
from .function import Function

# Task 1.3: solutions/task01_autograd/reductions.py
_T13 = "task01_autograd.reductions"
sum_backward = tasks.bind(_T13, "sum_backward")
mean_backward = tasks.bind(_T13, "mean_backward")
max_backward = tasks.bind(_T13, "max_backward")


def _check_axis(op, shape, axis):
    axes = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    for ax in axes:
        if not -len(shape) <= ax < len(shape):
            raise ShapeError(f"{op}: axis {ax} is out of range for shape {shape}")


class Sum(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        _check_axis("sum", a.shape, axis)
        ctx.args = a.shape, axis, keepdims
        return np.asarray(a.sum(axis=axis, keepdims=keepdims))

    @staticmethod
    def backward(ctx, grad_output):
        return sum_backward(grad_output, *ctx.args)


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        _check_axis("mean", a.shape, axis)
        ctx.args = a.shape, axis, keepdims
        return np.asarray(a.mean(axis=axis, keepdims=keepdims), dtype=a.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return mean_backward(grad_output, *ctx.args)


class Max(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        _check_axis("max", a.shape, axis)
        if a.size == 0:
            raise ShapeError(f"max: cannot reduce an empty tensor of shape {a.shape}")
        out = np.asarray(a.max(axis=axis, keepdims=keepdims))
        ctx.save_for_backward(a, out)
        ctx.args = axis, keepdims
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        return max_backward(grad_output, a, out, *ctx.args)
