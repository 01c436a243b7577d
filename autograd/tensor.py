"""The Tensor: an ``np.ndarray`` plus what reverse-mode differentiation needs.

A tensor made by an operation remembers a :class:`Node` — the ``Function`` that made it, that
function's saved state (``ctx``) and its input tensors (``parents``). ``loss.backward()`` walks these
nodes from the loss back to the leaves (Task 1.1) and leaves ``.grad`` on every leaf that asked for
one. Gradients *accumulate*: a tensor used twice receives the sum of both contributions.

Letters used in shape comments across the engine: B batch, T time, C channels, V vocabulary.
"""
from __future__ import annotations

import contextlib
import os

# Before NumPy loads OpenBLAS (this is the engine's first NumPy import): let OpenBLAS's idle
# threads sleep after ~2¹² cycles instead of busy-waiting for ~2²⁸, which would keep a core from
# the numba kernels that run between two products. kernels/runtime.py explains; MINILM_TUNE=0
# leaves it alone, and so does any value you set yourself.
if os.environ.get("MINILM_TUNE", "1").strip() != "0":
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "12")

import numpy as np  # noqa: E402

from . import tasks
from .errors import IndexOutOfRangeError, MiniLMError, ShapeError

# Task 1.1: solutions/task01_autograd/backward.py
_run_backward = tasks.bind("task01_autograd.backward", "backward")

_grad_enabled = True


@contextlib.contextmanager
def no_grad():
    """Inside this block operations record no graph (evaluation, optimiser updates)."""
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, False
    try:
        yield
    finally:
        _grad_enabled = previous


@contextlib.contextmanager
def enable_grad():
    """Inside this block operations record a graph again, even within ``no_grad`` (a readout that
    fine-tunes a copy of the model while an evaluation runs)."""
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, True
    try:
        yield
    finally:
        _grad_enabled = previous


def is_grad_enabled() -> bool:
    return _grad_enabled


class Node:
    """How a non-leaf tensor was made: ``function.backward(ctx, grad_output)`` gives one gradient
    per parent (``None`` where a parent needs none)."""

    __slots__ = ("function", "ctx", "parents")

    def __init__(self, function, ctx, parents):
        self.function, self.ctx, self.parents = function, ctx, parents

    def backward(self, grad_output: np.ndarray) -> tuple:
        grads = self.function.backward(self.ctx, grad_output)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) != len(self.parents):
            raise MiniLMError(f"{self.function.__name__}.backward returned {len(grads)} gradients "
                              f"for {len(self.parents)} inputs")
        return grads

    def __repr__(self):
        return f"<Node {self.function.__name__}>"


