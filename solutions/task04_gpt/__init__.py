"""Task module 4: GPT (causal LM loss, decoding rules, beam search)."""
