"""Task 1.5: check analytic gradients against central differences.

For a function f of tensors x₁ … xₙ returning a tensor y, pick a **random** upstream gradient
u (y's shape) and compare, for every element x[i] of every input that requires grad,

    analytic:  (∂/∂x[i]) Σ u·f(x)     — from  y.backward(u)
    numeric:   (Σ u·f(x + ε eᵢ) − Σ u·f(x − ε eᵢ)) / 2ε

in float64. Why random u and not ``y.sum()``? With u = 1 the gradients of softmax and layer norm
are exactly zero (their outputs sum to a constant), so a wrong backward would still "pass".

Compare with a mixed tolerance: ``|analytic − numeric| ≤ atol + rtol·|numeric|``. On failure raise
``GradcheckError`` naming the input (its position), the element index, the expected (numeric)
and the received (analytic) value.
"""
import numpy as np

from autograd.errors import GradcheckError, MiniLMError
from autograd.tensor import Tensor


def _evaluate(fn, inputs, upstream):
    """Σ upstream · fn(inputs) as a float (no graph needed)."""
    from autograd.tensor import no_grad
    with no_grad():
        out = fn(*inputs)
    return float(np.sum(upstream * out.data))


def gradcheck(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-3, rng=None):
    """Task 1.5: return True if every input's analytic gradient matches central differences,
    else raise GradcheckError (see the module docstring).

    ``inputs`` are Tensors; only those with ``requires_grad`` are checked, and they must be float64
    (a float32 check is meaningless at eps=1e-6). ``rng`` makes the upstream gradient reproducible.
    """
    for k, x in enumerate(inputs):
        if isinstance(x, Tensor) and x.requires_grad and x.dtype != np.float64:
            raise MiniLMError(f"gradcheck: input {k} has dtype {x.dtype}; use float64 tensors")
    rng = np.random.default_rng(0) if rng is None else rng
    raise NotImplementedError("Task 1.5: gradcheck")
