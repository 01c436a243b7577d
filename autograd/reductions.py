"""Reductions: sum, mean, max. Forward is NumPy; backward is Task 1.3.

Sum and Mean are parallel on purpose: each op's forward beside the Task 1.3 slot its backward calls.
"""
import numpy as np

from . import tasks
from .errors import ShapeError
from .function import Function
from .tensor import check_axis

slots = tasks.slots("task01_autograd.reductions")  # Task 1.3: solutions/task01_autograd/reductions.py


def _check_axis(op, shape, axis):
    """Each axis in range, none named twice (``axis=(1, -1)`` on 2-D names axis 1 twice).
    Returns ``axis`` with NumPy integers made ints, for the slots' ``normalize_axis``."""
    if axis is None:
        return None
    single = isinstance(axis, (int, np.integer))
    axes = [check_axis(op, ax, shape) for ax in ((axis,) if single else tuple(axis))]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: axis={tuple(axis)} names an axis twice (shape {shape}, axes as "
                         f"non-negative numbers {tuple(axes)})")
    return int(axis) if single else tuple(int(ax) for ax in axis)


class Sum(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        axis = _check_axis("sum", a.shape, axis)
        ctx.args = a.shape, axis, keepdims
        return np.asarray(a.sum(axis=axis, keepdims=keepdims))

    @staticmethod
    def backward(ctx, grad_output):
        return slots.sum_backward(grad_output, *ctx.args)


class Mean(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        axis = _check_axis("mean", a.shape, axis)
        ctx.args = a.shape, axis, keepdims
        return np.asarray(a.mean(axis=axis, keepdims=keepdims), dtype=a.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return slots.mean_backward(grad_output, *ctx.args)


class Max(Function):
    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        axis = _check_axis("max", a.shape, axis)
        if a.size == 0:
            raise ShapeError(f"max: cannot reduce an empty tensor of shape {a.shape}")
        out = np.asarray(a.max(axis=axis, keepdims=keepdims))
        ctx.save_for_backward(a, out)
        ctx.args = axis, keepdims
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        return slots.max_backward(grad_output, a, out, *ctx.args)