class Tensor:
    """An n-dimensional array that can take part in automatic differentiation.

    ``Tensor(data, requires_grad=False)`` wraps ``np.asarray(data)`` and keeps its dtype (float32
    stays float32; Python floats become float64, as in NumPy). Python scalars in arithmetic take
    the tensor's dtype, so ``x * 0.5`` does not promote a float32 tensor.
    """

    __array_priority__ = 1000  # make ndarray <op> Tensor defer to Tensor's reflected operators

    def __init__(self, data, requires_grad: bool = False, dtype=None):
        if isinstance(data, Tensor):
            data = data.data
        self.data = np.asarray(data, dtype=dtype)
        if requires_grad and not np.issubdtype(self.data.dtype, np.floating):
            raise MiniLMError(f"only floating-point tensors can require gradients, got dtype {self.data.dtype}")
        self.requires_grad = bool(requires_grad)
        self.grad: np.ndarray | None = None
        self._ctx: Node | None = None  # None for a leaf

    # ---- basic facts -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self.data)

    def __iter__(self):
        """Rows along the first axis, each a tensor (``t[0]``, ``t[1]``, ...), as PyTorch."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self.data)))

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(t)`` is ``t.data`` (no copy unless asked), as ``np.asarray`` of a torch tensor."""
        if copy:
            return np.array(self.data, dtype=dtype, copy=True)
        return self.data if dtype is None else self.data.astype(dtype, copy=False)

    def __repr__(self):
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({np.array2string(self.data, precision=4, threshold=20)}, dtype={self.dtype}{grad})"

    def numpy(self) -> np.ndarray:
        """The underlying array (no copy). Treat it as read-only."""
        return self.data

    def item(self):
        return self.data.item()

    def detach(self) -> "Tensor":
        """The same data, cut off from the graph: no gradient flows through the result."""
        return Tensor(self.data)

    def zero_grad(self) -> None:
        self.grad = None

    # ---- backward ----------------------------------------------------------------------------
    def backward(self, grad=None) -> None:
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires a gradient.

        With no argument, ``self`` must hold a single value (a loss); otherwise pass the upstream
        gradient ``grad`` with ``self``'s shape.
        """
        if not self.requires_grad:
            raise MiniLMError("backward() on a tensor that does not require grad: no input of the "
                              "computation had requires_grad=True (or it ran under no_grad())")
        if grad is None:
            if self.data.size != 1:
                raise ShapeError(f"backward() without a gradient needs a single-value tensor, got shape "
                                 f"{self.shape}: pass grad= with that shape, or reduce first (e.g. .sum())")
            grad = np.ones_like(self.data)
        else:
            grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad, dtype=self.dtype)
            if grad.shape != self.shape:
                raise ShapeError(f"backward(grad): grad has shape {grad.shape}, tensor has shape {self.shape}")
        _run_backward(self, grad)

    # ---- operators (the Function classes live in elementwise.py, reductions.py, movement.py, linalg.py) --------------------------------
    def __add__(self, other): return F.Add.apply(self, other)
    def __radd__(self, other): return F.Add.apply(other, self)
    def __sub__(self, other): return F.Sub.apply(self, other)
    def __rsub__(self, other): return F.Sub.apply(other, self)
    def __mul__(self, other): return F.Mul.apply(self, other)
    def __rmul__(self, other): return F.Mul.apply(other, self)
    def __truediv__(self, other): return F.Div.apply(self, other)
    def __rtruediv__(self, other): return F.Div.apply(other, self)
    def __neg__(self): return F.Neg.apply(self)
    def __matmul__(self, other): return F.MatMul.apply(self, other)
    def __rmatmul__(self, other): return F.MatMul.apply(other, self)
    def __getitem__(self, index): return F.GetItem.apply(self, index=index)

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor):
            raise MiniLMError("tensor ** tensor is not supported: use exp(log(a) * b)")
        return F.Pow.apply(self, exponent=_number("**", exponent, "exponent"))

    def __rpow__(self, base):  # base ** tensor for a constant number base, e.g. 2 ** x
        return F.RPow.apply(self, base=_number("**", base, "base"))

    # comparisons give plain boolean arrays: they have no gradient
    def __lt__(self, other): return self.data < _raw(other)
    def __le__(self, other): return self.data <= _raw(other)
    def __gt__(self, other): return self.data > _raw(other)
    def __ge__(self, other): return self.data >= _raw(other)

    __hash__ = object.__hash__  # tensors are graph nodes: identity, not value, decides equality

    # ---- methods ------------------------------------------------------------------------------
    def exp(self): return F.Exp.apply(self)
    def log(self): return F.Log.apply(self)
    def tanh(self): return F.Tanh.apply(self)
    def relu(self): return F.ReLU.apply(self)
    def sigmoid(self): return F.Sigmoid.apply(self)
    def sqrt(self): return F.Pow.apply(self, exponent=0.5)

    def sum(self, axis=None, keepdims=False): return F.Sum.apply(self, axis=axis, keepdims=keepdims)
    def mean(self, axis=None, keepdims=False): return F.Mean.apply(self, axis=axis, keepdims=keepdims)
    def max(self, axis=None, keepdims=False): return F.Max.apply(self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, keepdims=False):
        """Biased variance (divides by N), as layer norm uses it."""
        centred = self - self.mean(axis=axis, keepdims=True)
        return (centred * centred).mean(axis=axis, keepdims=keepdims)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return F.Reshape.apply(self, shape=shape)

    def view(self, *shape): return self.reshape(*shape)

    def transpose(self, *axes):
        """``t.transpose()`` reverses the axes; ``t.transpose(0, 2, 1)`` permutes them; with two
        integers on a tensor of any other rank, ``t.transpose(1, 2)`` swaps those two (PyTorch's). On a
        2-D tensor two integers are a permutation, so ``transpose(0, 1)`` is the identity: use ``.T``
        (docs/engine.md lists this among the differences from PyTorch). Axes never wrap around."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if len(axes) == 2 and self.ndim != 2:
            perm = list(range(self.ndim))
            a, b = (check_axis("transpose", ax, self.shape) for ax in axes)
            perm[a], perm[b] = perm[b], perm[a]
            axes = tuple(perm)
        return F.Transpose.apply(self, axes=axes if axes else None)

    def permute(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return F.Transpose.apply(self, axes=axes)

    @property
    def T(self):
        return F.Transpose.apply(self, axes=None)

    def masked_fill(self, mask, value):
        """A copy with ``value`` wherever the boolean ``mask`` (broadcastable) is True."""
        mask = np.asarray(_raw(mask), dtype=bool)
        return F.Where.apply(mask, Tensor(np.asarray(value, dtype=self.dtype)), self)

    def gather(self, axis, index):
        """``out[..., i, ...] = self[..., index[..., i, ...], ...]`` along ``axis`` (torch.gather)."""
        return F.Gather.apply(self, axis=axis, index=np.asarray(_raw(index)))


def _raw(x):
    return x.data if isinstance(x, Tensor) else x


def _number(op: str, x, what: str) -> float:
    """A constant operand that must be one number (a Python or NumPy scalar, or a 0-d array)."""
    if np.ndim(x) != 0:
        raise MiniLMError(f"{op}: the {what} must be a single number (or use a tensor op), got shape {np.shape(x)}")
    return float(x)


def check_axis(op: str, axis, shape) -> int:
    """``axis`` as a non-negative int, or IndexOutOfRangeError outside [-ndim, ndim) (NumPy would wrap)."""
    ndim = len(shape)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ShapeError(f"{op}: axis {axis!r} must be an integer")
    if not -ndim <= axis < ndim:
        raise IndexOutOfRangeError(f"{op}: axis {axis} is out of range for a tensor of shape {tuple(shape)} "
                                   f"(expected {-ndim} <= axis < {ndim})")
    return int(axis) % ndim


def tensor(data, requires_grad=False, dtype=None) -> Tensor:
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


from . import ops as F  # noqa: E402  (the ops need Tensor; Tensor's operators need the ops)
