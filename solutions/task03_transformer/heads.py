"""Task 3.2: multi-head attention — split into heads, attend, merge (Vaswani et al. 2017, §3.2.2).

    MultiHead(X, S) = Concat(head₁, …, head_H) W_O,   headₕ = Attention(X W_Qʰ, S W_Kʰ, S W_Vʰ)

One attention with width C is replaced by H attentions of width d = C / H, each free to look for a
different relation. In practice the H query projections are one (C, C) matrix: the first d output
features belong to head 0, the next d to head 1, and so on. *Splitting* regroups the features of
every position by head; *merging* undoes it before the output projection W_O.

``S`` is the sequence the keys and values come from: ``S = X`` for self-attention, and the
**encoder's output** for the cross-attention of an encoder–decoder (T5, BART): the decoder asks
(queries), the encoder answers (keys, values).

This task writes the two reshapes. ``MultiHeadAttention.forward`` (``minilm/blocks/attention.py``)
runs the formula with them: project (queries from X, keys and values from S), ``split_heads``,
Task 3.1's scaled dot-product attention on every head at once, ``merge_heads``, then W_O.

Letters: B batch, T time, Tq queries, Tk keys, C channels (n_embd), H heads, d = C / H.
"""
from __future__ import annotations

from autograd.errors import ShapeError


def split_heads(x, n_head):
    """Task 3.2: (B, T, C) → (B, H, T, d) with d = C / H: head h at position t holds the features
    ``x[b, t, h·d:(h+1)·d]``.

    Two steps: ``reshape`` to (B, T, H, d) — this cuts each position's C features into H groups —
    then ``transpose`` to (B, H, T, d) so each head sees its own (T, d) matrix. A direct reshape to
    (B, H, T, d) is wrong: it keeps the memory order, so "head 0" would get the first T·d numbers
    of the sequence, i.e. whole positions mixed together.

    Raise ``ShapeError`` if C is not divisible by ``n_head``. The graded tests check every element
    against the definition above, that merge_heads(split_heads(x)) == x (gradient included: use
    Tensor ops, not ``.data``), and that one attention over the split queries, keys and values,
    merged, equals the paper's Concat(head₁, …, head_H) — for self-attention, and for
    cross-attention, where the keys and values have their own length Tk ≠ Tq.
    """
    B, T, C = x.shape
    if C % n_head:
        raise ShapeError(f"split_heads: n_embd {C} is not divisible by n_head {n_head}")
    # BEGIN SOLUTION
    d = C // n_head
    return x.reshape(B, T, n_head, d).transpose(0, 2, 1, 3)   # (B, T, H, d) -> (B, H, T, d)
    # END SOLUTION


def merge_heads(x):
    """Task 3.2: (B, H, T, d) → (B, T, C) with C = H·d, the inverse of ``split_heads``:
    ``out[b, t, h·d:(h+1)·d] = x[b, h, t]``. Transpose back first, then reshape."""
    # BEGIN SOLUTION
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)      # (B, T, H, d) -> (B, T, C)
    # END SOLUTION

