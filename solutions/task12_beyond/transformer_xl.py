"""Task 12.3: Transformer-XL's segment-level recurrence and relative attention (Dai et al. 2019).

A plain causal LM trained on fixed-length segments sees nothing before the start of its segment.
Transformer-XL keeps the hidden states of the previous segment as a *memory* and lets the current
segment attend to them (§3.2):

    h̃ⁿ⁻¹_{τ+1} = [SG(mⁿ⁻¹_τ) ∘ hⁿ⁻¹_{τ+1}]            memory and current states, along time
    q = hⁿ⁻¹_{τ+1} W_q,   k = h̃ⁿ⁻¹_{τ+1} W_k,   v = h̃ⁿ⁻¹_{τ+1} W_v

SG is stop-gradient: the memory is a constant (no gradient flows into the previous segment), and
after each segment every layer keeps the last ``mem_len`` states as its new memory.

Absolute positions no longer make sense once segments are chained (position 0 of segment τ+1 and
position 0 of segment τ would look the same), so the score of query i and key j depends on their
*distance* i − j only (§3.3):

    A_ij = q_iᵀ k_j  +  q_iᵀ W_{k,R} R_{i−j}  +  uᵀ k_j  +  vᵀ W_{k,R} R_{i−j}
             (a)              (b)                (c)            (d)

R is the sinusoidal table (Task 3.3) indexed by distance; u and v are learned vectors (one per head)
that replace the query in (c) (a global content bias) and (d) (a global distance bias).

Letters: B batch, H heads, T current segment length, M memory length, K = M + T keys, d head width,
C channels.
"""
from __future__ import annotations

import numpy as np

from autograd import Tensor, cat
from autograd.errors import ConfigError, ShapeError


def _check_memory_args(prev_mem, hidden, mem_len):
    """Given helper (not the lesson): shapes and ``mem_len``."""
    if isinstance(mem_len, bool) or not isinstance(mem_len, (int, np.integer)) or mem_len < 0:
        raise ConfigError(f"update_memory: mem_len={mem_len!r}, expected an integer >= 0")
    if hidden.ndim != 3:
        raise ShapeError(f"update_memory: hidden of shape {hidden.shape}, expected (B, T, C)")
    if prev_mem is not None and (prev_mem.ndim != 3 or prev_mem.shape[0] != hidden.shape[0]
                                 or prev_mem.shape[2] != hidden.shape[2]):
        raise ShapeError(f"update_memory: prev_mem of shape {prev_mem.shape} for hidden of shape "
                         f"{hidden.shape}, expected ({hidden.shape[0]}, M, {hidden.shape[2]})")


def update_memory(prev_mem, hidden, mem_len):
    """Task 12.3: the new memory of one layer, SG([prev_mem ∘ hidden]) cut to the last ``mem_len`` steps.

    prev_mem: a Tensor (B, M, C), or None (the first segment: no memory yet).
    hidden:   a Tensor (B, T, C) — this layer's *input* states on the current segment (it may be part
              of the autograd graph).
    mem_len:  int >= 0, how many time steps the memory keeps.

    Return a Tensor (B, min(M + T, mem_len), C): the concatenation along time (axis 1) of prev_mem
    then hidden, keeping the **last** ``mem_len`` steps (the most recent ones), **detached** from the
    graph — a new Tensor with ``requires_grad`` False, so no gradient ever flows into the previous
    segment (the paper's SG, §3.2). With ``mem_len = 0`` the result has 0 steps, shape (B, 0, C).

    Hints: ``autograd.cat([a, b], axis=1)``; ``Tensor.detach()`` (or build ``Tensor(array)`` from
    the data). Careful: ``x[:, -0:]`` is the *whole* of x, not nothing. Do not modify the inputs.

    The graded tests check: the values and shape (prev_mem first, then hidden, last mem_len kept);
    mem_len larger than M + T keeps everything; mem_len = 0 keeps nothing; the result carries no
    graph (a loss computed from it leaves the gradients of what produced ``hidden`` untouched);
    a prev_mem of None.
    """
    _check_memory_args(prev_mem, hidden, mem_len)
    # BEGIN SOLUTION
    full = hidden if prev_mem is None else cat([prev_mem, hidden], axis=1)  # (B, M + T, C)
    start = max(full.shape[1] - mem_len, 0)
    return Tensor(full.data[:, start:].copy())                               # SG: no graph
    # END SOLUTION


