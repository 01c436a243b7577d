"""The hand-written Transformer parts every model in minilm is built from.

    from minilm.blocks import MultiHeadAttention, FeedForward, Block, causal_mask, padding_mask, \\
        prefix_lm_mask, sinusoidal_positions, LearnedPositionEmbedding, SegmentEmbedding, \\
        relative_position_bucket, RelativePositionBias

Read in this order: ``masks.py`` (which key each query may see), ``attention.py`` (multi-head
attention; Tasks 3.1–3.2), ``positions.py`` and ``embeddings.py`` (word order and the input sum;
Task 3.3), ``feedforward.py``, ``block.py`` (pre-LN / post-LN; Task 3.4).

Masks are boolean NumPy arrays, True = may attend, broadcastable to (B, H, Tq, Tk); combine
them with ``&``.
"""
from .attention import MultiHeadAttention, merge_heads, scaled_dot_product_attention, split_heads
from .block import Block
from .embeddings import SegmentEmbedding, check_token_ids, embed_inputs
from .feedforward import FeedForward
from .masks import causal_mask, padding_mask, prefix_lm_mask
from .positions import (LearnedPositionEmbedding, RelativePositionBias, relative_position_bucket,
                        sinusoidal_positions)

__all__ = [
    "MultiHeadAttention", "FeedForward", "Block", "causal_mask", "padding_mask", "prefix_lm_mask",
    "sinusoidal_positions", "LearnedPositionEmbedding", "SegmentEmbedding", "relative_position_bucket",
    "RelativePositionBias", "scaled_dot_product_attention", "split_heads", "merge_heads", "embed_inputs",
    "check_token_ids",
]
