"""Layer norm over the last axis: numba row kernels beside the NumPy reference (Task 2.5).

    μ = mean(x),  r = 1/√(mean((x − μ)²) + ε),  x̂ = (x − μ)·r,  y = γ ⊙ x̂ + β
    dx = r·(ĝ − mean(ĝ) − x̂·mean(ĝ ⊙ x̂)),  ĝ = g ⊙ γ;   dγ = Σ_rows g ⊙ x̂;   dβ = Σ_rows g

The NumPy reference is Task 2.5's slot (``solutions/task02_kernels/layer_norm.py``). The numba
kernels view x as (R, C): R rows of C features. The forward is one parallel job per row. The
backward also sums dγ and dβ over rows, and parallel jobs must not add into the same (C,) array at
once: each of ``_N_CHUNKS`` jobs sums its own block of rows into its own row of a (chunks, C) buffer,
and those partial sums are added at the end. The chunking does not depend on the thread count, so
the result is the same on any machine.
"""
import math

import numba
import numpy as np

from .. import tasks
from .fastmath import layer_norm_row_sums, row_sum, row_sum_sq_dev
from .runtime import numba_entry

# Task 2.5: solutions/task02_kernels/layer_norm.py — the NumPy reference
layer_norm_forward_numpy = tasks.bind("task02_kernels.layer_norm", "layer_norm_forward")
layer_norm_backward_numpy = tasks.bind("task02_kernels.layer_norm", "layer_norm_backward")

_N_CHUNKS = 16  # partial sums of dγ, dβ (fixed: results independent of the thread count)


@numba.njit(parallel=True, cache=True)
def _forward_rows(out, mean, rstd, x, weight, bias, eps):
    R, C = x.shape
    for r in numba.prange(R):
        mu = row_sum(x, r) / C
        rs = 1.0 / math.sqrt(row_sum_sq_dev(x, r, mu) / C + eps)
        mean[r] = mu
        rstd[r] = rs
        for j in range(C):
            out[r, j] = (x[r, j] - mu) * rs * weight[j] + bias[j]


@numba.njit(parallel=True, cache=True)
def _backward_rows(dx, dweight_part, dbias_part, grad_out, x, weight, mean, rstd):
    R, C = x.shape
    n_chunks = dweight_part.shape[0]
    rows_per_chunk = (R + n_chunks - 1) // n_chunks
    for c in numba.prange(n_chunks):
        for r in range(c * rows_per_chunk, min((c + 1) * rows_per_chunk, R)):
            mu, rs = mean[r], rstd[r]
            s_g, s_gx = layer_norm_row_sums(grad_out, x, weight, r, mu, rs)
            mean_g, mean_gx = s_g / C, s_gx / C  # mean(ĝ), mean(ĝ ⊙ x̂)
            for j in range(C):
                xhat = (x[r, j] - mu) * rs
                g = grad_out[r, j]
                dx[r, j] = rs * (g * weight[j] - mean_g - xhat * mean_gx)
                dweight_part[c, j] += g * xhat
                dbias_part[c, j] += g


@numba_entry(fallback=layer_norm_forward_numpy, arrays=(0, 1, 2))
def layer_norm_forward_numba(x, weight, bias, eps=1e-5):
    C = x.shape[-1]
    x2 = np.ascontiguousarray(x).reshape(-1, C)  # (R, C)
    out = np.empty_like(x2)
    mean = np.empty(x2.shape[0], dtype=x.dtype)
    rstd = np.empty(x2.shape[0], dtype=x.dtype)
    _forward_rows(out, mean, rstd, x2, np.ascontiguousarray(weight), np.ascontiguousarray(bias), float(eps))
    stats = x.shape[:-1] + (1,)
    return out.reshape(x.shape), mean.reshape(stats), rstd.reshape(stats)


@numba_entry(fallback=layer_norm_backward_numpy, arrays=(1, 2))
def layer_norm_backward_numba(grad_output, x, weight, mean, rstd):
    C = x.shape[-1]
    x2 = np.ascontiguousarray(x).reshape(-1, C)
    g2 = np.ascontiguousarray(grad_output, dtype=x.dtype).reshape(-1, C)
    dx = np.empty_like(x2)
    n_chunks = max(1, min(_N_CHUNKS, x2.shape[0]))
    dweight_part = np.zeros((n_chunks, C))  # float64 partial sums
    dbias_part = np.zeros((n_chunks, C))
    _backward_rows(dx, dweight_part, dbias_part, g2, x2, np.ascontiguousarray(weight),
                   np.ascontiguousarray(mean).reshape(-1), np.ascontiguousarray(rstd).reshape(-1))
    return (dx.reshape(x.shape), dweight_part.sum(axis=0).astype(x.dtype),
            dbias_part.sum(axis=0).astype(x.dtype))
