"""Elementwise primitives. Forward is one NumPy expression; backward is Task 1.2.

Binary operations broadcast like NumPy, so their backward must *un-broadcast*: sum the incoming
gradient over the axes that broadcasting stretched, giving each input a gradient of its own shape.

Where two or more ops differ only in their NumPy function and their slot, a small base class runs
the two and each op states them, forward beside backward: ``_AddSub`` (a ± b, whose gradient needs
only the shapes) and ``_UnaryFromOutput`` (eᵃ, tanh, σ, whose derivative is written with the
output). Every other op writes its forward and backward out, with what it keeps for the backward.
"""
import numpy as np

from . import tasks
from .errors import ShapeError
from .function import Function, as_tensor
from .tensor import Tensor  # defined before tensor.py's last line imports the ops (and so this file)

slots = tasks.slots("task01_autograd.elementwise")  # Task 1.2: solutions/task01_autograd/elementwise.py
unbroadcast = slots.unbroadcast  # also used by fused.py


def shape_only(a: np.ndarray) -> np.ndarray:
    """A stand-in for ``a`` when a backward needs only its shape and dtype: zeros that take no
    memory (every element is the same 0-d array, stride 0). Saving the stand-in instead of ``a``
    lets ``a`` be freed once the forward no longer needs it — in a Transformer, the output of
    every ``x @ W`` before its bias is added."""
    return np.broadcast_to(np.zeros((), dtype=a.dtype), a.shape)


