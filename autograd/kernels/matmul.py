"""A register-blocked numba matmul with packed panels: how far past Task 2.3's tiled loop numba goes.

    out[b] = a[b] @ w[b]        a (B, M, K), w (B, K, N), out (B, M, N)

Task 2.3's kernel (``solutions/task02_kernels/matmul.py``) tiles the rows and streams whole rows of
``w`` past an accumulator: it reaches about a fifth of OpenBLAS. Two ideas from the way BLAS
libraries are written (Goto & van de Geijn 2008, "Anatomy of high-performance matrix
multiplication") take it to about half:

1. **Packed panels.** Copy ``w`` once into column panels of ``NR`` columns, each stored k-major as a
   contiguous (K, NR) block (zero-padded on the right). The innermost loop then reads one short
   contiguous row of a panel per step of k — the same NR numbers for every row of ``a``.
   Rows of ``a`` are packed the same way, ``MR`` at a time, as a (K, MR) block.
2. **Register blocking.** For one (MR × NR) block of ``out``, walk k and add the outer product of
   MR numbers of ``a`` with NR numbers of ``w``: every number loaded from the panel is used MR
   times, and the MR × NR accumulator is small enough to stay in the core's L1 cache. The loops
   over j (NR) and i (MR) have constant lengths, so LLVM unrolls and vectorises them.

Parallel jobs are (batch entry, chunk of ``MC`` rows): they write disjoint rows, no locks.

Measured by ``minilm bench`` (2 cores, float32): ~50% of OpenBLAS at 512³ (the Task 2.3 loop: ~20%).
BLAS still wins for the model's 2-D products, so the kernel tables (``kernels/__init__.py``) keep
matmul on NumPy; this kernel runs in ``minilm bench``'s matmul comparison and its tests only.
"""
import math

import numba
import numpy as np

MR = 8    # rows of a per register block
NR = 32   # columns of w per packed panel (2 AVX-512 or 4 AVX2 float32 vectors)
MC = 64   # rows of a per parallel job (its packed rows, MC × K, stay in L2 beside one panel)


@numba.njit(parallel=True, cache=True)
def _pack_panels(panels, w):
    """panels[b, q, k, j] = w[b, k, q·NR + j], zero where q·NR + j ≥ N."""
    B, K, N = w.shape
    n_panels = panels.shape[1]
    for job in numba.prange(B * n_panels):
        bi, q = job // n_panels, job % n_panels
        width = min(NR, N - q * NR)
        for k in range(K):
            for j in range(width):
                panels[bi, q, k, j] = w[bi, k, q * NR + j]
            for j in range(width, NR):
                panels[bi, q, k, j] = 0.0


@numba.njit(parallel=True, cache=True)
def _matmul_packed(out, a, panels):
    B, M, K = a.shape
    N = out.shape[2]
    n_panels = panels.shape[1]
    n_chunks = (M + MC - 1) // MC
    for job in numba.prange(B * n_chunks):
        bi, i_chunk = job // n_chunks, job % n_chunks
        r0, r1 = i_chunk * MC, min(i_chunk * MC + MC, M)
        n_blocks = (r1 - r0 + MR - 1) // MR
        a_blocks = np.zeros((n_blocks, K, MR), dtype=a.dtype)  # this job's rows of a, packed
        for i in range(r1 - r0):                                 # (zero rows pad the last block)
            for k in range(K):
                a_blocks[i // MR, k, i % MR] = a[bi, r0 + i, k]
        acc = np.empty((MR, NR), dtype=a.dtype)  # one register block of out
        for q in range(n_panels):  # one panel (K × NR) serves every row block of the job
            width = min(NR, N - q * NR)
            for blk in range(n_blocks):
                acc[:, :] = 0.0
                for k in range(K):  # acc += a_blocks[blk, k, :] ⊗ panels[bi, q, k, :]
                    for j in range(NR):
                        w_kj = panels[bi, q, k, j]
                        for i in range(MR):
                            acc[i, j] += a_blocks[blk, k, i] * w_kj
                i0 = r0 + blk * MR
                for i in range(min(MR, r1 - i0)):
                    for j in range(width):
                        out[bi, i0 + i, q * NR + j] = acc[i, j]


def matmul_blocked(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``a @ w`` on the blocked kernel. a (..., M, K), w (..., K, N) with the same float dtype and
    broadcastable batch dimensions (the caller checks shapes) → (..., M, N)."""
    (M, K), N = a.shape[-2:], w.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], w.shape[:-2])
    if w.ndim == 2:  # one right-hand matrix: fold every leading axis of a into its rows
        a3 = np.ascontiguousarray(a).reshape(1, math.prod(a.shape[:-1]), K)
        w3 = w.reshape(1, K, N)
    else:
        a3 = np.ascontiguousarray(np.broadcast_to(a, batch + (M, K)).reshape(-1, M, K))
        w3 = np.ascontiguousarray(np.broadcast_to(w, batch + (K, N)).reshape(-1, K, N))
    out = np.empty((a3.shape[0], a3.shape[1], N), dtype=a.dtype)
    if out.size == 0:
        return out.reshape(batch + (M, N))
    if K == 0:
        out[...] = 0
        return out.reshape(batch + (M, N))
    panels = np.empty((w3.shape[0], (N + NR - 1) // NR, K, NR), dtype=a.dtype)
    _pack_panels(panels, w3)
    _matmul_packed(out, a3, panels)
    return out.reshape(batch + (M, N))
