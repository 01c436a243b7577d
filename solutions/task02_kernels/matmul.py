"""Task 2.3: a tiled, parallel matrix multiplication in numba.

    out[b, i, j] = Σₖ a[b, i, k] · b[b, k, j]        a (B, M, K), b (B, K, N), out (B, M, N)

The textbook triple loop is correct but slow: it streams the whole of ``b`` through the cache for
every row of ``a``. A *tiled* kernel works on blocks that fit in cache:

* split the rows of ``a`` into tiles of ``TILE`` rows; one parallel job = one (batch entry, row tile),
  so jobs write disjoint parts of ``out`` and need no locks (``numba.prange`` over the jobs);
* inside a job, walk K in steps of ``TILE``: the (TILE × N) block ``b[bi, k0:k1, :]`` is reused by
  all TILE rows while it is still in cache;
* keep the job's (TILE × N) partial sums in a local accumulator and write them to ``out`` once;
* order the innermost loops i → k → j: the innermost loop then runs along contiguous memory of
  ``b`` and of the accumulator, which the compiler turns into SIMD instructions.

Sizes are rarely multiples of ``TILE``: the last tile of each loop is shorter (``min(k0 + TILE, K)``).

How it compares (2 cores, float32): BLAS (``np.matmul``) is still 1.3–4× faster at every size we
measured, so the library's matmul stays on BLAS even on the numba backend;
``set_backend("numba", student_kernels=True)`` runs the whole library on this kernel.

The kernel is plain Python made fast by ``numba.njit(parallel=True, cache=True)`` applied below
(minitorch-style), so the file imports even when the body is a stub. To debug it as plain Python
(prints, pdb), run with ``NUMBA_DISABLE_JIT=1`` — slowly.
"""
import math

import numba
import numpy as np

from autograd.errors import ShapeError

TILE = 32  # rows of a (and steps of K) per block; 32 rows × N columns of float32 fit in L1/L2


def matmul_kernel(out, a, b):
    """Task 2.3: fill ``out[bi] = a[bi] @ b[bi]`` for every batch entry ``bi``, tiled and parallel.

    out (B, M, N), a (B, M, K), b (B, K, N): C-contiguous, one float dtype (float32 or float64),
    ``out`` uninitialised (np.empty) — write every entry. Return nothing.

    Plan: ``for job in numba.prange(B * n_row_tiles)`` with n_row_tiles = ⌈M / TILE⌉; from
    ``job`` get the batch entry and the row range [i0, i1); an accumulator
    ``np.zeros((TILE, N), dtype=out.dtype)``; for each K tile [k0, k1), for i, for k, take
    a[bi, i, k] once and add it times the row b[bi, k, :] into the accumulator; copy the
    accumulator's rows to out[bi, i0:i1]. Every bound is ``min(start + TILE, size)``.

    Tests check (through ``matmul_numba``): float32 and float64 against ``a @ b`` for 1×1,
    7×13 @ 13×5, sizes that are not multiples of TILE (e.g. 37×70 @ 70×33), K = 0, batches and
    broadcast batch dimensions.
    """
    # BEGIN SOLUTION
    B, M, K = a.shape
    N = b.shape[2]
    n_row_tiles = (M + TILE - 1) // TILE
    for job in numba.prange(B * n_row_tiles):  # one (batch entry, row tile) per job: no overlap
        bi = job // n_row_tiles
        i0 = (job % n_row_tiles) * TILE
        i1 = min(i0 + TILE, M)
        acc = np.zeros((TILE, N), dtype=out.dtype)  # this tile's rows of out
        for k0 in range(0, K, TILE):
            k1 = min(k0 + TILE, K)
            for i in range(i0, i1):
                for k in range(k0, k1):
                    a_ik = a[bi, i, k]
                    for j in range(N):  # contiguous in b and acc: vectorised
                        acc[i - i0, j] += a_ik * b[bi, k, j]
        for i in range(i0, i1):
            for j in range(N):
                out[bi, i, j] = acc[i - i0, j]
    # END SOLUTION


_matmul_kernel = numba.njit(parallel=True, cache=True)(matmul_kernel)


def _as_batch(x, batch, rows, cols, dtype):
    """x (..., rows, cols) → C-contiguous (prod(batch), rows, cols), broadcasting its batch dims."""
    if x.shape[:-2] != batch:
        x = np.broadcast_to(x, batch + (rows, cols))
    return np.ascontiguousarray(x.reshape(math.prod(batch), rows, cols), dtype=dtype)


def matmul_numba(a, b):
    """Task 2.3 (given — the lesson is ``matmul_kernel``): ``a @ b`` on the numba kernel.

    a (..., M, K), b (..., K, N) → (..., M, N); batch dimensions broadcast as in ``np.matmul``.
    float32 or float64 (the result takes ``np.result_type(a, b)``).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul_numba: {a.shape} @ {b.shape}: need (..., M, K) @ (..., K, N)")
    dtype = np.result_type(a, b)
    if dtype not in (np.float32, np.float64):
        raise ShapeError(f"matmul_numba: dtypes {a.dtype} and {b.dtype}: expected float32 or float64")
    (M, K), N = a.shape[-2:], b.shape[-1]
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError(f"matmul_numba: {a.shape} @ {b.shape}: batch dimensions do not broadcast") from None
    if b.ndim == 2:  # one right-hand matrix for the whole batch: a single tall product
        a3 = np.ascontiguousarray(a.reshape(1, math.prod(a.shape[:-1]), K), dtype=dtype)  # (1, batch·M, K)
        b3 = np.ascontiguousarray(b.reshape(1, K, N), dtype=dtype)
    else:
        a3 = _as_batch(a, batch, M, K, dtype)  # (Bflat, M, K)
        b3 = _as_batch(b, batch, K, N, dtype)  # (Bflat, K, N)
    out = np.empty((a3.shape[0], a3.shape[1], N), dtype=dtype)
    _matmul_kernel(out, a3, b3)
    return out.reshape(batch + (M, N))
