"""Fused scale + mask + softmax of attention scores: the NumPy reference beside the numba kernels.

    P[..., i, j] = exp(s·S_ij − m_i) / Σ_{k allowed} exp(s·S_ik − m_i)  where mask[..., i, j] (True =
    may attend), 0 elsewhere; a row with no allowed key is all zeros (not NaN, not uniform).
    Backward: dS = s · P ⊙ (G − Σ_k G⊙P).

Three implementations, one result:

* the NumPy reference below (``set_backend("numpy")``), what every other one must match;
* Task 2.4's numba kernel, the lesson (``solutions/task02_kernels/attention_softmax.py``): one
  job per (b, h), three passes per row with ``math.exp``; it runs with
  ``set_backend("numba", student_kernels=True)``, so the kit trains on your own kernel;
* the engine's kernel below, which the numba backend runs by default: the same three passes per
  row, but written so that LLVM vectorises them — float32 rows use ``fastmath.exp_approx``
  instead of ``math.exp``, and the row sums use the vectorising helpers ``row_sum``/``row_dot``.
  ``minilm bench`` measures it (fused forward + backward) against the composed NumPy version.

Shapes: S, P, G (..., Tq, Tk), usually (B, H, Tq, Tk); the boolean mask broadcasts to S (causal
(Tq, Tk), padding (B, 1, 1, Tk), ...).
"""
import math

import numba
import numpy as np

from .. import tasks
from ..errors import ShapeError
from .fastmath import exp_approx, row_dot, row_sum
from .runtime import numba_entry

# Task 2.4: solutions/task02_kernels/attention_softmax.py — the student's numba kernels
scaled_masked_softmax_forward_task = tasks.bind("task02_kernels.attention_softmax", "scaled_masked_softmax_forward")
scaled_masked_softmax_backward_task = tasks.bind("task02_kernels.attention_softmax", "scaled_masked_softmax_backward")


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


# ---- the engine's kernels -----------------------------------------------------------------------
@numba.njit(parallel=True, cache=True)
def _forward_rows(out, scores, mask, scale, fast):
    """out[r] = masked softmax(scale·scores[r]) for the R rows of (R, Tk) arrays; ``fast``
    (float32): exp from fastmath. (Skipping the masked tail of a causal row, or a vectorised
    masked max, measured slower: the rows are short, and the simple loops vectorise well.)"""
    R, Tk = scores.shape
    for r in numba.prange(R):
        m = -np.inf                                       # pass 1: max of the allowed scaled scores
        for j in range(Tk):
            if mask[r, j]:
                m = max(m, scores[r, j] * scale)
        if m == -np.inf:                                  # no allowed key: a row of zeros
            for j in range(Tk):
                out[r, j] = 0.0
            continue
        if fast:                                          # pass 2: e^(z − m) where allowed, else 0
            for j in range(Tk):
                e = exp_approx(scores[r, j] * scale - m)
                out[r, j] = e if mask[r, j] else 0.0
        else:
            for j in range(Tk):
                e = math.exp(scores[r, j] * scale - m)
                out[r, j] = e if mask[r, j] else 0.0
        inv = 1.0 / row_sum(out, r)                       # ≥ 1 term equal to e⁰ = 1: no 0/0
        for j in range(Tk):                               # pass 3: normalise
            out[r, j] *= inv


@numba.njit(parallel=True, cache=True)
def _backward_rows(grad_scores, grad_output, out, scale):
    R, Tk = out.shape
    for r in numba.prange(R):
        dot = row_dot(grad_output, out, r)
        for j in range(Tk):
            grad_scores[r, j] = scale * out[r, j] * (grad_output[r, j] - dot)


@numba_entry(fallback=scaled_masked_softmax_forward_numpy)
def scaled_masked_softmax_forward_numba(scores, mask, scale):
    """The engine's kernel (module docstring): P with scores' shape and dtype."""
    scores = np.asarray(scores)
    shape = scores.shape
    mask = np.ones((1,) * scores.ndim, dtype=bool) if mask is None else np.asarray(mask)
    if mask.dtype != bool:
        raise ShapeError(f"scaled_masked_softmax: mask must be boolean (True = may attend), got {mask.dtype}")
    try:
        mask = np.broadcast_to(mask, shape)
    except ValueError:
        raise ShapeError(f"scaled_masked_softmax: mask {mask.shape} does not broadcast to scores {shape}") from None
    Tk = shape[-1]
    s2 = np.ascontiguousarray(scores).reshape(-1, Tk)     # (R, Tk)
    m2 = np.ascontiguousarray(mask).reshape(-1, Tk)       # (R, Tk) booleans: 1/4 of the scores' bytes
    out = np.empty_like(s2)
    _forward_rows(out, s2, m2, float(scale), s2.dtype == np.float32)
    return out.reshape(shape)


@numba_entry(fallback=scaled_masked_softmax_backward_numpy, arrays=(1,))
def scaled_masked_softmax_backward_numba(grad_output, out, scale):
    """dL/dscores = scale · P ⊙ (G − Σ G⊙P), row by row."""
    shape, Tk = out.shape, out.shape[-1]
    g2 = np.ascontiguousarray(grad_output, dtype=out.dtype).reshape(-1, Tk)
    p2 = np.ascontiguousarray(out).reshape(-1, Tk)
    grad = np.empty_like(p2)
    _backward_rows(grad, g2, p2, float(scale))
    return grad.reshape(shape)
