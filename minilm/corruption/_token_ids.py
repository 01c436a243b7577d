"""Argument checks shared by the RoBERTa, XLNet, T5 and BART corruptions (not part of the public API).

Every corruption takes a 1-D array of token ids and a few numbers; these helpers turn bad input into
one clear error that names the operation, what it received and what it expected, instead of letting
NumPy wrap a negative id or index past the end of an array.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError, TokenizerError

__all__: list[str] = []


def as_ids(ids, *, op: str, vocab_size: int | None = None, min_length: int = 1,
           name: str = "ids") -> np.ndarray:
    """A new 1-D int64 copy of ``ids``, after checking shape, length, dtype and range."""
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ShapeError(f"{op}: {name} has shape {arr.shape}: expected a 1-D array of token ids")
    if arr.size < min_length:
        raise ShapeError(f"{op}: {name} has length {arr.size}: expected at least {min_length} "
                         f"token{'s' if min_length != 1 else ''}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TokenizerError(f"{op}: {name} has dtype {arr.dtype}: expected integer token ids")
    arr = arr.astype(np.int64, copy=True)
    check_range(arr, op=op, vocab_size=vocab_size, name=name)
    return arr


def check_range(arr: np.ndarray, *, op: str, vocab_size: int | None, name: str = "ids") -> None:
    """Refuse negative ids (NumPy would wrap them) and, when the vocabulary is known, ids >= V."""
    if arr.size == 0:
        return
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0:
        raise TokenizerError(f"{op}: {name} contains the negative id {lo}: expected ids >= 0")
    if vocab_size is not None and hi >= vocab_size:
        raise TokenizerError(f"{op}: {name} contains the id {hi}: expected ids < vocab_size "
                             f"{vocab_size}")


def check_id(value, *, op: str, name: str, vocab_size: int | None = None) -> int:
    """One special id (mask, eos, full stop): an int in [0, vocab_size)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{op}: {name}={value!r}: expected an integer token id")
    value = int(value)
    if value < 0 or (vocab_size is not None and value >= vocab_size):
        upper = f", < vocab_size {vocab_size}" if vocab_size is not None else ""
        raise TokenizerError(f"{op}: {name}={value}: expected an id >= 0{upper}")
    return value


def check_fraction(value, *, op: str, name: str, upper_open: bool = False) -> float:
    """A probability-like number in [0, 1] (or [0, 1) with ``upper_open``)."""
    value = float(value)
    ok = 0.0 <= value < 1.0 if upper_open else 0.0 <= value <= 1.0
    if not ok:
        interval = "[0, 1)" if upper_open else "[0, 1]"
        raise ConfigError(f"{op}: {name}={value}: expected a number in {interval}")
    return value


def check_mask_probs(op: str, prob, leave_unmasked_prob, random_token_prob) -> None:
    """RoBERTa's masking rates (fairseq's names), each in [0, 1], and so is their share of the masked
    units that do not become <mask> (``leave_unmasked_prob + random_token_prob``)."""
    for name, p in (("prob", prob), ("leave_unmasked_prob", leave_unmasked_prob),
                    ("random_token_prob", random_token_prob),
                    ("leave_unmasked_prob + random_token_prob", leave_unmasked_prob + random_token_prob)):
        check_fraction(p, op=op, name=name)


def check_mask_args(op: str, *, mask_id, vocab_size: int, nspecial, prob, leave_unmasked_prob,
                    random_token_prob) -> None:
    """The arguments of RoBERTa's masking (``roberta_mask``, whole-word masking): the rates
    (:func:`check_mask_probs`) and the ids a masked token may become (:func:`check_replacement_ids`)."""
    check_mask_probs(op, prob, leave_unmasked_prob, random_token_prob)
    check_replacement_ids(op, mask_id=mask_id, vocab_size=vocab_size, nspecial=nspecial)


def check_replacement_ids(op: str, *, mask_id, vocab_size: int, nspecial) -> None:
    """The <mask> id, and ``nspecial``, the first id a random replacement may take (Task 6.1's
    ``apply_mask_plan``)."""
    check_id(mask_id, op=op, name="mask_id", vocab_size=vocab_size)
    if not 0 <= nspecial < vocab_size:
        raise ConfigError(f"{op}: nspecial={nspecial}: expected 0 <= nspecial < vocab_size={vocab_size}")


def check_sentinel_args(ids, sentinel_ids, eos_id, *, op: str):
    """T5's span corruption: ``(ids, sentinel_ids, eos_id)`` as new int64 arrays and an int. The ids
    may not contain a sentinel (it could not be told apart from the one that replaces a span)."""
    ids = as_ids(ids, op=op)
    sentinel_ids = as_ids(sentinel_ids, op=op, name="sentinel_ids")
    eos_id = check_id(eos_id, op=op, name="eos_id")
    clash = np.isin(ids, sentinel_ids)
    if clash.any():
        raise TokenizerError(f"{op}: ids contain the sentinel id {ids[clash][0]}: sentinels must not "
                             f"occur in the text being corrupted")
    return ids, sentinel_ids, eos_id


def check_word_starts(word_starts, L: int, *, op: str) -> np.ndarray:
    """BART's ``(L,)`` bool word-start flags (default: every token starts a word, fairseq's
    ``subword``), as a new array with the first and last positions ``False``: never noised."""
    if word_starts is None:
        starts = np.ones(L, dtype=bool)
    else:
        starts = np.array(word_starts, dtype=bool)  # a new array: never touch the caller's
        if starts.shape != (L,):
            raise ShapeError(f"{op}: word_starts has shape {starts.shape}: expected ({L},), one flag "
                             f"per token")
    starts[0] = starts[-1] = False
    return starts


def check_random_ids(mask_random, vocab_size, *, op: str) -> float:
    """BART's ``mask_random`` in [0, 1]; > 0 draws random ids in ``[1, V)``, so it needs ``vocab_size``."""
    mask_random = check_fraction(mask_random, op=op, name="mask_random")
    if mask_random > 0 and vocab_size is None:
        raise ConfigError(f"{op}: mask_random={mask_random} draws random ids: pass vocab_size")
    return mask_random


def check_positive(value, *, op: str, name: str) -> float:
    value = float(value)
    if not value > 0.0 or not np.isfinite(value):
        raise ConfigError(f"{op}: {name}={value}: expected a finite number > 0")
    return value


def check_length(value, *, op: str, name: str, minimum: int = 1) -> int:
    """A count such as a sequence length: an int >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{op}: {name}={value!r}: expected an integer")
    if value < minimum:
        raise ShapeError(f"{op}: {name}={value}: expected an integer >= {minimum}")
    return int(value)
