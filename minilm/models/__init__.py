"""The model families, one file each, all built from ``minilm.blocks`` on the autograd engine.

    from minilm.models.gpt import GPT, GPTConfig      # decoder-only, next-token prediction

The other families (BERT, ELECTRA, XLNet, T5, BART, ...) live beside it as ``minilm.models.<family>``;
import them from their own module.
"""
from .gpt import GPT, GPTConfig

__all__ = ["GPT", "GPTConfig"]
