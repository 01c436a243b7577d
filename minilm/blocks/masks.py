"""Attention masks: which key each query may look at.

Every mask here is a boolean NumPy array with **True = may attend**, broadcastable to the attention
scores' shape (B, H, Tq, Tk). Masks combine with ``&``: a causal decoder over a padded batch uses
``causal_mask(T) & padding_mask(attention_mask)`` → (B, 1, T, T).

The three architectures of Raffel et al. (2020, §3.2.1, Figs. 3–4) differ only in their mask:

==================  ====================  =====================================
architecture        mask                  M[i, j] (query i, key j)
==================  ====================  =====================================
fully visible       ``None``              1 (BERT, the T5 encoder)
causal              ``causal_mask(T)``    j ≤ i (GPT, every decoder)
causal with prefix  ``prefix_lm_mask``    j ≤ i or j < P (prefix LM)
==================  ====================  =====================================

Letters: B batch, H heads, T time, Tq queries, Tk keys, P prefix length.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError


def _check_length(op: str, name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ConfigError(f"{op}: {name}={n!r}, expected a non-negative integer")
    return int(n)


def causal_mask(T: int) -> np.ndarray:
    """(T, T) lower-triangular: query i sees keys 0..i, never the future."""
    T = _check_length("causal_mask", "T", T)
    return np.tril(np.ones((T, T), dtype=bool))


def padding_mask(attention_mask) -> np.ndarray:
    """(B, Tk) of 1 (a real token) / 0 (padding) → (B, 1, 1, Tk): no query attends to a pad key.

    The mask is on the **keys** (last axis): a padded *query* still produces an output (ignored by
    the loss); only a padded *key* must never be looked at.
    """
    a = np.asarray(attention_mask)
    if a.ndim != 2:
        raise ShapeError(f"padding_mask: attention_mask of shape {a.shape}, expected (B, Tk) of 1/0")
    if a.dtype != bool and not np.isin(a, (0, 1)).all():
        raise ShapeError("padding_mask: attention_mask must hold only 1 (token) and 0 (padding), "
                         f"got values {np.unique(a)[:6].tolist()}")
    return a.astype(bool)[:, None, None, :]  # (B, 1, 1, Tk)


def prefix_lm_mask(T: int, P: int) -> np.ndarray:
    """(T, T) with M[i, j] = (j ≤ i) or (j < P): the first P positions (the prefix, e.g. the input
    text) are visible to everyone, the rest is causal (Raffel et al. Fig. 3, right)."""
    T = _check_length("prefix_lm_mask", "T", T)
    P = _check_length("prefix_lm_mask", "P", P)
    if P > T:
        raise ConfigError(f"prefix_lm_mask: prefix length P={P} is longer than the sequence T={T}: "
                          "expected 0 <= P <= T")
    j = np.arange(T)
    return causal_mask(T) | (j[None, :] < P)  # (T, T)


def check_mask(op: str, mask, scores_shape: tuple) -> np.ndarray | None:
    """``mask`` as a boolean array that broadcasts to ``scores_shape`` (B, H, Tq, Tk), or None."""
    if mask is None:
        return None
    m = np.asarray(getattr(mask, "data", mask))
    if m.dtype != bool:
        raise ShapeError(f"{op}: the mask must be boolean (True = may attend), got dtype {m.dtype}")
    try:
        fits = np.broadcast_shapes(m.shape, tuple(scores_shape)) == tuple(scores_shape)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}: mask of shape {m.shape} does not broadcast to the attention scores "
                         f"(B, H, Tq, Tk) = {tuple(scores_shape)}")
    return m
