"""Task module 8: XLNet (permutation LM, two-stream attention)."""
