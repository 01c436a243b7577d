"""Task module 3: the Transformer (attention with masks, multi-head, positions, pre-LN and post-LN blocks)."""
