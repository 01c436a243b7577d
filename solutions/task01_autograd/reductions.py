"""Task 1.3: the backward of reductions (sum, mean, max) and of data movement
(reshape, transpose, indexing, gather).

Reductions shrink: the gradient must be *expanded* back. ``out = a.sum(axis)`` uses every
``a[i]`` once, so ``dL/da[i] = dL/dout[j]`` for the ``j`` it was summed into: put back the reduced
axes (if ``keepdims`` was False) and broadcast to ``a``'s shape. ``mean`` divides by the count;
``max`` sends the gradient only to the entries that were the maximum (split equally among ties,
so the gradient sums to the same total).

Movement ops only re-arrange numbers, so backward re-arranges the gradient the other way: reshape
back, transpose by the inverse permutation, and for indexing *scatter-add* into zeros — with
integer arrays an element can be picked twice, and then it must receive both gradients
(``np.add.at``, not ``g[index] = ...``).

``axis`` may be None (all axes), an int (negative allowed) or a tuple of ints.
"""
import numpy as np


def normalize_axis(axis, ndim):
    """None → all axes; int or tuple → a sorted tuple of non-negative axes. (Not a task.)"""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(sorted(ax % ndim for ax in axis))


def sum_backward(grad_output, shape, axis, keepdims):
    """Task 1.3: out = a.sum(axis, keepdims); ``shape`` is a's shape. Return dL/da (shape ``shape``)."""
    # BEGIN SOLUTION
    axes = normalize_axis(axis, len(shape))
    if not keepdims:
        grad_output = np.expand_dims(grad_output, axes)
    return np.broadcast_to(grad_output, shape).copy()
    # END SOLUTION


def mean_backward(grad_output, shape, axis, keepdims):
    """Task 1.3: out = a.mean(axis, keepdims). Each input counts 1/N, N = number of elements
    averaged into one output. Return dL/da."""
    # BEGIN SOLUTION
    axes = normalize_axis(axis, len(shape))
    count = int(np.prod([shape[ax] for ax in axes])) if axes else 1
    if not keepdims:
        grad_output = np.expand_dims(grad_output, axes)
    return np.broadcast_to(grad_output / np.asarray(count, grad_output.dtype), shape).copy()
    # END SOLUTION


def max_backward(grad_output, a, out, axis, keepdims):
    """Task 1.3: out = a.max(axis, keepdims). The gradient goes to the maximal entries only;
    when several entries tie for the maximum, split it equally among them. Return dL/da."""
    # BEGIN SOLUTION
    axes = normalize_axis(axis, a.ndim)
    if not keepdims:
        grad_output = np.expand_dims(grad_output, axes)
        out = np.expand_dims(out, axes)
    winners = (a == out)
    count = winners.sum(axis=axes, keepdims=True)
    return (winners * (grad_output / count)).astype(a.dtype, copy=False)
    # END SOLUTION


def reshape_backward(grad_output, shape):
    """Task 1.3: out = a.reshape(new_shape); ``shape`` is a's shape. Return dL/da."""
    # BEGIN SOLUTION
    return grad_output.reshape(shape)
    # END SOLUTION


def transpose_backward(grad_output, axes):
    """Task 1.3: out = a.transpose(axes) (axes None = reversed). Return dL/da: transpose by the
    inverse permutation (``np.argsort(axes)``)."""
    # BEGIN SOLUTION
    if axes is None:
        return grad_output.transpose()
    return grad_output.transpose(np.argsort(axes))
    # END SOLUTION


def getitem_backward(grad_output, shape, index):
    """Task 1.3: out = a[index] for any NumPy index (slices, ints, integer arrays, boolean masks).
    Return dL/da: zeros of ``shape`` with grad_output scattered back, **accumulating** where an
    integer-array index picks the same element more than once."""
    # BEGIN SOLUTION
    grad = np.zeros(shape, dtype=grad_output.dtype)
    np.add.at(grad, index, grad_output)
    return grad
    # END SOLUTION


def gather_backward(grad_output, shape, axis, index):
    """Task 1.3: out = np.take_along_axis(a, index, axis) (torch.gather). Return dL/da: scatter-add
    grad_output into zeros of ``shape`` at the gathered places (repeats accumulate)."""
    # BEGIN SOLUTION
    axis = axis % len(shape)
    grids = list(np.ogrid[tuple(slice(n) for n in index.shape)])     # position along every axis...
    grids[axis] = index                                               # ...but the gathered one
    flat = np.ravel_multi_index(tuple(grids), shape)                  # index.shape: where each came from
    # np.bincount adds the weights that land on one position in order, the sum np.add.at(grad, grids,
    # grad_output) makes, several times faster (it matters: DeBERTa gathers twice per attention layer)
    grad = np.bincount(flat.ravel(), weights=grad_output.ravel(), minlength=int(np.prod(shape)))
    return grad.reshape(shape).astype(grad_output.dtype, copy=False)
    # END SOLUTION
