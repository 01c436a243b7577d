"""Task 3.4: the Transformer block, with layer norm after (post-LN) or before (pre-LN) each sublayer.

A block is two (a decoder of an encoder–decoder: three) sublayers, each wrapped in a residual
connection and a layer norm. Where the layer norm goes is the difference between two generations:

    post-LN (Vaswani et al. 2017; BERT)        pre-LN (GPT-2 §2.3; T5)
    x = LN₁(x + Attn(x))                        x = x + Attn(LN₁(x))
    x = LN_c(x + CrossAttn(x, enc))             x = x + CrossAttn(LN_c(x), enc)
    x = LN₂(x + MLP(x))                         x = x + MLP(LN₂(x))

Post-LN normalises the residual stream itself after every sublayer. Pre-LN leaves the stream
untouched (an identity path from input to output, which keeps gradients healthy in deep stacks, so
it trains without warm-up tricks) and normalises only what enters each sublayer; it then needs a
final layer norm after the last block (GPT-2's ``ln_f``). Xiong et al. (2020) analyse the two.

Letters: B batch, T time, Tk encoder length, C channels.
"""
from __future__ import annotations


def pre_ln_forward(block, x, mask=None, enc=None, enc_mask=None, bias=None):
    """Task 3.4: the pre-LN block (GPT-2): x + Attn(LN₁(x)), [x + Cross(LN_c(x), enc)], x + MLP(LN₂(x)).

    ``block`` (see ``minilm/blocks/block.py``) provides the modules
        block.ln1, block.attn, block.ln2, block.mlp         always
        block.ln_cross, block.cross_attn                   only when ``block.cross_attn is not None``
    Call them as ``block.attn(h, mask=mask, bias=bias)`` (self-attention),
    ``block.cross_attn(h, mask=enc_mask, kv=enc)`` (cross-attention: keys/values from ``enc``),
    ``block.mlp(h)``, ``block.ln1(h)``. Each returns one Tensor of the shape of ``h``, (B, T, C).
    ``block.attn(...)`` and ``block.cross_attn(...)`` return the sublayer's output only: the heads'
    attention output after the output projection ``out_proj`` (and dropout), with no residual
    added, and not a tuple (the module stores the attention weights (B, H, T, T) in
    ``block.attn.last_attention``).
    Shapes: x (B, T, C), enc (B, Tk, C); returns (B, T, C).
    Run the cross-attention sublayer only when ``block.cross_attn is not None``.

    The graded tests compare with a direct computation from the block's own modules (its layer
    norms have non-trivial weights, so a norm in the wrong place or a missing residual shows).
    """
    # BEGIN SOLUTION
    x = x + block.attn(block.ln1(x), mask=mask, bias=bias)                    # (B, T, C)
    if block.cross_attn is not None:
        x = x + block.cross_attn(block.ln_cross(x), mask=enc_mask, kv=enc)
    x = x + block.mlp(block.ln2(x))
    return x
    # END SOLUTION


def post_ln_forward(block, x, mask=None, enc=None, enc_mask=None, bias=None):
    """Task 3.4: the post-LN block (original Transformer, BERT): LN₁(x + Attn(x)),
    [LN_c(x + Cross(x, enc))], LN₂(x + MLP(x)).

    Same modules and calling conventions as ``pre_ln_forward``; here each layer norm is applied to
    the *sum* of the residual and the sublayer's output. Returns (B, T, C).
    """
    # BEGIN SOLUTION
    x = block.ln1(x + block.attn(x, mask=mask, bias=bias))                   # (B, T, C)
    if block.cross_attn is not None:
        x = block.ln_cross(x + block.cross_attn(x, mask=enc_mask, kv=enc))
    x = block.ln2(x + block.mlp(x))
    return x
    # END SOLUTION
