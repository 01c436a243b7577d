"""Task 9.1: T5's span-corruption objective (Raffel et al. 2020, §3.1.4 and §3.3).

A random 15% of the tokens, in spans of mean length 3, are dropped from the encoder input; each
dropped span is replaced by one *sentinel* token, and the decoder learns to emit the dropped spans,
each introduced by its sentinel. For ``a b c d e f`` with noise spans ``{c d}`` and ``{f}``::

    inputs  = a b <X> e <Y> </s>          <X> = <extra_id_0>, <Y> = <extra_id_1>
    targets = <X> c d <Y> f </s>

Letters: L sequence length, n number of noise tokens, k number of noise spans, μ mean span length.

Reference: google-research/text-to-text-transfer-transformer, ``t5/data/preprocessors.py``
(``random_spans_noise_mask``, ``noise_span_to_unique_sentinel``, ``random_spans_helper``).
Rounding is Python's ``round`` everywhere, which rounds half to even (``round(4.5) == 4``).

The library's ``minilm.corruption.span_corruption`` puts the pieces together: ``noise =
random_spans_noise_mask(len(ids), ...)``, then ``spans_to_sentinels(ids, noise, ...)``.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError
from minilm.corruption._token_ids import check_fraction, check_length, check_positive, check_sentinel_args


def check_noise_args(length, noise_density, mean_noise_span_length, op="random_spans_noise_mask"):
    """Validate the arguments of the noise mask; returns them as (int, float, float)."""
    length = check_length(length, op=op, name="length", minimum=1)
    noise_density = check_fraction(noise_density, op=op, name="noise_density")
    mean_noise_span_length = check_positive(mean_noise_span_length, op=op,
                                            name="mean_noise_span_length")
    return length, noise_density, mean_noise_span_length


def random_spans_noise_mask(length, *, rng, noise_density=0.15, mean_noise_span_length=3.0):
    """Task 9.1: T5's noise mask — which of ``length`` tokens are dropped, in spans.

    Returns a new boolean array ``mask (L,)``, ``True`` = noise. The recipe (T5's, step by step):

    1. ``noise_density == 0`` → return all ``False``.
    2. Work on ``L' = max(length, 2)`` (so that there is room for one clean and one noise token):
       ``n = round(L' · noise_density)`` clipped to ``[1, L'-1]`` noise tokens, in
       ``k = max(1, round(n / mean_noise_span_length))`` spans. (Also clip ``k`` to at most ``n``
       and at most ``L' - n``: extreme settings would otherwise ask for empty spans.)
    3. *Random segmentation*: split ``n`` items into ``k`` non-empty spans, every split equally
       likely — put ``k-1`` ``True`` among ``n-1`` slots (the gaps between items), shuffle with
       ``rng``, prepend a ``True``; each ``True`` starts a span, so the span lengths are the gaps
       between them (``np.cumsum`` + ``np.bincount``, or ``np.diff`` of ``np.flatnonzero``).
       Do the same for the ``L' - n`` clean tokens into ``k`` spans.
    4. Interleave ``clean_1, noise_1, clean_2, noise_2, …, clean_k, noise_k`` (``np.repeat`` of
       ``[False, True, False, True, …]`` by those lengths) and cut to the first ``length`` entries.

    Consequences the tests check: the first token is always clean and the last always noise (for
    ``length >= 2``); ``length == 1`` gives no noise (built for 2, then cut); exactly ``n`` noise
    tokens in exactly ``k`` maximal runs; and all ways of splitting into spans equally likely.
    Use Python's ``round`` (half to even).
    """
    # BEGIN SOLUTION
    length, noise_density, mean_noise_span_length = check_noise_args(
        length, noise_density, mean_noise_span_length)
    if noise_density == 0.0:
        return np.zeros(length, dtype=bool)
    L = max(length, 2)
    n_noise = min(max(round(L * noise_density), 1), L - 1)
    n_spans = max(1, round(n_noise / mean_noise_span_length))
    n_spans = min(n_spans, n_noise, L - n_noise)

    def random_segmentation(n_items, n_segments):
        # k-1 segment starts among the n-1 gaps, every choice equally likely.
        first_in_segment = np.zeros(n_items - 1, dtype=bool)
        first_in_segment[: n_segments - 1] = True
        rng.shuffle(first_in_segment)
        first_in_segment = np.concatenate([[True], first_in_segment])  # (n_items,)
        segment_id = np.cumsum(first_in_segment) - 1
        return np.bincount(segment_id, minlength=n_segments)  # (n_segments,) lengths, all >= 1

    noise_lengths = random_segmentation(n_noise, n_spans)
    clean_lengths = random_segmentation(L - n_noise, n_spans)
    lengths = np.stack([clean_lengths, noise_lengths], axis=1).reshape(-1)  # (2k,) clean, noise, ...
    is_noise = np.tile([False, True], n_spans)
    return np.repeat(is_noise, lengths)[:length]
    # END SOLUTION


def spans_to_sentinels(ids, noise_mask, *, sentinel_ids, eos_id):
    """Task 9.1: T5's inputs and targets from a noise mask — ``(inputs, targets)``, two new 1-D int arrays.

    ``ids (L,)`` the text; ``noise_mask (L,)`` bool, True = noise, as ``random_spans_noise_mask``
    draws it (the library's ``minilm.corruption.span_corruption`` draws the mask with your
    ``random_spans_noise_mask`` and hands it to this function). T5's ``noise_span_to_unique_sentinel``
    and ``nonnoise_span_to_unique_sentinel``:

    1. ``inputs``: every maximal run of noise tokens becomes ONE sentinel — the first token of the
       run is replaced by the sentinel, the rest of the run is dropped. The j-th run (counting from
       the left, from 0) gets ``sentinel_ids[j]``. (``sentinel_ids[0]`` is ``<extra_id_0>``; callers
       pass ids that count down from the top of the vocabulary, ``[V-1, V-2, …]``, so do not compute
       sentinels yourself: index the array you are given.)
    2. ``targets``: the same operation on the *clean* runs (``~noise_mask``): each clean run becomes
       one sentinel and the noise tokens stay. Because T5's mask starts with a clean run, the
       sentinel that replaced noise span j in ``inputs`` introduces exactly that span in ``targets``.
    3. Append ``eos_id`` to both.

    Hint: a token starts a run when it is in the mask and the previous one is not
    (``mask & ~np.concatenate([[False], mask[:-1]])``). Raise ``ConfigError`` when there are more
    runs than sentinels. The given lines check the arguments.
    Tests check: the exact format, sentinel order, EOS on both, one sentinel per span, and that the
    inputs and targets together give back the original ids.
    """
    op = "spans_to_sentinels"  # given: checks
    ids, sentinel_ids, eos_id = check_sentinel_args(ids, sentinel_ids, eos_id, op=op)
    noise = np.asarray(noise_mask)
    if noise.shape != ids.shape or noise.dtype != bool:
        raise ShapeError(f"{op}: noise_mask of shape {noise.shape} and dtype {noise.dtype}: expected "
                         f"bools of the ids' shape {ids.shape}")
    # BEGIN SOLUTION
    def runs_to_sentinels(mask):
        previous = np.concatenate([[False], mask[:-1]])
        first = mask & ~previous  # the first token of each run becomes the sentinel
        later = mask & previous  # the rest of each run is dropped
        n_runs = int(first.sum())
        if n_runs > sentinel_ids.size:
            raise ConfigError(f"{op}: {n_runs} spans need {n_runs} sentinels, but only "
                              f"{sentinel_ids.size} sentinel_ids were given")
        out = ids.copy()
        out[first] = sentinel_ids[:n_runs]
        return out[~later]

    inputs = np.append(runs_to_sentinels(noise), eos_id)
    targets = np.append(runs_to_sentinels(~noise), eos_id)
    return inputs, targets
    # END SOLUTION


def random_spans_helper(inputs_length, noise_density=0.15, mean_noise_span_length=3.0):
    """Task 9.1: how many raw tokens to corrupt so that ``inputs`` come out ``inputs_length`` long.

    Returns ``(tokens_length, targets_length)``. For a raw length t, span corruption yields
    ``n = round(t · noise_density)`` noise tokens in ``k = round(n / mean_noise_span_length)`` spans:

        inputs  length = (t - n) + k + 1      (clean tokens, one sentinel per span, EOS)
        targets length =  n      + k + 1      (noise tokens, one sentinel per span, EOS)

    Start from ``t = inputs_length - 1`` and increase t while ``t + 1`` still gives inputs of at
    most ``inputs_length``; return that t and its targets length. T5's extra rule: when
    ``noise_density == 0.5`` and the targets came out longer than ``inputs_length``, take one less
    from both. With the defaults, 512 → (568, 114), 256 → (284, 58), 128 → (141, 29). Use Python's
    ``round`` (half to even) — the tests contain lengths where the other rounding gives other numbers.
    """
    # BEGIN SOLUTION
    inputs_length = check_length(inputs_length, op="random_spans_helper", name="inputs_length",
                                 minimum=2)

    def lengths_for(tokens_length):
        n_noise = round(tokens_length * noise_density)
        n_spans = round(n_noise / mean_noise_span_length)
        return tokens_length - n_noise + n_spans + 1, n_noise + n_spans + 1

    tokens_length = inputs_length - 1
    while lengths_for(tokens_length + 1)[0] <= inputs_length:
        tokens_length += 1
    _, targets_length = lengths_for(tokens_length)
    if noise_density == 0.5 and targets_length > inputs_length:
        tokens_length -= 1
        targets_length -= 1
    return tokens_length, targets_length
    # END SOLUTION
