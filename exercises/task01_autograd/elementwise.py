"""Task 1.2: the backward of elementwise operations, with un-broadcasting.

For ``out = f(a, b)`` applied elementwise, the chain rule is elementwise too:
``dL/da = dL/dout * ∂f/∂a``. One subtlety: NumPy *broadcasts*. If ``a`` has shape (3, 1) and
``b`` has shape (4,), ``out`` has shape (3, 4): each ``a[i, 0]`` was used four times, so its
gradient is the **sum** of four entries of ``grad_output``. Un-broadcasting sums the gradient
back down to the input's shape:

1. sum over the leading axes that the input did not have (``ndim`` difference);
2. sum (keeping the axis) over every axis where the input had size 1 and the output did not.

All arguments are ``np.ndarray``. ``grad_output`` has the output's (broadcast) shape; every
function returns gradients with exactly the shapes of its inputs.
"""
import numpy as np


def unbroadcast(grad, shape):
    """Task 1.2: sum ``grad`` (the broadcast shape) down to ``shape``.

    Example: grad of shape (2, 3, 4) and shape (3, 1) → sum over axis 0 (missing leading axis),
    then over axis 2 with keepdims (size 1 in the input) → result shape (3, 1).
    Returns an array whose shape is exactly ``shape``.
    """
    raise NotImplementedError("Task 1.2: unbroadcast")


def add_backward(grad_output, a, b):
    """Task 1.2: out = a + b. Return (dL/da, dL/db), each un-broadcast to its input's shape."""
    raise NotImplementedError("Task 1.2: add_backward")


def sub_backward(grad_output, a, b):
    """Task 1.2: out = a - b. Return (dL/da, dL/db)."""
    raise NotImplementedError("Task 1.2: sub_backward")


def mul_backward(grad_output, a, b):
    """Task 1.2: out = a * b, so ∂out/∂a = b and ∂out/∂b = a. Return (dL/da, dL/db)."""
    raise NotImplementedError("Task 1.2: mul_backward")


def div_backward(grad_output, a, b):
    """Task 1.2: out = a / b, so ∂out/∂a = 1/b and ∂out/∂b = -a/b². Return (dL/da, dL/db)."""
    raise NotImplementedError("Task 1.2: div_backward")


def pow_backward(grad_output, a, exponent):
    """Task 1.2: out = a ** p for a constant float p, so ∂out/∂a = p · a^(p-1). Return dL/da."""
    raise NotImplementedError("Task 1.2: pow_backward")


def exp_backward(grad_output, out):
    """Task 1.2: out = exp(a); ∂out/∂a = exp(a) = out (saved by forward). Return dL/da."""
    raise NotImplementedError("Task 1.2: exp_backward")


def log_backward(grad_output, a):
    """Task 1.2: out = log(a); ∂out/∂a = 1/a. Return dL/da."""
    raise NotImplementedError("Task 1.2: log_backward")


def tanh_backward(grad_output, out):
    """Task 1.2: out = tanh(a); ∂out/∂a = 1 - tanh(a)² = 1 - out². Return dL/da."""
    raise NotImplementedError("Task 1.2: tanh_backward")


def sigmoid_backward(grad_output, out):
    """Task 1.2: out = σ(a) = 1/(1+e^-a); ∂out/∂a = σ(a)(1-σ(a)) = out(1-out). Return dL/da."""
    raise NotImplementedError("Task 1.2: sigmoid_backward")


def relu_backward(grad_output, a):
    """Task 1.2: out = max(a, 0); ∂out/∂a = 1 where a > 0, else 0 (we take 0 at a = 0,
    as PyTorch does). Return dL/da."""
    raise NotImplementedError("Task 1.2: relu_backward")
