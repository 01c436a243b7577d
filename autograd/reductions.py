"""Reductions: sum, mean, max. Forward is NumPy; backward is Task 1.3.

Sum and Mean need only the input's shape for their gradient, so they share a forward and backward
(``_ShapeOnlyReduction``): each states its NumPy reduction and its slot, forward beside backward.
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


class _ShapeOnlyReduction(Function):
    """A reduction whose gradient spreads g back over the reduced axes, and so needs no values of
    ``a``: the forward keeps ``(a.shape, axis, keepdims)``, and the backward is the Task 1.3 slot
    ``backward_slot(g, shape, axis, keepdims)``. Each op states ``name`` (for errors), its NumPy
    ``reduce`` and its ``backward_slot``."""

    @classmethod
    def forward(cls, ctx, a, axis=None, keepdims=False):
        axis = _check_axis(cls.name, a.shape, axis)
        ctx.args = a.shape, axis, keepdims
        return cls.reduce(a, axis, keepdims)

    @classmethod
    def backward(cls, ctx, grad_output):
        return cls.backward_slot(grad_output, *ctx.args)


class Sum(_ShapeOnlyReduction):
    """Σ over ``axis``; dL/da = g broadcast back to a's shape."""
    name = "sum"
    backward_slot = slots.sum_backward

    @staticmethod
    def reduce(a, axis, keepdims):
        return np.asarray(a.sum(axis=axis, keepdims=keepdims))


class Mean(_ShapeOnlyReduction):
    """Σ / n over ``axis``; dL/da = g / n broadcast back to a's shape (n: the elements reduced)."""
    name = "mean"
    backward_slot = slots.mean_backward

    @staticmethod
    def reduce(a, axis, keepdims):
        return np.asarray(a.mean(axis=axis, keepdims=keepdims), dtype=a.dtype)


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
