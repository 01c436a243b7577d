"""Synthetic text-to-text tasks with T5-style task prefixes (Raffel et al. 2020, §2.4).

T5 casts every task as "text in, text out" and tells the model which task it is doing with a
prefix ("translate English to German: ..."). These toy tasks keep that format on sequences of
letters, small enough to learn in minutes on a CPU:

    copy: d a c        ->  d a c
    reverse: d a c     ->  c a d
    sort: d a c        ->  a c d
    count: d a c       ->  3            (the number of letters, as digits)

``seq2seq_dataset("mixed", ...)`` draws the task per example, so one model has to read the prefix.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import MiniLMError

__all__ = ["SEQ2SEQ_TASKS", "ALPHABET", "seq2seq_dataset", "seq2seq_target"]

SEQ2SEQ_TASKS: tuple[str, ...] = ("copy", "reverse", "sort", "count")
ALPHABET: tuple[str, ...] = tuple("abcdefghij")


def seq2seq_target(task: str, words: list[str]) -> str:
    """The answer of ``task`` on the input ``words`` (no prefix)."""
    if task == "copy":
        return " ".join(words)
    if task == "reverse":
        return " ".join(reversed(words))
    if task == "sort":
        return " ".join(sorted(words))
    if task == "count":
        return str(len(words))
    raise MiniLMError(f"seq2seq_target: unknown task {task!r}: expected one of {SEQ2SEQ_TASKS}")


def seq2seq_dataset(task: str, n: int, *, rng: np.random.Generator, min_len: int = 3, max_len: int = 8,
                    alphabet=ALPHABET) -> list[tuple[str, str]]:
    """``n`` pairs ``("TASK: w1 w2 ...", target)``; inputs have ``min_len..max_len`` (inclusive)
    words drawn uniformly from ``alphabet``. ``task`` is one of ``SEQ2SEQ_TASKS`` or ``"mixed"``."""
    if task != "mixed" and task not in SEQ2SEQ_TASKS:
        raise MiniLMError(f"seq2seq_dataset: unknown task {task!r}: "
                          f"expected 'mixed' or one of {SEQ2SEQ_TASKS}")
    if not 1 <= min_len <= max_len or n < 0 or not alphabet:
        raise MiniLMError(f"seq2seq_dataset: n={n}, min_len={min_len}, max_len={max_len}, "
                          f"{len(alphabet)} letters: expected n >= 0, 1 <= min_len <= max_len, letters")
    out = []
    for _ in range(n):
        t = SEQ2SEQ_TASKS[int(rng.integers(len(SEQ2SEQ_TASKS)))] if task == "mixed" else task
        length = int(rng.integers(min_len, max_len + 1))
        words = [alphabet[i] for i in rng.integers(len(alphabet), size=length)]
        out.append((f"{t}: " + " ".join(words), seq2seq_target(t, words)))
    return out