def _check_score_args(q, k, r, u, v):
    """Given helper (not the lesson): the shapes of ``relative_scores``' arguments."""
    if q.ndim != 4 or k.ndim != 4 or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ShapeError(f"relative_scores: q {q.shape} and k {k.shape}, expected (B, H, T, d) and (B, H, K, d)")
    B, H, T, d = q.shape
    K = k.shape[2]
    if K < T:
        raise ShapeError(f"relative_scores: {K} keys for {T} queries; the keys are [memory ∘ current], K = M + T >= T")
    if r.shape != (H, K, d):
        raise ShapeError(f"relative_scores: r of shape {r.shape}, expected (H, K, d) = {(H, K, d)}")
    for name, b in (("u", u), ("v", v)):
        if b.shape != (H, d):
            raise ShapeError(f"relative_scores: {name} of shape {b.shape}, expected (H, d) = {(H, d)}")


def relative_scores(q, k, r, u, v):
    """Task 12.3: the relative attention scores A = (a) + (b) + (c) + (d) of Transformer-XL §3.3.

    q: Tensor (B, H, T, d)   queries of the current segment only.
    k: Tensor (B, H, K, d)   keys of [memory ∘ current segment], K = M + T (M = K − T memory steps).
    r: Tensor (H, K, d)      the projected relative encodings W_{k,R} R, **indexed by distance**:
                             r[h, m] is for distance m = 0, 1, ..., K − 1 (m = how far back the key is).
    u, v: Tensor (H, d)      the learned global biases of each head.

    Query i of the segment sits at position M + i of the key sequence, so the distance from query i
    to key j is  m = M + i − j  (0 for the key at the query's own position, positive for the past).
    Return a Tensor (B, H, T, K):

        A[b, h, i, j] = (q[b,h,i] + u[h]) · k[b,h,j]  +  (q[b,h,i] + v[h]) · r[h, M + i − j]
                      =        (a) + (c)              +            (b) + (d)

    for every causal pair (j <= M + i). Keys in the future (j > M + i, negative distance) are masked
    by the caller; their entries may hold anything finite. Do not scale by 1/√d (the caller does).

    **The relative shift.** Compute the distance terms for every (query, distance) pair first, with
    one matmul: BD[b, h, i, m] = (q_i + v) · r[m], shape (B, H, T, K). Then move each row to the key
    axis: entry (i, j) must read column m = M + i − j, i.e. row i is BD[i] reversed and shifted right
    by M + i − (K − 1) = i − T + 1 (the paper's App. B does this with a pad-and-reshape;
    ``Tensor.gather(axis=-1, index)`` with an index array of shape (B, H, T, K) does it directly —
    clip the future's negative distances to 0, they are masked anyway).

    The graded tests compare with a loop over (i, j) on random inputs with memory (M > 0), and check:
    (c) and (d) present (u, v change the result; with q = 0 the scores are u·k + v·r), the direction
    of the distance (M + i − j, not j − i), gradients reach q, k, r, u, v.
    """
    _check_score_args(q, k, r, u, v)
    # BEGIN SOLUTION
    B, H, T, d = q.shape
    K = k.shape[2]
    M = K - T
    u4 = u.reshape(1, H, 1, d)                                   # broadcast over batch and queries
    v4 = v.reshape(1, H, 1, d)
    ac = (q + u4) @ k.transpose(0, 1, 3, 2)                      # (B, H, T, K)  terms (a) + (c)
    bd_by_distance = (q + v4) @ r.transpose(0, 2, 1).reshape(1, H, d, K)  # (B, H, T, K) column m = distance m
    i = np.arange(T)[:, None]
    j = np.arange(K)[None, :]
    distance = np.clip(M + i - j, 0, K - 1)                      # (T, K); future keys clipped (masked later)
    index = np.broadcast_to(distance, (B, H, T, K)).copy()
    bd = bd_by_distance.gather(-1, index)                        # (B, H, T, K)  the relative shift
    return ac + bd
    # END SOLUTION
