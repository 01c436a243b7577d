"""DeBERTa's relative positions as the released code computes them, fed to Task 12.4's slot.

* ``log_bucket``: DeBERTa-v3's log-bucketed distances (transformers' ``make_log_bucket_position``,
  ``modeling_deberta_v2.py``): |r| ≤ b/2 kept, longer distances squeezed logarithmically up to
  ``max_relative_positions``, so 512 tokens need only 2b = 512 rows of P.
* ``relative_rows`` / ``relative_index``: the row of P each term reads, in the paper's form
  (position-to-content at clip(j − i + K)) or the released one (clip(i − j + K) in both terms).
* ``slot_tables``: any of these through ``deberta_scores`` itself, by re-indexing the two projected
  tables (the library calls the lesson rather than repeating it).

``config`` is a ``minilm.models.deberta.DebertaConfig``. Letters: T tokens, H heads, d head width,
K = ``config.rel_span`` (P has 2K rows), b = ``config.position_buckets``.
"""
from __future__ import annotations

import numpy as np

from autograd import Tensor

__all__ = ["log_bucket", "relative_rows", "relative_index", "slot_tables"]


def log_bucket(rel, buckets: int, max_position: int) -> np.ndarray:
    """DeBERTa-v3's log-bucketed relative positions (transformers' ``make_log_bucket_position``):
    distances |r| ≤ b/2 are kept, longer ones map to b/2 + ⌈log(|r| / (b/2)) / log((max − 1) / (b/2))
    · (b/2 − 1)⌉ with r's sign. Computed in float32 as PyTorch does, so the rounding agrees."""
    rel = np.asarray(rel, dtype=np.int64)
    mid = buckets // 2
    abs_pos = np.where((rel < mid) & (rel > -mid), mid - 1, np.abs(rel))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(abs_pos.astype(np.float32) / np.float32(mid)) / np.log(np.float32((max_position - 1) / mid))
        log_pos = np.ceil(ratio * np.float32(mid - 1)) + np.float32(mid)
    far = np.where(abs_pos <= mid, 0, log_pos * np.sign(rel))       # the near ones' NaN / inf are discarded
    return np.where(abs_pos <= mid, rel, far.astype(np.int64))


def relative_rows(d, config) -> tuple[np.ndarray, np.ndarray]:
    """For distances d = i − j: the rows of P that content-to-position and position-to-content read,
    c2p = clip(f(d) + K, 0, 2K − 1) and p2c = the same in the released form, clip(f(−d) + K, 0, 2K − 1)
    in the paper's; f is the identity or ``log_bucket``, K = ``config.rel_span``."""
    d = np.asarray(d, dtype=np.int64)
    K = config.rel_span

    def row(r):
        f = log_bucket(r, config.position_buckets, config.max_relative_positions) if config.position_buckets else r
        return np.clip(f + K, 0, 2 * K - 1)

    c2p = row(d)
    return c2p, (c2p if config.rel_index == "released" else row(-d))


def relative_index(Tq: int, Tk: int, config) -> tuple[np.ndarray, np.ndarray]:
    """(c2p, p2c), each (Tq, Tk): the row of P that query i and key j read in each term."""
    return relative_rows(np.arange(Tq)[:, None] - np.arange(Tk)[None, :], config)


def slot_tables(q_r, k_r, T: int, config):
    """Any switch setting through Task 12.4's ``deberta_scores`` (the library calls the lesson, it
    does not repeat it): with k' = T, the slot's rows clip(i − j + T) and clip(j − i + T) are never
    clipped, so tables of 2T rows can hold whatever row of P each distance needs —
    K'[T + d] = K^r[c2p(d)] and Q'[T − d] = Q^r[p2c(d)] for every d = i − j in (−T, T).
    q_r, k_r (H, 2K, d) or None (an absent term: zeros) → (Q', K') (H, 2T, d) each, and k' = T."""
    c2p_rows, _ = relative_rows(np.arange(2 * T) - T, config)          # slot row r' holds distance r' − T
    _, p2c_rows = relative_rows(T - np.arange(2 * T), config)          # … and, for p2c, distance T − r'
    some = q_r if q_r is not None else k_r
    H, _, d = some.shape
    zeros = Tensor(np.zeros((H, 2 * T, d), dtype=some.data.dtype))
    q = q_r[:, p2c_rows] if q_r is not None else zeros
    k = k_r[:, c2p_rows] if k_r is not None else zeros
    return q, k, T
