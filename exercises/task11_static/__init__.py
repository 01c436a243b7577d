"""Task module 11: static word vectors from contextual models."""
