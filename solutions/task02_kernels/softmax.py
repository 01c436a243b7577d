"""Task 2.1: numerically stable softmax and log-softmax, forward and backward.

Softmax turns scores into probabilities along one axis:

    softmax(x)ᵢ = exp(xᵢ) / Σⱼ exp(xⱼ)

In floating point this formula breaks: exp(1e4) is ``inf`` (float64 overflows above ~709, float32
above ~88) and inf / inf is NaN. Subtracting any constant m from every xⱼ leaves the result
unchanged (the factor exp(−m) cancels), so take m = maxⱼ xⱼ: then every exponent is ≤ 0, the
largest term is exp(0) = 1, and the sum lies in [1, n] — no overflow, no division by zero.

    log softmax(x)ᵢ = xᵢ − m − log Σⱼ exp(xⱼ − m)        (never take log of a softmax: log(0) = −inf)

Backward. Let p = softmax(x) and g = dL/dp the upstream gradient. The Jacobian is
∂pⱼ/∂xᵢ = pⱼ(δᵢⱼ − pᵢ), so

    dL/dxᵢ = Σⱼ gⱼ pⱼ (δᵢⱼ − pᵢ) = pᵢ (gᵢ − Σⱼ gⱼ pⱼ)

For out = log softmax(x), ∂outⱼ/∂xᵢ = δᵢⱼ − pᵢ with p = exp(out), so

    dL/dxᵢ = gᵢ − pᵢ Σⱼ gⱼ

Never build the (n × n) Jacobian: both formulas are one reduction along ``axis``.

All arguments are ``np.ndarray``; ``axis`` is an int (negative allowed). Keep the input's dtype
(float32 in, float32 out). Library use: this is the NumPy side of ``F.softmax`` / ``F.log_softmax``
(``autograd/kernels/softmax.py``), which both backends run by default — NumPy's SIMD ``exp`` beats
the numba row kernels.
"""
import numpy as np


def softmax_forward(x, axis=-1):
    """Task 2.1: p = softmax(x) along ``axis``, computed stably (subtract the max first).

    x: any shape; returns p with x's shape and dtype, each slice along ``axis`` summing to 1.
    Hint: ``x.max(axis=axis, keepdims=True)`` keeps the reduced axis so it broadcasts back.
    Tests check: values against a float64 reference; rows like [1e4, 0, −1e4] (no overflow,
    no NaN); any axis of a 3-D array; float32 stays float32.
    """
    # BEGIN SOLUTION
    shifted = x - x.max(axis=axis, keepdims=True)  # every exponent ≤ 0
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
    # END SOLUTION


def softmax_backward(grad_output, out, axis=-1):
    """Task 2.1: given out = softmax(x) (saved by the forward) and grad_output = dL/dout (same
    shape), return dL/dx = out · (grad_output − Σ_axis grad_output·out).

    Tests check: against central differences of the reference softmax with a random upstream
    gradient (a constant upstream gradient gives exactly 0 and would hide mistakes), any axis.
    """
    # BEGIN SOLUTION
    dot = (grad_output * out).sum(axis=axis, keepdims=True)  # Σⱼ gⱼ pⱼ
    return out * (grad_output - dot)
    # END SOLUTION


def log_softmax_forward(x, axis=-1):
    """Task 2.1: log softmax(x) = x − m − log Σ exp(x − m), m = max along ``axis``.

    Returns an array with x's shape and dtype. Do not compute ``np.log(softmax(x))``: a
    probability that underflows to 0 gives −inf. Tests check: values; [1e4, 0, −1e4] gives
    [0, −1e4, −2e4] (finite); exp(result) sums to 1.
    """
    # BEGIN SOLUTION
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    # END SOLUTION


def log_softmax_backward(grad_output, out, axis=-1):
    """Task 2.1: given out = log softmax(x) and grad_output = dL/dout, return
    dL/dx = grad_output − exp(out) · Σ_axis grad_output.

    Tests check: against central differences of the reference with a random upstream gradient.
    """
    # BEGIN SOLUTION
    return grad_output - np.exp(out) * grad_output.sum(axis=axis, keepdims=True)
    # END SOLUTION
