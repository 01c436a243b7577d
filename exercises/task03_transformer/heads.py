"""Task 3.2: multi-head attention — split into heads, attend, merge (Vaswani et al. 2017, §3.2.2).

    MultiHead(X, S) = Concat(head₁, …, head_H) W_O,   headₕ = Attention(X W_Qʰ, S W_Kʰ, S W_Vʰ)

One attention with width C is replaced by H attentions of width d = C / H, each free to look for a
different relation. In practice the H query projections are one (C, C) matrix: the first d output
features belong to head 0, the next d to head 1, and so on. *Splitting* regroups the features of
every position by head; *merging* undoes it before the output projection W_O.

``S`` is the sequence the keys and values come from: ``S = X`` for self-attention, and the
**encoder's output** for the cross-attention of an encoder–decoder (T5, BART): the decoder asks
(queries), the encoder answers (keys, values).

Letters: B batch, T time, Tq queries, Tk keys, C channels (n_embd), H heads, d = C / H.
"""
from __future__ import annotations

from autograd.errors import ShapeError
from minilm.blocks import attention as _lib  # the library's bound slots (never another slot directly)


def split_heads(x, n_head):
    """Task 3.2: (B, T, C) → (B, H, T, d) with d = C / H: head h at position t holds the features
    ``x[b, t, h·d:(h+1)·d]``.

    Two steps: ``reshape`` to (B, T, H, d) — this cuts each position's C features into H groups —
    then ``transpose`` to (B, H, T, d) so each head sees its own (T, d) matrix. A direct reshape to
    (B, H, T, d) is wrong: it keeps the memory order, so "head 0" would get the first T·d numbers
    of the sequence, i.e. whole positions mixed together.

    Raise ``ShapeError`` if C is not divisible by ``n_head``. The graded tests check every element
    against the definition above and that merge_heads(split_heads(x)) == x.
    """
    B, T, C = x.shape
    if C % n_head:
        raise ShapeError(f"split_heads: n_embd {C} is not divisible by n_head {n_head}")
    raise NotImplementedError("Task 3.2: split_heads")


def merge_heads(x):
    """Task 3.2: (B, H, T, d) → (B, T, C) with C = H·d, the inverse of ``split_heads``:
    ``out[b, t, h·d:(h+1)·d] = x[b, h, t]``. Transpose back first, then reshape."""
    raise NotImplementedError("Task 3.2: merge_heads")


def multi_head_forward(attn, x, kv=None, mask=None, bias=None):
    """Task 3.2: the forward pass of a ``MultiHeadAttention`` module ``attn``; returns ``(y, probs)``.

    ``attn`` (see ``minilm/blocks/attention.py``) provides:
        attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj   Linear layers (C → C)
        attn.n_head                                             H
        attn.scale                                              True: divide the scores by √d
        attn.attn_dropout                                       a Dropout module for the weights
    Inputs: x (B, Tq, C) — the queries' sequence; kv None (self-attention) or (B, Tk, C), the
    encoder output (cross-attention); mask, bias as in Task 3.1.
    Returns y (B, Tq, C) = out_proj(merged heads) and probs (B, H, Tq, Tk), the attention weights.

    Steps:
        1. source = x for self-attention, kv for cross-attention
        2. q = split_heads(q_proj(x)); k = split_heads(k_proj(source)); v = split_heads(v_proj(source))
        3. out, probs = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias,
                                                     scale=attn.scale, dropout=attn.attn_dropout)
        4. y = out_proj(merge_heads(out))

    Call the attention of step 3 as ``_lib.scaled_dot_product_attention`` (the library's binding
    of Task 3.1), not a copy of it. In a student release that binding runs your own Task 3.1 (there
    is no reference code to run instead), so this task's tests can only pass once Task 3.1 works;
    while Task 3.1 is a stub, ``minilm grade`` shows this task as blocked by Task 3.1.

    The graded tests check y and probs against a direct computation for self- and cross-attention
    (Tq ≠ Tk: keys and values must come from ``kv``, queries from ``x``).
    """
    raise NotImplementedError("Task 3.2: multi_head_forward")
