"""``Function``: one differentiable operation, its forward and backward side by side.

Every primitive subclasses :class:`Function` and writes two static methods on plain NumPy arrays::

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):             # a, b: np.ndarray
            ctx.save_for_backward(a, b)
            return a * b
        @staticmethod
        def backward(ctx, grad_output):     # grad_output: dL/d(out), out's shape
            a, b = ctx.saved_tensors
            return grad_output * b, grad_output * a   # dL/da, dL/db (un-broadcast: Task 1.2)

``Mul.apply(x, y)`` unwraps tensors, runs ``forward`` and, when some input requires a gradient and
gradients are enabled, records a :class:`~autograd.tensor.Node` on the output so that
``backward()`` can call ``Mul.backward`` later. Keyword arguments to ``apply`` are non-tensor
options (an axis, a shape) and reach ``forward`` unchanged.
"""
from __future__ import annotations

import numpy as np

from . import tensor as _t


class Context:
    """Scratch space shared by one forward call and its backward call."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()

    def save_for_backward(self, *arrays):
        self.saved_tensors = arrays


class Function:
    @staticmethod
    def forward(ctx, *args, **kwargs):  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **options):
        tensors = [as_tensor(x, like=inputs) for x in inputs]
        needs = tuple(t.requires_grad for t in tensors)
        track = _t.is_grad_enabled() and any(needs)
        ctx = Context(needs)
        out = cls.forward(ctx, *(t.data for t in tensors), **options)
        result = _t.Tensor(out)
        if track:
            result.requires_grad = True
            result._ctx = _t.Node(cls, ctx, tuple(tensors))
        return result


def as_tensor(x, like=()) -> "_t.Tensor":
    """Wrap ``x`` as a Tensor. A number — a Python or NumPy scalar, or a 0-d array of bools,
    integers or floats — takes the floating dtype of the first floating tensor among ``like``, so
    ``x * 0.5``, ``x * np.int64(2)`` and ``x / mask.sum()`` keep float32 (PyTorch's rule for
    scalars; NumPy would promote to float64)."""
    if isinstance(x, _t.Tensor):
        return x
    if _is_number(x):
        for other in like:
            if isinstance(other, _t.Tensor) and np.issubdtype(other.dtype, np.floating):
                return _t.Tensor(np.asarray(x, dtype=other.dtype))
    return _t.Tensor(x)


def _is_number(x) -> bool:
    if isinstance(x, (bool, int, float)):
        return True
    if isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0:
        return np.asarray(x).dtype.kind in "biuf"
    return False
