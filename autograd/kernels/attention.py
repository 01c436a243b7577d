"""Fused scale + mask + softmax of attention scores: the NumPy reference beside the numba kernel.

    P[..., i, j] = exp(s·S_ij − m_i) / Σ_{k allowed} exp(s·S_ik − m_i)  where mask[..., i, j] (True =
    may attend), 0 elsewhere; a row with no allowed key is all zeros (not NaN, not uniform).
    Backward: dS = s · P ⊙ (G − Σ_k G⊙P).

The numba kernel is Task 2.4's slot (``solutions/task02_kernels/attention_softmax.py``); the NumPy
reference below is what it must match. Shapes: S, P, G (..., Tq, Tk), usually (B, H, Tq, Tk); the
boolean mask broadcasts to S (causal (Tq, Tk), padding (B, 1, 1, Tk), ...).
"""
import numpy as np

from .. import tasks

# Task 2.4: solutions/task02_kernels/attention_softmax.py — the numba kernels
_T24 = "task02_kernels.attention_softmax"
scaled_masked_softmax_forward_numba = tasks.bind(_T24, "scaled_masked_softmax_forward")
scaled_masked_softmax_backward_numba = tasks.bind(_T24, "scaled_masked_softmax_backward")


def scaled_masked_softmax_forward_numpy(scores, mask, scale):
    """The reference: fill masked scores with −inf, guard the max of a fully masked row."""
    z = scores * np.asarray(scale, dtype=scores.dtype)
    if mask is None:
        mask = np.ones((1,) * z.ndim, dtype=bool)
    mask = np.broadcast_to(mask, z.shape)
    z = np.where(mask, z, -np.inf)
    m = z.max(axis=-1, keepdims=True)  # −inf on a fully masked row ...
    m = np.where(np.isfinite(m), m, 0)  # ... so use 0 there: −inf − (−inf) would be NaN
    e = np.where(mask, np.exp(z - m), 0)
    total = e.sum(axis=-1, keepdims=True)
    return (e / np.where(total > 0, total, 1)).astype(scores.dtype, copy=False)  # 0/1 = 0 on empty rows


def scaled_masked_softmax_backward_numpy(grad_output, out, scale):
    dot = (grad_output * out).sum(axis=-1, keepdims=True)
    return (np.asarray(scale, dtype=out.dtype) * out * (grad_output - dot)).astype(out.dtype, copy=False)
