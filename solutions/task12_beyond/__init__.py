"""Task module 12: beyond (GPT-1 fine-tuning, whole-word masking, Transformer-XL, DeBERTa)."""
