"""Embedding backward: scatter-add of row gradients into the table, numba beside NumPy.

The forward ``out[n] = weight[ids[n]]`` reads rows; a token that occurs k times reads its row k
times, so its gradient is the **sum** of those k rows of the upstream gradient:

    dweight[v] = Σ_{n : ids[n] = v} grad[n]        ids (N,), grad (N, C), dweight (V, C)

``dweight[ids] += grad`` is wrong (a repeated id keeps only one of its rows); ``np.add.at`` is right
and is the NumPy reference. The numba kernel splits the C columns into blocks, one parallel job per
block: every job walks all N ids but touches only its own columns, so no two jobs write the same
number and the sum order (n = 0, 1, …) is the same as ``np.add.at``'s.
"""
import numba
import numpy as np

from .runtime import numba_entry

_BLOCK = 32  # columns per parallel job


def embedding_backward_numpy(grad, ids, num_embeddings):
    out = np.zeros((num_embeddings, grad.shape[1]), dtype=grad.dtype)
    np.add.at(out, ids, grad)
    return out


@numba.njit(parallel=True, cache=True)
def _scatter_add(out, ids, grad):
    N, C = grad.shape
    n_blocks = (C + _BLOCK - 1) // _BLOCK
    for blk in numba.prange(n_blocks):
        c0 = blk * _BLOCK
        c1 = min(c0 + _BLOCK, C)
        for n in range(N):
            row = ids[n]
            for c in range(c0, c1):
                out[row, c] += grad[n, c]


@numba_entry(fallback=embedding_backward_numpy)
def embedding_backward_numba(grad, ids, num_embeddings):
    grad = np.ascontiguousarray(grad)
    out = np.zeros((num_embeddings, grad.shape[1]), dtype=grad.dtype)
    _scatter_add(out, np.ascontiguousarray(ids, dtype=np.int64), grad)
    return out