def broadcast_shape(op: str, *shapes) -> tuple:
    """The broadcast result shape, or a ShapeError that names both shapes."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(f"{op}: shapes {' and '.join(map(str, shapes))} do not broadcast") from None


def promote(a, b):
    """PyTorch's rule across kinds: an integer or boolean tensor meeting a floating one takes the
    floating dtype (it has no gradient to lose), so float32 stays float32 (NumPy: float64)."""
    fa, fb = (np.issubdtype(t.dtype, np.floating) for t in (a, b))
    if fa and not fb and b.dtype.kind in "biu":
        b = Tensor(b.data.astype(a.dtype))
    elif fb and not fa and a.dtype.kind in "biu":
        a = Tensor(a.data.astype(b.dtype))
    return a, b


class _Binary(Function):
    name = "?"

    @classmethod
    def apply(cls, a, b):
        a, b = promote(as_tensor(a, (a, b)), as_tensor(b, (a, b)))
        broadcast_shape(cls.name, a.shape, b.shape)
        return super().apply(a, b)


class _AddSub(_Binary):
    """a ± b: dL/da = g and dL/db = ±g, each un-broadcast to its input's shape. The gradient needs
    only the shapes, so the forward keeps zero-memory stand-ins (``shape_only``), not a and b."""

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(shape_only(a), shape_only(b))
        return cls.forward_fn(a, b)

    @classmethod
    def backward(cls, ctx, grad_output):
        return cls.backward_slot(grad_output, *ctx.saved_tensors)


class Add(_AddSub):
    name = "add"
    forward_fn = np.add                     # a + b
    backward_slot = slots.add_backward      # dL/da = g, dL/db = g


class Sub(_AddSub):
    name = "sub"
    forward_fn = np.subtract                # a − b
    backward_slot = slots.sub_backward      # dL/da = g, dL/db = −g


class Mul(_Binary):
    name = "mul"

    @staticmethod
    def forward(ctx, a, b):
        # d(ab)/da = b and d(ab)/db = a: keep a only if b needs a gradient, and vice versa
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else shape_only(a), b if need_a else shape_only(b))
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        return slots.mul_backward(grad_output, *ctx.saved_tensors)


class Div(_Binary):
    name = "div"

    @staticmethod
    def forward(ctx, a, b):
        # d(a/b)/da = 1/b, d(a/b)/db = −a/b²: a is needed only for b's gradient
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else shape_only(a), b)
        return a / b

    @staticmethod
    def backward(ctx, grad_output):
        return slots.div_backward(grad_output, *ctx.saved_tensors)


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output


class Pow(Function):
    """``a ** p`` for a constant exponent p."""

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        return a ** np.asarray(exponent, dtype=a.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (a,) = ctx.saved_tensors
        if ctx.exponent == 0:  # a ** 0 is the constant 1: gradient 0, even at a = 0 (0 · 0⁻¹ is NaN)
            return np.zeros_like(grad_output)
        return slots.pow_backward(grad_output, a, ctx.exponent)


class RPow(Function):
    """``base ** a`` for a constant number base (``2 ** x``): d/da = base^a · ln(base).
    At base = 0 the gradient is 0 where a >= 0 (PyTorch's convention; ln 0 = −∞ would give NaN)."""

    @staticmethod
    def forward(ctx, a, base):
        with np.errstate(invalid="ignore", divide="ignore"):  # a negative base gives NaN, as in PyTorch
            out = np.asarray(np.asarray(base, dtype=a.dtype) ** a)
        ctx.save_for_backward(a, out)
        ctx.base = base
        return out

    @staticmethod
    def backward(ctx, grad_output):
        a, out = ctx.saved_tensors
        with np.errstate(invalid="ignore", divide="ignore"):
            grad = grad_output * out * np.log(np.asarray(ctx.base, dtype=out.dtype))
        if ctx.base == 0:
            grad = np.where(a >= 0, np.zeros((), grad.dtype), grad)
        return grad


class _UnaryFromOutput(Function):
    """y = f(a) elementwise, for an f whose derivative is written with its output y:

        (eᵃ)' = y        tanh'(a) = 1 − y²        σ'(a) = y·(1 − y)

    so the forward keeps y (not a), and the backward is the Task 1.2 slot ``backward_slot(g, y)``.
    Each op states ``forward_fn`` (f on a NumPy array) and ``backward_slot``."""

    @classmethod
    def forward(cls, ctx, a):
        out = cls.forward_fn(a)
        ctx.save_for_backward(out)
        return out

    @classmethod
    def backward(cls, ctx, grad_output):
        return cls.backward_slot(grad_output, *ctx.saved_tensors)


class Exp(_UnaryFromOutput):
    forward_fn = np.exp                     # y = eᵃ
    backward_slot = slots.exp_backward      # dL/da = g·y


class Tanh(_UnaryFromOutput):
    forward_fn = np.tanh                    # y = tanh a
    backward_slot = slots.tanh_backward     # dL/da = g·(1 − y²)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    """σ(a) = 1 / (1 + e⁻ᵃ) where a ≥ 0 and eᵃ / (1 + eᵃ) where a < 0: the two branches keep
    exp() from overflowing for large |a|."""
    out = np.empty_like(a)
    pos = a >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-a[pos]))
    ea = np.exp(a[~pos])
    out[~pos] = ea / (1.0 + ea)
    return out


class Sigmoid(_UnaryFromOutput):
    forward_fn = _sigmoid                   # y = σ(a)
    backward_slot = slots.sigmoid_backward  # dL/da = g·y·(1 − y)


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, grad_output):
        return slots.log_backward(grad_output, *ctx.saved_tensors)


class LogSigmoid(Function):
    """log σ(a) = min(a, 0) − log(1 + e^−|a|), finite for any a; d/da = 1 − σ(a) = σ(−a).
    One node, so that the gradient is exact everywhere (binary cross-entropy is built on it: a
    composition through |a| would take the subgradient 0 of |a| at a = 0 and get it wrong there)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.asarray(np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a))), dtype=a.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (a,) = ctx.saved_tensors
        e = np.exp(-np.abs(a))                          # in (0, 1]: no overflow
        sig_neg = np.where(a >= 0, e / (1 + e), 1 / (1 + e))  # σ(−a)
        return (grad_output * sig_neg).astype(grad_output.dtype, copy=False)


class ReLU(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.maximum(a, 0).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_output):
        return slots.relu_backward(grad_output, *ctx.saved_tensors)


class Where(Function):
    """``where(cond, a, b)``: ``a`` where the (constant, boolean) condition holds, else ``b``."""

    @classmethod
    def apply(cls, cond, a, b):
        cond = np.asarray(cond.data if isinstance(cond, Tensor) else cond, dtype=bool)
        a, b = promote(as_tensor(a, (a, b)), as_tensor(b, (a, b)))
        broadcast_shape("where", cond.shape, a.shape, b.shape)
        return super().apply(Tensor(cond), a, b)

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        ctx.shapes = a.shape, b.shape
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, grad_output):
        (cond,) = ctx.saved_tensors
        _, need_a, need_b = ctx.needs_input_grad  # a filled-in constant needs no gradient: skip it
        zero = np.zeros((), dtype=grad_output.dtype)
        ga = unbroadcast(np.where(cond, grad_output, zero), ctx.shapes[0]) if need_a else None
        gb = unbroadcast(np.where(cond, zero, grad_output), ctx.shapes[1]) if need_b else None
        return None, ga, gb
