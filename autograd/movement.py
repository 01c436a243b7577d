"""Data movement: reshape, transpose, indexing, gather, concatenate, stack.

These only re-arrange numbers, so each backward re-arranges the gradient back (Task 1.3 for
reshape, transpose, indexing and gather; cat and stack split the gradient).

Cat and Stack join arrays with NumPy through one helper, ``_join``, which names the shapes when
they do not fit; each keeps its own backward.
"""
import numpy as np

from . import tasks
from .errors import IndexOutOfRangeError, ShapeError
from .function import Function, as_tensor
from .elementwise import Where
from .tensor import Tensor, check_axis

slots = tasks.slots("task01_autograd.reductions")  # Task 1.3: solutions/task01_autograd/reductions.py


class Reshape(Function):
    @staticmethod
    def forward(ctx, a, shape):
        try:
            out = a.reshape(shape)
        except ValueError:
            raise ShapeError(f"reshape: cannot reshape {a.shape} ({a.size} elements) into {tuple(shape)}") from None
        ctx.shape = a.shape
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return slots.reshape_backward(grad_output, ctx.shape)


class Transpose(Function):
    @staticmethod
    def forward(ctx, a, axes=None):
        if axes is not None:
            axes = tuple(check_axis("transpose", ax, a.shape) for ax in axes)  # no silent wrap-around
            if sorted(axes) != list(range(a.ndim)):
                raise ShapeError(f"transpose: axes {axes} are not a permutation of {a.ndim} axes (shape {a.shape})")
        ctx.axes = axes
        return a.transpose(ctx.axes)

    @staticmethod
    def backward(ctx, grad_output):
        return slots.transpose_backward(grad_output, ctx.axes)


def _raw_index(index):
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in index)
    return index


class GetItem(Function):
    @staticmethod
    def forward(ctx, a, index):
        index = _raw_index(index)
        try:
            out = a[index]
        except IndexError as e:  # also an IndexError, so iteration over a tensor stops at its end
            raise IndexOutOfRangeError(f"indexing a tensor of shape {a.shape}: {e}") from None
        ctx.shape, ctx.index = a.shape, index
        return np.asarray(out)

    @staticmethod
    def backward(ctx, grad_output):
        return slots.getitem_backward(grad_output, ctx.shape, ctx.index)


class Gather(Function):
    """``torch.gather``: out has ``index``'s shape, out[i, j] = a[index[i, j], j] (axis 0) or
    a[i, index[i, j]] (axis 1); ``index`` may be smaller than ``a`` on every other axis (never
    larger) and is not broadcast, unlike ``np.take_along_axis``."""

    @staticmethod
    def forward(ctx, a, axis, index):
        if not np.issubdtype(index.dtype, np.integer):
            raise ShapeError(f"gather: index must hold integers, got dtype {index.dtype}")
        if index.ndim != a.ndim:
            raise ShapeError(f"gather: index has {index.ndim} dims ({index.shape}), input has {a.ndim} ({a.shape})")
        axis = check_axis("gather", axis, a.shape)
        if any(i > n for d, (i, n) in enumerate(zip(index.shape, a.shape)) if d != axis):
            raise ShapeError(f"gather along axis {axis}: index {index.shape} is larger than input {a.shape} "
                             f"on another axis (each index size must be <= the input's, except on axis {axis})")
        n = a.shape[axis]
        if index.size and (index.min() < 0 or index.max() >= n):
            bad = index[(index < 0) | (index >= n)].flat[0]
            raise IndexOutOfRangeError(f"gather: index {bad} is out of range for axis {axis} of size {n} "
                                       f"(shape {a.shape})")
        ctx.shape, ctx.axis, ctx.index = a.shape, axis, index
        return a[gather_index(index, axis)]

    @staticmethod
    def backward(ctx, grad_output):
        return slots.gather_backward(grad_output, ctx.shape, ctx.axis, ctx.index)


def gather_index(index, axis):
    """The NumPy index that picks torch.gather's elements: ``index`` on ``axis``, and on every other
    axis d the position along d (a broadcasting ``arange``), so nothing is broadcast beyond index."""
    grids = [np.arange(n).reshape((1,) * d + (n,) + (1,) * (index.ndim - d - 1))
             for d, n in enumerate(index.shape)]
    grids[axis] = index
    return tuple(grids)


def _join(join, arrays, axis, op, problem):
    """``join(arrays, axis=axis)`` (``np.concatenate`` or ``np.stack``); where NumPy refuses, a
    ShapeError that starts with ``op`` and shows every shape."""
    try:
        return join(arrays, axis=axis)
    except ValueError:
        raise ShapeError(f"{op}: shapes {[x.shape for x in arrays]} {problem}") from None


class Cat(Function):
    @staticmethod
    def forward(ctx, *arrays, axis=0):
        out = _join(np.concatenate, arrays, axis, f"cat along axis {axis}", "do not fit")
        ctx.axis, ctx.sizes = axis, [x.shape[axis] for x in arrays]
        return out

    @staticmethod
    def backward(ctx, grad_output):
        cuts = np.cumsum(ctx.sizes)[:-1]
        return tuple(np.split(grad_output, cuts, axis=ctx.axis))


class Stack(Function):
    @staticmethod
    def forward(ctx, *arrays, axis=0):
        out = _join(np.stack, arrays, axis, "stack", "are not all equal")
        ctx.axis, ctx.n = axis, len(arrays)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(np.moveaxis(grad_output, ctx.axis, 0)[i] for i in range(ctx.n))


def cat(tensors, axis=0):
    """Concatenate tensors along an existing axis (torch.cat)."""
    tensors = [as_tensor(t, tensors) for t in tensors]
    return Cat.apply(*tensors, axis=axis)


def stack(tensors, axis=0):
    """Stack equally-shaped tensors along a new axis (torch.stack)."""
    tensors = [as_tensor(t, tensors) for t in tensors]
    return Stack.apply(*tensors, axis=axis)


def where(cond, a, b):
    """``a`` where ``cond`` (a boolean array, no gradient) holds, else ``b``; both differentiable."""
    return Where.apply(cond, a, b)
