"""Task 2.4: fused scale + mask + softmax for attention scores, forward and backward, in numba.

Attention (Vaswani et al. 2017, §3.2.1) turns raw scores S = Q·Kᵀ into weights

    P[b, h, i, :] = softmax over the allowed keys j of  s·S[b, h, i, j],     s = 1/√d_head

where ``mask[b, h, i, j]`` is True when query i **may attend** to key j (causal: j ≤ i; padding:
key j is a real token). Masked keys get weight exactly 0. Composed from primitives this is four
passes over a (B, H, Tq, Tk) array (scale, fill, softmax's max/exp/sum, divide), each writing a
temporary; fused it is one pass per row with nothing stored but P.

Per row (b, h, i), with A = {j : mask[b, h, i, j]} the allowed keys:

    zⱼ = s·S[b, h, i, j]        m = max_{j∈A} zⱼ
    P[b, h, i, j] = exp(zⱼ − m) / Σ_{k∈A} exp(z_k − m)   for j ∈ A,   0 otherwise

**A fully masked row** (A empty — e.g. a padded query in some layouts, or a prefix of length 0)
has no distribution at all. The usual trick of filling masked scores with −1e9 gives a *uniform*
row (every entry equal), and −inf gives NaN (−inf − (−inf)); we return **all zeros** and a zero
gradient. Detect it explicitly (no allowed key) instead of relying on a magic constant.

Backward (Task 2.1's softmax rule, then the chain rule through z = s·S), with G = dL/dP:

    dL/dS[b, h, i, j] = s · P[b, h, i, j] · (G[b, h, i, j] − Σ_k G[b, h, i, k]·P[b, h, i, k])

Masked entries and fully masked rows have P = 0, so their gradient is 0 automatically.

The two kernels are plain Python made fast by ``numba.njit(parallel=True, cache=True)`` applied
below; the wrappers (given) accept scores of any rank and a mask that broadcasts to them.
"""
import math

import numba
import numpy as np

from autograd.errors import ShapeError


def attention_softmax_forward_kernel(out, scores, mask, scale):
    """Task 2.4: out[b, h, i, :] = masked softmax of scale·scores[b, h, i, :] (see the module).

    scores, out: (B, H, Tq, Tk) float32/float64, C-contiguous; mask: (B, H, Tq, Tk) bool, possibly a
    read-only broadcast view (index it, never write it); scale: a float. Write every entry of
    ``out`` (it starts uninitialised). Return nothing.

    Hints: ``for bh in numba.prange(B * H)`` then b, h = divmod(bh, H); per row: one pass for the
    max over allowed keys (and whether there is any), one for exp and the sum, one to normalise.
    Use ``math.exp``. A row with no allowed key is all zeros.

    Tests check: against a NumPy reference for causal and padding masks, Tq ≠ Tk, scale ≠ 1;
    masked entries exactly 0; a fully masked row gives zeros (not NaN, not uniform 1/Tk);
    scores of ±1e4 stay finite; float32 and float64.
    """
    # BEGIN SOLUTION
    B, H, Tq, Tk = scores.shape
    for bh in numba.prange(B * H):
        b, h = bh // H, bh % H
        for i in range(Tq):
            any_allowed = False
            m = 0.0
            for j in range(Tk):  # pass 1: the max of the allowed scaled scores
                if mask[b, h, i, j]:
                    z = scores[b, h, i, j] * scale
                    if not any_allowed or z > m:
                        m = z
                    any_allowed = True
            if not any_allowed:  # nothing to attend to: a row of zeros, not NaN or uniform
                for j in range(Tk):
                    out[b, h, i, j] = 0.0
                continue
            total = 0.0
            for j in range(Tk):  # pass 2: exponentiate (≤ exp(0) = 1) and sum
                if mask[b, h, i, j]:
                    e = math.exp(scores[b, h, i, j] * scale - m)
                    out[b, h, i, j] = e
                    total += e
                else:
                    out[b, h, i, j] = 0.0
            inv = 1.0 / total  # total ≥ 1: the max itself contributes exp(0)
            for j in range(Tk):  # pass 3: normalise
                out[b, h, i, j] *= inv
    # END SOLUTION


def attention_softmax_backward_kernel(grad_scores, grad_output, out, scale):
    """Task 2.4: grad_scores = scale · out · (grad_output − Σ_k grad_output·out) row by row.

    grad_scores, grad_output, out: (B, H, Tq, Tk), C-contiguous, one float dtype; ``out`` is the
    forward's result P (0 on masked entries). Write every entry of ``grad_scores``. Return nothing.

    Tests check: against central differences of the reference (float64, random upstream gradient,
    scale ≠ 1 — forgetting the scale in the backward fails); fully masked rows get zero gradient.
    """
    # BEGIN SOLUTION
    B, H, Tq, Tk = out.shape
    for bh in numba.prange(B * H):
        b, h = bh // H, bh % H
        for i in range(Tq):
            dot = 0.0
            for j in range(Tk):
                dot += grad_output[b, h, i, j] * out[b, h, i, j]
            for j in range(Tk):
                grad_scores[b, h, i, j] = scale * out[b, h, i, j] * (grad_output[b, h, i, j] - dot)
    # END SOLUTION


_forward_kernel = numba.njit(parallel=True, cache=True)(attention_softmax_forward_kernel)
_backward_kernel = numba.njit(parallel=True, cache=True)(attention_softmax_backward_kernel)


def _four_d(shape):
    """The (B, H, Tq, Tk) view of scores of any rank: pad with leading 1s, or fold extra leading axes."""
    if len(shape) <= 4:
        return (1,) * (4 - len(shape)) + tuple(shape)
    return (math.prod(shape[:-3]),) + tuple(shape[-3:])


def scaled_masked_softmax_forward(scores, mask, scale):
    """Task 2.4 (given — the lesson is the kernel): P = masked softmax(scale · scores).

    scores (..., Tq, Tk) float32/float64; mask: bool, broadcastable to scores (True = may attend),
    or None (attend everywhere); scale: float (1/√d_head). Returns P with scores' shape and dtype.
    """
    scores = np.asarray(scores)
    shape = scores.shape
    if mask is None:
        mask = np.ones((1,) * scores.ndim, dtype=bool)
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ShapeError(f"scaled_masked_softmax: mask must be boolean (True = may attend), got {mask.dtype}")
    try:
        mask = np.broadcast_to(mask, shape)
    except ValueError:
        raise ShapeError(f"scaled_masked_softmax: mask {mask.shape} does not broadcast to "
                         f"scores {shape}") from None
    s4 = np.ascontiguousarray(scores.reshape(_four_d(shape)))  # (B, H, Tq, Tk)
    m4 = mask.reshape(_four_d(shape))  # a view where possible (stride 0 on broadcast axes)
    out = np.empty_like(s4)
    _forward_kernel(out, s4, m4, float(scale))
    return out.reshape(shape)


def scaled_masked_softmax_backward(grad_output, out, scale):
    """Task 2.4 (given): dL/dscores from dL/dP (``grad_output``) and P (``out``), any rank."""
    shape = out.shape
    g4 = np.ascontiguousarray(np.asarray(grad_output, dtype=out.dtype).reshape(_four_d(shape)))
    p4 = np.ascontiguousarray(out.reshape(_four_d(shape)))
    grad = np.empty_like(p4)
    _backward_kernel(grad, g4, p4, float(scale))
    return grad.reshape(shape)
