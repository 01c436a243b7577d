"""minilm: the Transformer pre-training families, built from scratch on the autograd engine."""
__version__ = "0.1.0"
