"""Task 9.3: BART's noising functions (Lewis et al. 2020, §2.2; fairseq ``denoising_dataset.py``).

BART is trained to rebuild a document from a corrupted copy. The corruptions, all of which keep the
first token ``<s>`` and the last token ``</s>`` in place:

* token masking   — words become ``<mask>``, one ``<mask>`` per token (length unchanged);
* token deletion  — words are removed;
* text infilling  — spans with Poisson(λ=3) lengths each become ONE ``<mask>``; a span of length 0
  *inserts* a ``<mask>`` (so the model also learns how many tokens are missing);
* sentence permutation — the sentences (ending at a full stop) are shuffled;
* document rotation — the document is rotated to start at a random token.

The first three are one function in fairseq (``add_whole_word_mask``) with a ``replace_length`` of
-1, 0 or 1 — and so they are here: :func:`whole_word_mask`.

Letters: L sequence length (``<s>`` and ``</s>`` included), V vocabulary size, λ Poisson mean,
S number of spans, n number of inserted tokens.
"""
from __future__ import annotations

import math

import numpy as np

from autograd.errors import ConfigError, ShapeError
from minilm.corruption import bart as bart_lib  # the library's bindings of this task's slots
from minilm.corruption._token_ids import as_ids, check_fraction, check_id, check_length
from minilm.corruption.bart import truncated_poisson_pmf  # noqa: F401 - a helper for the slots


def check_word_starts(word_starts, L, op="whole_word_mask"):
    """``(L,)`` bool word-start flags (default: every token starts a word, fairseq's ``subword``),
    with the first and last positions forced to ``False``: they are never noised."""
    if word_starts is None:
        starts = np.ones(L, dtype=bool)
    else:
        starts = np.array(word_starts, dtype=bool)  # a new array: never touch the caller's
        if starts.shape != (L,):
            raise ShapeError(f"{op}: word_starts has shape {starts.shape}: expected ({L},), one flag "
                             f"per token")
    starts[0] = starts[-1] = False
    return starts


def check_random_ids(mask_random, vocab_size, op):
    """``mask_random`` > 0 draws random ids in ``[1, V)``, so it needs ``vocab_size``."""
    mask_random = check_fraction(mask_random, op=op, name="mask_random")
    if mask_random > 0 and vocab_size is None:
        raise ConfigError(f"{op}: mask_random={mask_random} draws random ids: pass vocab_size")
    return mask_random


def poisson_span_lengths(num_to_mask, *, rng, poisson_lambda=3.0):
    """Task 9.3: span lengths for text infilling, summing to exactly ``num_to_mask``.

    fairseq's recipe (``add_whole_word_mask`` with ``mask_length=span-poisson``):

    1. The distribution is ``pmf = truncated_poisson_pmf(poisson_lambda)`` (imported here): Poisson
       over ``k = 0 … K-1``, cut where it drops below 1e-7 and renormalised.
    2. Draw ``num_to_mask`` lengths at once (``rng.choice(len(pmf), size=num_to_mask, p=pmf)``);
       while their sum is below ``num_to_mask``, draw another batch of ``num_to_mask`` and append.
    3. Cut at the first index i where the running sum reaches ``num_to_mask``, and shorten span i to
       what is left of the budget (``num_to_mask - sum of spans before i``, which is >= 1).

    Returns ``lengths (S,)`` int64, ``lengths.sum() == num_to_mask``, zeros allowed (they become
    insertions), the last one >= 1; ``num_to_mask == 0`` gives an empty array. Tests check the sum,
    that the last is positive, and (chi-square) that the other lengths follow the truncated pmf.
    """
    raise NotImplementedError("Task 9.3: poisson_span_lengths")


