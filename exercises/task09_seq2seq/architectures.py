"""Task 9.2: the three architectures of T5 as attention masks, and where each one's loss is counted.

Raffel et al. (2020, §3.2.1, Figs. 3–4) compare three Transformer variants on the same text-to-text
data. They differ in which position may look at which (the *mask* M, True = may attend) and in
which positions carry a loss:

    encoder–decoder   encoder: fully visible over the source      M_enc[i, j]   = src j is real
                      decoder: causal over the target             M_dec[i, j]   = j ≤ i (and tgt j real)
                      cross-attention: every real source token    M_cross[i, j] = src j is real
                      loss on every real target token
    language model    one stack over [source ; target]: causal    M[i, j] = j ≤ i
    prefix LM         one stack over [source ; target]:           M[i, j] = j ≤ i  or  j < P
                      the prefix (the P source tokens) is fully visible, the rest causal
                      (both LMs: the loss on the target part only, when trained on (input, target) pairs)

Everything here is plain NumPy on integer/boolean arrays (no autograd): masks are computed once and
handed to the attention (``minilm/blocks/attention.py``), which adds −∞ where M is False.

Letters: B batch, S source length, T target (or whole-sequence) length, P prefix length.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError


def _check_size(op: str, name: str, n) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ConfigError(f"{op}: {name}={n!r}, expected a non-negative integer")
    return int(n)


def _check_pad(op: str, name: str, pad, length: int) -> np.ndarray:
    """``pad`` as a (B, length) bool array (True = padding)."""
    pad = np.asarray(pad)
    if pad.ndim != 2 or pad.shape[1] != length:
        raise ShapeError(f"{op}: {name} of shape {pad.shape}, expected (B, {length}) with True at padding")
    if pad.dtype != bool:
        raise ShapeError(f"{op}: {name} must be boolean (True = padding), got dtype {pad.dtype}")
    return pad


def encoder_decoder_masks(src_len, tgt_len, src_pad, tgt_pad):
    """Task 9.2: the three masks of an encoder–decoder (Raffel et al. Fig. 4, left).

    Args:
        src_len: S, the (padded) source length.     src_pad: (B, S) bool, True where the source is padding.
        tgt_len: T, the (padded) target length.     tgt_pad: (B, T) bool, True where the target is padding.
    Returns ``(enc_mask, dec_mask, cross_mask)``, boolean, True = may attend:

        enc_mask   (B, 1, S, S)   encoder self-attention: fully visible, except padded source keys
        dec_mask   (B, 1, T, T)   decoder self-attention: causal (key j ≤ query i), no padded target keys
        cross_mask (B, 1, T, S)   decoder → encoder: every real source token, no padded source keys

    The axis of size 1 is the heads axis (the same mask for every head). Padding is masked on the
    **keys** (the last axis) only: a padded query still gets an output, which the loss ignores.

    Hint: build a (B, 1, 1, S) "key is real" array with ``~src_pad[:, None, None, :]`` and broadcast
    it with ``&`` (e.g. against ``np.ones((S, S), bool)`` or a ``np.tril`` causal matrix).
    The graded tests check the shapes, that the encoder sees both directions, that the decoder never
    sees a later target token, and that neither the encoder nor the cross-attention looks at source
    padding.
    """
    op = "encoder_decoder_masks"
    S, T = _check_size(op, "src_len", src_len), _check_size(op, "tgt_len", tgt_len)
    src_pad, tgt_pad = _check_pad(op, "src_pad", src_pad, S), _check_pad(op, "tgt_pad", tgt_pad, T)
    if src_pad.shape[0] != tgt_pad.shape[0]:
        raise ShapeError(f"{op}: src_pad has batch {src_pad.shape[0]} but tgt_pad has {tgt_pad.shape[0]}")
    raise NotImplementedError("Task 9.2: encoder_decoder_masks")


def causal_lm_mask(T):
    """Task 9.2: the language model's mask (Raffel et al. Fig. 3, middle): ``M[i, j] = (j ≤ i)``.

    Returns a (T, T) bool array: position i sees itself and everything before it, never a later
    position. (``T = 0`` gives an empty (0, 0) array.)
    """
    T = _check_size("causal_lm_mask", "T", T)
    raise NotImplementedError("Task 9.2: causal_lm_mask")


def prefix_lm_mask(T, prefix_len):
    """Task 9.2: the prefix LM's mask (Raffel et al. Fig. 3, right): ``M[i, j] = (j ≤ i) or (j < P)``.

    The first P = ``prefix_len`` positions (the input text) are *fully visible*: every position,
    including the earlier prefix positions, sees all of them, so the prefix is encoded in both
    directions like an encoder. Positions from P on are causal: they see the prefix and the target
    tokens up to themselves, never a later one. ``P = 0`` (and ``P = 1``) give the causal mask,
    ``P = T`` the fully visible one; ``0 ≤ P ≤ T`` or it raises.

    Returns a (T, T) bool array. The graded tests check that the prefix sees itself both ways, that no
    target position sees a later one, and the two limiting cases.
    """
    T = _check_size("prefix_lm_mask", "T", T)
    P = _check_size("prefix_lm_mask", "prefix_len", prefix_len)
    if P > T:
        raise ConfigError(f"prefix_lm_mask: prefix_len={P} is longer than the sequence T={T}")
    raise NotImplementedError("Task 9.2: prefix_lm_mask")


def lm_labels(ids, prefix_len, lengths, *, ignore_index=-100):
    """Task 9.2: next-token labels for a decoder-only model trained on ``[source ; target]``.

    Args:
        ids: (B, T) int, each row ``source tokens, target tokens, padding``.
        prefix_len: (B,) int, P_b = the number of source (prefix) tokens of row b (0 ≤ P_b ≤ L_b).
        lengths: (B,) int, L_b = the number of real tokens of row b (prefix + target, no padding).
    Returns ``labels`` (B, T) int64: position t predicts token t + 1 (teacher forcing),

        labels[b, t] = ids[b, t + 1]   if P_b ≤ t + 1 < L_b    (the next token is a target token)
                     = ignore_index    otherwise                (a prefix token, padding, or the end)

    so the loss counts only the target part: the prefix is *given*, not predicted (T5 trains both its
    LM and its prefix LM this way on input–target pairs). The first target token is predicted from
    the last prefix position t = P_b − 1. With P_b = 0 every next token of the row is predicted
    (plain language modelling). Do not mutate ``ids``.

    The graded tests check the exact labels, that no prefix token and no padding is ever a label,
    and that the last real position predicts nothing.
    """
    op = "lm_labels"
    ids = np.asarray(ids)
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ShapeError(f"{op}: ids of shape {ids.shape} and dtype {ids.dtype}, expected (B, T) integer ids")
    B, T = ids.shape
    prefix_len, lengths = np.asarray(prefix_len), np.asarray(lengths)
    if prefix_len.shape != (B,) or lengths.shape != (B,):
        raise ShapeError(f"{op}: prefix_len {prefix_len.shape} and lengths {lengths.shape}, expected ({B},) each")
    if ((prefix_len < 0) | (prefix_len > lengths) | (lengths > T)).any():
        raise ConfigError(f"{op}: need 0 <= prefix_len <= lengths <= T={T}, got prefix_len "
                          f"{prefix_len.tolist()}, lengths {lengths.tolist()}")
    raise NotImplementedError("Task 9.2: lm_labels")
