"""Task module 6: RoBERTa (dynamic masking, packing, byte-level BPE)."""
