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
-1, 0 or 1. Here it is three pieces that the library's ``minilm.corruption.whole_word_mask`` runs in
fairseq's order: the span lengths (``poisson_span_lengths``), the spans themselves
(``mask_word_spans``), and a ``<mask>`` inserted for each zero-length span (``insert_tokens``).

Letters: L sequence length (``<s>`` and ``</s>`` included), V vocabulary size, λ Poisson mean,
S number of spans, n number of inserted tokens.
"""
from __future__ import annotations

import math

import numpy as np

from autograd.errors import ConfigError, ShapeError
from minilm.corruption._token_ids import (as_ids, check_fraction, check_id, check_length, check_random_ids,
                                          check_word_starts)
from minilm.corruption.bart import truncated_poisson_pmf  # a helper for the slots (no slot behind it)


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


def mask_word_spans(ids, span_lengths, word_starts, *, rng, mask_id, replace_length=1, mask_random=0.0,
                    vocab_size=None):
    """Task 9.3: the spans of fairseq's ``add_whole_word_mask`` — token masking, deletion and text infilling.

    ``ids (L,)`` start with ``<s>`` and end with ``</s>``. ``span_lengths (S',)`` are the span
    lengths in words (``poisson_span_lengths`` for text infilling, all 1 for token masking and
    deletion). ``word_starts (L,)`` bool flags, False on the first and last token (never noised).
    The library's ``minilm.corruption.whole_word_mask`` counts the budget (``ceil(#word starts ·
    ratio)`` words), draws the lengths and calls this function; it then inserts what you return.
    Returns ``(out, num_inserts)``: the noised ids (a new 1-D array) and the number of ``<mask>``
    tokens still to insert.

    1. The zero-length spans are set aside: ``num_inserts`` is how many there are (a span of length
       0 INSERTS a ``<mask>``; the caller does that with ``insert_tokens``). The rest, S spans, are
       masked here.
    2. Span starts: ``S`` word starts drawn without replacement (``rng.permutation`` of
       ``np.flatnonzero(word_starts)``, first S). Then ONE draw ``rng.random(S) < mask_random``:
       each span is *random* with that probability (a random id ``rng.integers(1, vocab_size)``
       instead of ``<mask>``, one draw per token written).
    3. A span of length l covers its start token and walks right through the next l-1 words: a
       word start uses up one unit of length, a continuation piece (``word_starts[j] == False``) is
       swallowed for free, and the walk stops before the word start that would make it l+1 words —
       or before the last token ``</s>``, which no span may reach. Spans may overlap.
    4. ``replace_length``:
       ``-1``: every covered token becomes ``<mask>`` (token masking; length unchanged);
       ``0``: every covered token is deleted (token deletion);
       ``1``: the start token becomes ``<mask>``, the rest of the span is deleted (text infilling:
       ONE ``<mask>`` per span, however long). Write the span starts first (in the order drawn), then
       walk the spans; apply deletions at the end with a ``keep`` mask.

    Tests check the masked counts, whole words, that ``<s>``/``</s>`` never move, one ``<mask>`` per
    span for ``replace_length=1``, and that the zero-length spans come back as ``num_inserts``.
    """
    op = "mask_word_spans"  # given: checks
    ids = as_ids(ids, op=op, min_length=2, vocab_size=vocab_size)
    L = ids.size
    lengths = as_ids(span_lengths, op=op, name="span_lengths", min_length=0)
    starts = np.asarray(word_starts)
    if starts.shape != (L,) or starts.dtype != bool:
        raise ShapeError(f"{op}: word_starts of shape {starts.shape} and dtype {starts.dtype}: expected ({L},) bools")
    mask_id = check_id(mask_id, op=op, name="mask_id", vocab_size=vocab_size)
    mask_random = check_random_ids(mask_random, vocab_size, op=op)
    if replace_length not in (-1, 0, 1):
        raise ConfigError(f"{op}: replace_length={replace_length!r}: expected -1, 0 or 1")
    raise NotImplementedError("Task 9.3: mask_word_spans")


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
