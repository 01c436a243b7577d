"""The capstones' vocabularies, ready-made: a GPT or BERT capstone must not wait for Task 6.2.

Training a WordPiece vocabulary runs Task 6.2's ``train_merges`` (the library never carries a copy of
a task's answer), so in a student release a capstone that trained its own vocabulary would be
"blocked by Task 6.2" until module 6 is done. The capstones grade modules 3-5, so they use the
vocabulary that the reference trains on the same text instead: ``tests/data/capstone/NAME.vocab.txt``,
written by ``python tools/make_capstone_vocab.py`` (a test checks it is current).
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from minilm.tokenizers import WordPieceTokenizer
from minilm.tokenizers.wordpiece import read_vocab_txt

FOLDER = Path(__file__).resolve().parent / "data" / "capstone"


def ready(name: str) -> WordPieceTokenizer:
    """The vocabulary ``name`` as ``WordPieceTokenizer.train`` gives it (same specials, roles, case)."""
    return WordPieceTokenizer.with_vocab(read_vocab_txt(FOLDER / f"{name}.vocab.txt"))


@contextlib.contextmanager
def trained_as(name: str):
    """Inside the block, ``WordPieceTokenizer.train`` returns the ready-made vocabulary ``name``
    (for a recipe that trains its vocabulary itself)."""
    real = WordPieceTokenizer.__dict__["train"]
    WordPieceTokenizer.train = classmethod(lambda cls, texts, vocab_size, **kw: ready(name))
    try:
        yield
    finally:
        WordPieceTokenizer.train = real
