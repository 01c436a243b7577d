"""Task 3.1: scaled dot-product attention with masks (Vaswani et al. 2017, §3.2.1, Eq. 1).

    Attention(Q, K, V) = softmax(Q Kᵀ / √d) V

Each query row of Q asks "which keys are like me?"; the scores Q Kᵀ say how much, the softmax over
the keys turns a score row into weights that sum to 1, and the output is the weighted sum of the
value rows. Dividing by √d keeps the scores' spread independent of the head width d (a dot product
of d unit-variance terms has variance d), so the softmax does not saturate as d grows.

A **mask** removes some (query, key) pairs before the softmax: causal (no future), padding (no pad
key), prefix LM. It is a boolean NumPy array, True = may attend, broadcastable to (B, H, Tq, Tk)
(see ``minilm/blocks/masks.py``). A query whose row is entirely masked (possible with padding, or a
prefix of length 0 in cross-attention) has nothing to attend to: its weights and its output are
zeros, never NaN.

Letters: B batch, H heads, Tq queries, Tk keys, d head width.
"""
from __future__ import annotations

import math

import numpy as np

import autograd.functional as F

MASKED_SCORE = -1e9  # a large negative (not -inf: a row of -inf would make softmax 0/0 = NaN)


def scaled_dot_product_attention(q, k, v, mask=None, *, bias=None, scale=True, dropout=None):
    """Task 3.1: softmax(q kᵀ / √d + bias, masked) v, returning ``(out, attn)``.

    Shapes (all Tensors except ``mask``):
        q (B, H, Tq, d), k (B, H, Tk, d), v (B, H, Tk, d_v)
        mask   None, or a boolean NumPy array broadcastable to (B, H, Tq, Tk); True = may attend
        bias   None, or a Tensor/array broadcastable to (B, H, Tq, Tk) added to the scores
               (T5's relative position bias), after the scaling
        out    (B, H, Tq, d_v)     attn (B, H, Tq, Tk): the weights, rows sum to 1 (or are all 0)

    The maths, in order:
        1. scores = q @ kᵀ                       (B, H, Tq, Tk)   kᵀ swaps the last two axes
        2. scores = scores / √d  if ``scale``    (T5 passes scale=False: no division)
        3. scores = scores + bias                if ``bias`` is given
        4. masked scores → a large negative number (``MASKED_SCORE``), where the mask is False
        5. attn = softmax(scores) over the **keys** (the last axis)
        6. rows where the mask is False everywhere → attn = 0 (step 4 made them uniform, not zero)
        7. attn = dropout(attn) if ``dropout`` is given (a function, e.g. an nn.Dropout module)
        8. out = attn @ v; return (out, attn) — ``attn`` as it was before the dropout of step 7

    Hints: ``k.transpose(0, 1, 3, 2)``; ``t.masked_fill(bool_array, value)`` (fills where True, so
    pass ``~mask``); ``F.softmax(x, axis=-1)``; ``mask.any(axis=-1, keepdims=True)`` finds the rows
    with at least one visible key. Keep everything as Tensor operations so gradients flow.

    The graded tests check: the output against the formula (with and without masks, d ≠ 1 so a
    missing √d shows); a causal mask hides the future (attn above the diagonal is 0, and changing a
    later key/value leaves earlier outputs unchanged); a padding mask removes pad *keys* (columns)
    while pad *queries* still attend normally; a fully masked row gives zeros and no NaN (values
    and gradients); ``scale=False`` and ``bias``; gradients against finite differences.
    """
    # BEGIN SOLUTION
    d = q.shape[-1]
    scores = q @ k.transpose(0, 1, 3, 2)                  # (B, H, Tq, Tk)
    s = 1.0 / math.sqrt(d) if scale else 1.0
    if bias is not None:                                   # the bias is added after the scaling
        scores, s = scores * s + bias, 1.0
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
    # Steps 2 and 4–6 as one fused node (F.scaled_masked_softmax, whose numba kernel is Task 2.4):
    # scale, softmax over the allowed keys only — a masked key gets exactly 0 (not e^(−1e9)) and a
    # row with no allowed key is all zeros — with one backward instead of four.
    attn = F.scaled_masked_softmax(scores, mask, scale=s)  # (B, H, Tq, Tk), over the keys
    weights = dropout(attn) if dropout is not None else attn
    out = weights @ v                                      # (B, H, Tq, d_v)
    return out, attn
    # END SOLUTION
