"""Task 8.2: XLNet's two-stream self-attention (one layer, both streams).

Yang et al. 2019, "XLNet", §2.3 (Eq. 2 and Figure 1); zihangdai/xlnet ``modeling.py``
(``two_stream_rel_attn``, ``post_attention``, ``positionwise_ffn``).

The permutation objective asks for ``p(x_{z_t} | x_{z<t})``: the representation that predicts the
token at position ``z_t`` must know *where* it predicts (the position ``z_t``) but not *what* is
there (the token ``x_{z_t}``). One stream cannot do both — a later target needs ``x_{z_t}`` as
context. So XLNet keeps two streams with the same weights:

    content stream  h_i  starts from the word embedding (+ position); sees itself:
                    h_{z_t} ← Attn(Q = h_{z_t}, KV = h_{z≤t})        mask: content_mask
    query stream    g_i  starts from a learned ``mask_emb`` (+ position); does NOT see itself:
                    g_{z_t} ← Attn(Q = g_{z_t}, KV = h_{z<t})        mask: query_mask (= perm_mask)

Keys and values come from the **content** stream for both streams: the query stream only ever
reads h, and no stream ever reads g. Each stream then goes through the same layer norms and
feed-forward sublayer. (XLNet's layers are post-LN, like BERT's; minilm's are pre-LN, like GPT-2's:
at laptop size a post-LN XLNet stays at the unigram loss for well over a thousand steps, a pre-LN one
leaves it after a few hundred. The two streams and their masks are the same either way.)

Letters: B batch, T positions (keys), P query-stream rows (P = T, or the number of targets when
``target_mapping`` picks them), C channels, H heads.
"""
from __future__ import annotations

import numpy as np


def two_stream_layer(layer, h, g, content_mask, query_mask):
    """Task 8.2: one XLNet layer applied to both streams, with the SAME weights; returns ``(h, g)``.

    ``layer`` is a pre-LN ``minilm.blocks.Block`` and provides the modules you need:
    ``layer.attn(x, mask=allowed, kv=source)`` (multi-head attention: queries from ``x``, keys and
    values from ``source``, ``allowed`` a boolean array broadcastable to (B, H, Tq, Tk) with
    **True = may attend**), ``layer.ln1``, ``layer.mlp``, ``layer.ln2``.

    Inputs:
        h             (B, T, C) Tensor, the content stream
        g             (B, P, C) Tensor, the query stream (row p predicts one position)
        content_mask  (B, T, T) bool NumPy, XLNet's convention: True = row i may NOT attend to j
                      (``perm_mask`` with the diagonal cleared: a token sees itself)
        query_mask    (B, P, T) bool NumPy, same convention (the rows of ``perm_mask`` of the
                      predicted positions: a target does not see itself)

    The update (pre-LN, every sublayer shared by the two streams):

        1. h_in = LN₁(h);  g_in = LN₁(g)
        2. h = h + Attn(Q = h_in, K = V = h_in, mask = content_mask)     content stream
           g = g + Attn(Q = g_in, K = V = h_in, mask = query_mask)       query stream: K, V from h!
        3. h = h + MLP(LN₂(h));  g = g + MLP(LN₂(g))

    The masks arrive in XLNet's "may NOT attend" convention: turn them into the attention's
    "may attend" (``~mask``) and give them a head axis (``[:, None]`` → (B, 1, Tq, T)).

    The graded tests check the output against this update (B = H = 2, so a mask broadcast over
    the wrong axis fails); that changing a target's own content h_i leaves its query stream g_i
    bit-for-bit unchanged (and changes h_i); that changing g anywhere changes no other query row
    and no content row (K/V from h); that a loss on g alone reaches every weight of the layer
    (attention, LN₁, MLP, LN₂ shared by both streams); and a whole XLNet's logits on the slot.
    """
    # BEGIN SOLUTION
    content_allowed = ~np.asarray(content_mask, dtype=bool)[:, None]  # (B, 1, T, T) True = may attend
    query_allowed = ~np.asarray(query_mask, dtype=bool)[:, None]      # (B, 1, P, T)
    h_in, g_in = layer.ln1(h), layer.ln1(g)                           # (B, T, C), (B, P, C)
    h = h + layer.attn(h_in, mask=content_allowed, kv=h_in)           # sees itself
    g = g + layer.attn(g_in, mask=query_allowed, kv=h_in)             # K, V from the content
    h = h + layer.mlp(layer.ln2(h))                                   # (B, T, C)
    g = g + layer.mlp(layer.ln2(g))                                   # (B, P, C)
    return h, g
    # END SOLUTION
