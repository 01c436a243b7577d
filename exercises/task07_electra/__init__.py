"""Task module 7: ELECTRA (replaced-token detection)."""
