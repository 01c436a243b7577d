"""Task 12.4: DeBERTa's disentangled attention (He et al. 2021, §3.1).

BERT adds a position vector to each word vector before the first layer, so a token's content and
its position are mixed from the start. DeBERTa keeps them apart: token i is a content vector H_i
plus, for every other token j, the *relative distance* between them, looked up in a table P of
2k relative-position embeddings. The attention score splits into three of the four cross terms
(position-to-position is dropped: with relative positions only it carries no information):

    A_ij = Q^c_i · K^c_jᵀ             content-to-content   (BERT's term)
         + Q^c_i · K^r_δ(i,j)ᵀ        content-to-position  (what does word i look for at distance i−j?)
         + K^c_j · Q^r_δ(j,i)ᵀ        position-to-content  (which words, seen from distance j−i, fit j?)
    scores = A / √(3d)                three terms, each of variance ≈ d, so the scale is √(3d), not √d

    Q^c = H W_q^c,  K^c = H W_k^c,  Q^r = P W_q^r,  K^r = P W_k^r          (P: (2k, C), shared by all layers)
    δ(i, j) = clip(i − j + k, 0, 2k − 1)                                     (Eq. 3: distances beyond ±k share a row)

In the position-to-content term, j is the *query* of the relative position: the key token j is
seen from the query i at distance j − i, hence δ(j, i), not δ(i, j) (§3.1, under Eq. 4).

Letters: T tokens (Tq queries, Tk keys), d the head width, k the maximum relative distance.
"""
from __future__ import annotations

import math

import numpy as np

from autograd.errors import ConfigError, ShapeError


def _swap_last(x):
    """Given helper: a Tensor with its last two axes swapped (a batched transpose, ``xᵀ``)."""
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return x.transpose(*axes)


def _check_k(op, k):
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ConfigError(f"{op}: k={k!r}, expected a whole number >= 1 (the maximum relative distance)")
    return int(k)


def relative_distance(Tq, Tk, k):
    """Task 12.4: DeBERTa's relative-position index δ(i, j) = clip(i − j + k, 0, 2k − 1) (Eq. 3).

    Return an int array (Tq, Tk) with ``out[i, j] = δ(i, j)`` for query i and key j:
        i − j ≤ −k   → 0
        i − j ≥ k    → 2k − 1
        otherwise    → i − j + k           (so i = j gives k)
    It indexes the 2k rows of the relative-embedding table P, so every value must lie in [0, 2k).

    Hints: ``np.arange(Tq)[:, None] - np.arange(Tk)[None, :]`` and ``np.clip``.
    The graded tests compare with Eq. 3 entry by entry, including distances far beyond k.
    """
    k = _check_k("relative_distance", k)
    raise NotImplementedError("Task 12.4: relative_distance")


def deberta_scores(q_c, k_c, q_r, k_r, k):
    """Task 12.4: the disentangled attention scores of DeBERTa, scaled by 1/√(3d) (He et al. §3.1).

    Inputs (Tensors; the leading axes ``...`` are optional, e.g. (B, H) for batched heads):
        q_c  (..., Tq, d)   content queries  Q^c = H W_q^c
        k_c  (..., Tk, d)   content keys     K^c = H W_k^c
        q_r  (..., 2k, d)   relative queries Q^r = P W_q^r   (may have fewer leading axes: broadcast)
        k_r  (..., 2k, d)   relative keys    K^r = P W_k^r
        k    the maximum relative distance (the table P has 2k rows)
    Return ``(scores, c2c, c2p, p2c)``, four Tensors (..., Tq, Tk):
        c2c[i, j] = q_c[i] · k_c[j]
        c2p[i, j] = q_c[i] · k_r[δ(i, j)]
        p2c[i, j] = k_c[j] · q_r[δ(j, i)]        note δ(j, i) = clip(j − i + k, 0, 2k − 1)
        scores    = (c2c + c2p + p2c) / √(3d)
    with δ(i, j) = clip(i − j + k, 0, 2k − 1) (compute it here: one slot never calls another).

    Steps, all Tensor operations so the gradient reaches the four inputs:
        1. c2c = q_c @ k_cᵀ                                        (..., Tq, Tk)
        2. c2p: all distances at once, q_c @ k_rᵀ (..., Tq, 2k), then pick column δ(i, j) in row i
           with ``.gather(-1, index)`` (the index broadcast to the full (..., Tq, Tk) shape)
        3. p2c: k_c @ q_rᵀ (..., Tk, 2k), pick column δ(j, i) in row j → (..., Tk, Tq), then swap
           the last two axes to get (..., Tq, Tk)
        4. add and scale

    The graded tests compare every term and the score with an explicit loop on a hand-sized example
    (T larger than k, so clipping matters); they catch a 1/√d scale, δ(i, j) in the
    position-to-content term, an unclipped or wrongly clipped distance, and check the gradients.
    """
    k = _check_k("deberta_scores", k)
    if q_r.shape[-2] != 2 * k or k_r.shape[-2] != 2 * k:
        raise ShapeError(f"deberta_scores: q_r {q_r.shape} and k_r {k_r.shape} must have 2k = {2 * k} "
                         "relative positions on their second-to-last axis")
    if not (q_c.shape[-1] == k_c.shape[-1] == q_r.shape[-1] == k_r.shape[-1]):
        raise ShapeError(f"deberta_scores: head widths differ: q_c {q_c.shape}, k_c {k_c.shape}, "
                         f"q_r {q_r.shape}, k_r {k_r.shape}")
    raise NotImplementedError("Task 12.4: deberta_scores")