def whole_word_mask(ids, *, rng, mask_id, ratio, replace_length=1, poisson_lambda=None,
                    word_starts=None, mask_random=0.0, vocab_size=None):
    """Task 9.3: fairseq's ``add_whole_word_mask`` — token masking, deletion and text infilling.

    ``ids (L,)`` start with ``<s>`` and end with ``</s>``; returns a new 1-D array.

    1. Word starts: ``starts = check_word_starts(word_starts, L)`` (first and last never starts).
       ``num_to_mask = ceil(starts.sum() · ratio)``; if it is 0, return a copy of ``ids``.
    2. Span lengths, in words. ``poisson_lambda is None``: ``num_to_mask`` spans of length 1.
       Otherwise ``bart_lib.poisson_span_lengths(num_to_mask, rng=rng, poisson_lambda=...)`` (the
       library's binding — do not call this file's slot directly); the zero-length spans are set
       aside as ``num_inserts`` (at least one span is left: the last length is >= 1).
    3. Span starts: ``S`` word starts drawn without replacement (``rng.permutation`` of
       ``np.flatnonzero(starts)``, first S). Each span is *random* with probability ``mask_random``
       (a random id from ``rng.integers(1, vocab_size)`` instead of ``<mask>``).
    4. A span of length l covers its start token and walks right through the next l-1 words: a
       word start uses up one unit of length, a continuation piece (``starts[j] == False``) is
       swallowed for free, and the walk stops before the word start that would make it l+1 words —
       or before the last token ``</s>``, which no span may reach. Spans may overlap.
    5. ``replace_length``:
       ``-1``: every covered token becomes ``<mask>`` (token masking; length unchanged);
       ``0``: every covered token is deleted (token deletion);
       ``1``: the start token becomes ``<mask>``, the rest of the span is deleted (text infilling:
       ONE ``<mask>`` per span, however long). Apply deletions at the end with a ``keep`` mask.
    6. With ``num_inserts > 0``, finish with ``bart_lib.insert_tokens(out, num_inserts, rng=rng,
       mask_id=mask_id, mask_random=mask_random, vocab_size=vocab_size)``: a span of length 0
       INSERTS one ``<mask>``.

    Tests check the masked counts, whole words, that ``<s>``/``</s>`` never move, one ``<mask>`` per
    span for ``replace_length=1``, and that zero-length spans insert.
    """
    raise NotImplementedError("Task 9.3: whole_word_mask")


def insert_tokens(ids, n, *, rng, mask_id, mask_random=0.0, vocab_size=None):
    """Task 9.3: insert exactly ``n`` noise tokens at random inner positions (fairseq's
    ``add_insertion_noise``, with the count given instead of a ratio).

    The result has ``L + n`` slots. Choose the ``n`` new slots uniformly among ``1 … L+n-2`` (never
    the first or the last slot: ``rng.permutation(L + n - 2)[:n] + 1``). The first
    ``ceil(n · mask_random)`` of those chosen slots get random ids ``rng.integers(1, vocab_size)``,
    the others ``mask_id``; every other slot receives the original ids, in order.
    Returns a new array of length ``L + n``; ``n == 0`` returns a copy.
    """
    raise NotImplementedError("Task 9.3: insert_tokens")


def sentence_permutation(ids, *, full_stop_id, rng, p=1.0):
    """Task 9.3: shuffle ``ceil(n_sentences · p)`` of the sentences (fairseq's ``permute_sentences``).

    1. ``full_stops = ids == full_stop_id``, then pretend position ``-2`` (just before ``</s>``) is a
       full stop, so the text always ends a sentence.
    2. A sentence ends just after a full stop that is not preceded by a full stop: the exclusive
       ends are ``np.flatnonzero(full_stops[1:] & ~full_stops[:-1]) + 2``. Sentence i runs from the
       previous end (``1`` for the first: ``<s>`` is not part of it) to its own end.
    3. Choose ``k = ceil(n · p)`` sentences (``rng.permutation(n)[:k]``) and give them a random
       order among the slots they occupy; the others stay in place.
    4. Write the sentences back one after the other from position 1. ``<s>``, ``</s>`` (and any
       token after the last sentence end) stay where they were.

    Returns a new array of the same length; the tokens are a rearrangement of the input, whole
    sentences at a time. Tests check the multiset, that sentences stay intact, the number moved,
    and that all orders occur equally often.
    """
    raise NotImplementedError("Task 9.3: sentence_permutation")


def document_rotation(ids, *, rng):
    """Task 9.3: rotate the document to begin at a random token (fairseq's ``add_rolling_noise``).

    ``offset ~ U{1, …, L-1}`` (``rng.integers(1, L)``); the result is
    ``[ids[0]] + ids[offset:-1] + ids[1:offset] + [ids[-1]]`` — ``<s>`` and ``</s>`` stay in place
    and the inside is rotated. Offsets 1 and L-1 give the input back. Returns a new array.
    Tests check that ``<s>``/``</s>`` stay, that the inside is a rotation, and that every offset is
    equally likely.
    """
    raise NotImplementedError("Task 9.3: document_rotation")
