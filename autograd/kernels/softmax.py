"""Softmax and log-softmax along any axis: numba row kernels beside the NumPy reference (Task 2.1).

    softmax(x)ᵢ = exp(xᵢ − m) / Σⱼ exp(xⱼ − m),  m = maxⱼ xⱼ       backward: p ⊙ (g − Σ g⊙p)
    log softmax(x)ᵢ = xᵢ − m − log Σⱼ exp(xⱼ − m)                  backward: g − exp(out)·Σ g

The NumPy reference is Task 2.1's slot (``solutions/task02_kernels/softmax.py``). The numba kernels
work on rows: the wrapper moves ``axis`` last and views the array as (R, C) — R rows of C entries.
Each row is one parallel job; sums accumulate in float64 even for float32 data. With ``math.exp`` the
kernels lost to NumPy's SIMD ``exp`` by 1.5–3×; float32 rows now take ``fastmath.exp_approx`` and
``row_sum``/``row_dot``, which LLVM vectorises, and beat the reference (1.2× forward, 1.2–2.7×
backward, ``minilm bench``), so the numba backend runs them by default.

The four entries at the end are parallel on purpose: the log-softmax pair is the softmax pair with
``log=True``, written out so that each entry reads alone, one call from its row kernel.
"""
import math

import numba
import numpy as np

from .. import tasks
from .fastmath import exp_approx, row_dot, row_max, row_sum
from .runtime import numba_entry

# Task 2.1: solutions/task02_kernels/softmax.py — the NumPy reference
softmax_forward_numpy = tasks.bind("task02_kernels.softmax", "softmax_forward")
softmax_backward_numpy = tasks.bind("task02_kernels.softmax", "softmax_backward")
log_softmax_forward_numpy = tasks.bind("task02_kernels.softmax", "log_softmax_forward")
log_softmax_backward_numpy = tasks.bind("task02_kernels.softmax", "log_softmax_backward")


@numba.njit(inline="always", cache=True)
def exp_shifted_row(out, x, r, fast):
    """The stable softmax's numerator for row r: out[r, j] = e^(x[r, j] − m), m = maxⱼ x[r, j];
    returns ``(m, Σⱼ out[r, j])``. ``fast`` (float32 data): exp from fastmath, which vectorises.

    Shared by ``_softmax_rows`` and cross_entropy.py's ``_forward_rows`` (which normalises it into
    the probabilities its backward keeps). Inlined at the numba level, so each caller compiles the
    same loops it had when it wrote them out: no call in the row loop, and the same results to the
    last bit (this helper has no fastmath flags; ``row_max``/``row_sum`` keep theirs, uninlined)."""
    m = row_max(x, r)
    if fast:  # two loops: a branch inside one stops vectorisation
        for j in range(x.shape[1]):
            out[r, j] = exp_approx(x[r, j] - m)
    else:
        for j in range(x.shape[1]):
            out[r, j] = math.exp(x[r, j] - m)
    return m, row_sum(out, r)


@numba.njit(parallel=True, cache=True)
def _softmax_rows(out, x, log, fast):
    """out[r] = softmax(x[r]) (or log-softmax if ``log``); x, out (R, C), C ≥ 1. ``fast`` (float32
    data): exp from fastmath, which vectorises. Each loop is one pass over the row."""
    R, C = x.shape
    for r in numba.prange(R):
        m, total = exp_shifted_row(out, x, r, fast)  # out = e^(x − m) for now
        if log:
            log_total = math.log(total)
            for j in range(C):
                out[r, j] = (x[r, j] - m) - log_total
        else:
            inv = 1.0 / total
            for j in range(C):
                out[r, j] *= inv


@numba.njit(parallel=True, cache=True)
def _softmax_backward_rows(grad_x, grad_out, out, log, fast):
    """softmax: grad_x = out·(g − Σ g·out); log-softmax: grad_x = g − exp(out)·Σ g."""
    R, C = out.shape
    for r in numba.prange(R):
        if log:
            total = row_sum(grad_out, r)
            if fast:
                for j in range(C):
                    grad_x[r, j] = grad_out[r, j] - exp_approx(out[r, j]) * total
            else:
                for j in range(C):
                    grad_x[r, j] = grad_out[r, j] - math.exp(out[r, j]) * total
        else:
            total = row_dot(grad_out, out, r)
            for j in range(C):
                grad_x[r, j] = out[r, j] * (grad_out[r, j] - total)


def _rows(x, axis):
    """x with ``axis`` moved last as a C-contiguous (R, C) array, an empty (R, C) array of its
    dtype for the result, and the function that gives a result x's own layout back."""
    moved = np.moveaxis(x, axis, -1)
    rows = np.ascontiguousarray(moved).reshape(-1, moved.shape[-1])
    return rows, np.empty_like(rows), lambda r: np.moveaxis(r.reshape(moved.shape), -1, axis)


@numba_entry(fallback=softmax_forward_numpy)
def softmax_forward_numba(x, axis=-1):
    x2, out, unrows = _rows(x, axis)                                # (R, C)
    _softmax_rows(out, x2, False, x2.dtype == np.float32)
    return unrows(out)


@numba_entry(fallback=softmax_backward_numpy, arrays=(1,))
def softmax_backward_numba(grad_output, out, axis=-1):
    p2, grad, unrows = _rows(out, axis)
    g2 = _rows(np.asarray(grad_output, dtype=out.dtype), axis)[0]
    _softmax_backward_rows(grad, g2, p2, False, p2.dtype == np.float32)
    return unrows(grad)


@numba_entry(fallback=log_softmax_forward_numpy)
def log_softmax_forward_numba(x, axis=-1):
    x2, out, unrows = _rows(x, axis)
    _softmax_rows(out, x2, True, x2.dtype == np.float32)
    return unrows(out)


@numba_entry(fallback=log_softmax_backward_numpy, arrays=(1,))
def log_softmax_backward_numba(grad_output, out, axis=-1):
    p2, grad, unrows = _rows(out, axis)
    g2 = _rows(np.asarray(grad_output, dtype=out.dtype), axis)[0]
    _softmax_backward_rows(grad, g2, p2, True, p2.dtype == np.float32)
    return unrows(grad)
