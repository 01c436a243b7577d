"""The six-sentence toy corpus of ``minilm demo``: small enough to read, big enough to overfit.

``SEED_SENTENCES`` keeps the original order. ``seed_corpus()`` groups the same sentences into
three documents, one per animal, so that the document-level objectives (NSP, packing) also have
something to work on.
"""
from __future__ import annotations

__all__ = ["SEED_SENTENCES", "seed_corpus"]

SEED_SENTENCES: tuple[str, ...] = (
    "cats eat fish",
    "dogs eat meat",
    "birds eat seeds",
    "cats drink milk",
    "dogs drink water",
    "birds sing songs",
)


def seed_corpus() -> list[list[str]]:
    """The seed sentences as documents, one per animal:
    ``[["cats eat fish", "cats drink milk"], ["dogs eat meat", "dogs drink water"],
    ["birds eat seeds", "birds sing songs"]]``."""
    docs: dict[str, list[str]] = {}
    for sentence in SEED_SENTENCES:
        docs.setdefault(sentence.split()[0], []).append(sentence)
    return list(docs.values())
