"""From lists of token ids to the arrays a model eats: padding, batches, LM blocks, splits.

Letters: B batch, T time (sequence length), N number of blocks.

* ``pad_batch``    — ragged sequences -> ``ids (B, T)`` int64 and ``attention_mask (B, T)`` bool,
  padded on the right (``mask[b, t]`` is True on real tokens).
* ``batches``      — an iterator of index arrays over ``n`` examples, shuffled by ``rng``.
* ``lm_blocks``    — a token stream cut into GPT's teacher-forcing pairs: ``y[t] = x[t + 1]``.
* ``sample_lm_batch`` — nanoGPT's ``get_batch``: random windows of the stream.
* ``train_val_split`` — a held-out part of a list of examples or of a token stream.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from autograd.errors import MiniLMError, ShapeError

__all__ = ["pad_batch", "batches", "lm_blocks", "sample_lm_batch", "train_val_split"]


def _check_non_negative(ids: np.ndarray, where: str) -> None:
    if ids.size and ids.min() < 0:
        raise MiniLMError(f"{where}: token id {int(ids.min())} is negative: expected ids >= 0")


def _as_ids(seq, where: str) -> np.ndarray:
    arr = np.asarray(seq)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise ShapeError(f"{where}: got an array of shape {arr.shape} and dtype {arr.dtype}: "
                         "expected a 1-D sequence of integer ids")
    return arr.astype(np.int64)


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int, max_len: int | None = None, *,
              truncate: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Stack ragged id sequences into ``(ids, attention_mask)``, both ``(B, T)``, padding on the right.

    ``T`` is ``max_len`` when given, else the longest sequence. A sequence longer than ``max_len``
    raises ``ShapeError``, unless ``truncate=True``, which keeps its first ``max_len`` ids.
    ``pad_id`` may be any integer (e.g. -100 to pad labels).
    """
    if len(seqs) == 0:
        raise ShapeError("pad_batch: got no sequences: expected at least one")
    arrays = [_as_ids(s, f"pad_batch: sequence {i}") for i, s in enumerate(seqs)]
    longest = max(len(a) for a in arrays)
    if max_len is None:
        T = longest
    else:
        T = int(max_len)
        if T < 1:
            raise ShapeError(f"pad_batch: max_len={max_len}: expected >= 1")
        if longest > T and not truncate:
            i = next(i for i, a in enumerate(arrays) if len(a) > T)
            raise ShapeError(f"pad_batch: sequence {i} has {len(arrays[i])} ids, more than "
                             f"max_len={T}: shorten it or pass truncate=True")
    B = len(arrays)
    ids = np.full((B, T), pad_id, dtype=np.int64)           # (B, T)
    attention_mask = np.zeros((B, T), dtype=bool)           # (B, T)
    for b, a in enumerate(arrays):
        a = a[:T]
        ids[b, : len(a)] = a
        attention_mask[b, : len(a)] = True
    return ids, attention_mask


def batches(n: int, batch_size: int, *, rng: np.random.Generator | None = None, shuffle: bool = True,
            drop_last: bool = False) -> Iterator[np.ndarray]:
    """Yield index arrays covering ``range(n)`` in batches of ``batch_size`` (one epoch).

    With ``shuffle=True`` (needs ``rng``) the order is a fresh permutation; the last batch is smaller
    unless ``drop_last=True`` drops it.
    """
    if batch_size < 1 or n < 0:
        raise MiniLMError(f"batches: n={n}, batch_size={batch_size}: expected n >= 0, batch_size >= 1")
    if shuffle and rng is None:
        raise MiniLMError("batches: shuffle=True needs rng=numpy.random.Generator (no global random state)")
    order = rng.permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        yield order[start:start + batch_size]


def lm_blocks(ids, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut a 1-D token stream into non-overlapping next-token pairs ``x, y``, both ``(N, block_size)``.

    Block ``i`` is ``x = ids[i*bs : i*bs + bs]`` and ``y = ids[i*bs + 1 : i*bs + bs + 1]``, so
    ``y[:, t] == x[:, t + 1]`` for ``t < bs - 1``: the target at every position is the next token.
    ``N = (len(ids) - 1) // block_size``; the tail that does not fill a block is dropped.
    """
    ids = _as_ids(ids, "lm_blocks")
    _check_non_negative(ids, "lm_blocks")
    if block_size < 1:
        raise ShapeError(f"lm_blocks: block_size={block_size}: expected >= 1")
    N = (len(ids) - 1) // block_size
    if N < 1:
        raise ShapeError(f"lm_blocks: a stream of {len(ids)} tokens is too short for one block of "
                         f"{block_size}: expected at least block_size + 1 = {block_size + 1} tokens")
    x = ids[: N * block_size].reshape(N, block_size)            # (N, block_size)
    y = ids[1: N * block_size + 1].reshape(N, block_size)       # (N, block_size)
    return x, y


def sample_lm_batch(ids, block_size: int, batch_size: int, *, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``batch_size`` random windows of the stream (nanoGPT's ``get_batch``): ``x, y`` of shape
    ``(B, block_size)`` with ``y[:, t] = x[:, t + 1]``."""
    ids = _as_ids(ids, "sample_lm_batch")
    _check_non_negative(ids, "sample_lm_batch")
    if block_size < 1 or len(ids) < block_size + 1:
        raise ShapeError(f"sample_lm_batch: a stream of {len(ids)} tokens and block_size={block_size}: "
                         "expected block_size >= 1 and at least block_size + 1 tokens")
    starts = rng.integers(0, len(ids) - block_size, size=batch_size)   # (B,)
    offsets = starts[:, None] + np.arange(block_size)[None, :]          # (B, block_size)
    return ids[offsets], ids[offsets + 1]


def train_val_split(items, *, val_fraction: float = 0.1, rng: np.random.Generator | None = None):
    """Split ``items`` into ``(train, val)`` with ``round(len * val_fraction)`` items (at least 1) held out.

    A list (e.g. of documents) is shuffled first when ``rng`` is given, else the last items are held
    out. A 1-D NumPy array (a token stream) is always split at one point, never shuffled, so that no
    window straddles train and validation text.
    """
    n = len(items)
    if not 0.0 < val_fraction < 1.0 or n < 2:
        raise MiniLMError(f"train_val_split: {n} items, val_fraction={val_fraction}: expected "
                          "at least 2 items and 0 < val_fraction < 1")
    n_val = min(n - 1, max(1, round(n * val_fraction)))
    if isinstance(items, np.ndarray):
        return items[: n - n_val], items[n - n_val:]
    order = list(rng.permutation(n)) if rng is not None else list(range(n))
    items = list(items)
    return [items[i] for i in order[: n - n_val]], [items[i] for i in order[n - n_val:]]
