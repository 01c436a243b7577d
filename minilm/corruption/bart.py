"""BART's noising functions, and their composition in fairseq's order.

Lewis et al. 2020, "BART: Denoising Sequence-to-Sequence Pre-training", §2.2 (token masking, token
deletion, text infilling with Poisson(λ=3) span lengths where 0-length spans insert a mask, sentence
permutation, document rotation) and §5.1 (the large model: 30% masking, all sentences permuted).
The reference is fairseq ``fairseq/data/denoising_dataset.py``: ``add_whole_word_mask``,
``permute_sentences``, ``add_insertion_noise``, ``add_rolling_noise``.

Every function takes a 1-D id array ``ids (L,)`` that starts with ``<s>`` and ends with ``</s>``
(at least those two tokens) and returns a new array; the first and last tokens are never noised.
Letters: L sequence length, V vocabulary size, λ the Poisson mean of the span lengths.

The task slots (Task 9.3) are bound here. ``token_masking``, ``token_deletion``, ``text_infilling``
are the three settings of one function, :func:`whole_word_mask` (fairseq's ``add_whole_word_mask``),
which runs three of the slots in fairseq's order: span lengths, the spans, the insertions.
"""
from __future__ import annotations

import math

import numpy as np

from autograd import tasks
from autograd.errors import ConfigError, ShapeError

from ._token_ids import (as_ids, check_fraction, check_id, check_length, check_positive, check_random_ids,
                         check_word_starts)

__all__ = [
    "poisson_span_lengths", "mask_word_spans", "whole_word_mask", "insert_tokens", "sentence_permutation",
    "document_rotation", "truncated_poisson_pmf", "token_masking", "token_deletion",
    "text_infilling", "insertion_noise", "bart_noise", "NOISING_FUNCTIONS", "noising_options",
]

# Task 9.3: solutions/task09_seq2seq/noising.py
poisson_span_lengths = tasks.bind("task09_seq2seq.noising", "poisson_span_lengths")
mask_word_spans = tasks.bind("task09_seq2seq.noising", "mask_word_spans")  # Task 9.3
insert_tokens = tasks.bind("task09_seq2seq.noising", "insert_tokens")  # Task 9.3
sentence_permutation = tasks.bind("task09_seq2seq.noising", "sentence_permutation")  # Task 9.3
document_rotation = tasks.bind("task09_seq2seq.noising", "document_rotation")  # Task 9.3


def truncated_poisson_pmf(poisson_lambda: float = 3.0) -> np.ndarray:
    """fairseq's span-length distribution: ``p_k = e^{-λ} λ^k / k!`` for ``k = 0, 1, …``, stopping
    after the first k whose p_k < 1e-7 (and at k = 127), renormalised to sum to 1.

    For λ = 3 the support is ``0 … 17``. Returns ``pmf (K,)`` float64.
    """
    poisson_lambda = check_positive(poisson_lambda, op="truncated_poisson_pmf", name="poisson_lambda")
    ps, lam_k, k_fact = [], 1.0, 1.0
    for k in range(128):
        ps.append(math.exp(-poisson_lambda) * lam_k / k_fact)
        lam_k *= poisson_lambda
        k_fact *= k + 1
        if ps[-1] < 1e-7:
            break
    pmf = np.array(ps)
    return pmf / pmf.sum()


def whole_word_mask(ids, *, rng, mask_id, ratio, replace_length=1, poisson_lambda=None, word_starts=None,
                    mask_random=0.0, vocab_size=None):
    """fairseq's ``add_whole_word_mask``: token masking, deletion and text infilling of ``ids (L,)``
    (``<s>`` first, ``</s>`` last); returns a new 1-D array.

    1. the budget: ``num_to_mask = ceil(#word starts · ratio)`` words, ``<s>`` and ``</s>`` never
       counted (``word_starts``: one flag per token; default, every token starts a word);
    2. the span lengths in words: all 1 (``poisson_lambda=None``: token masking, deletion), or
       Poisson(λ) lengths that sum to the budget (Task 9.3's ``poisson_span_lengths``);
    3. the spans: Task 9.3's ``mask_word_spans`` masks (``replace_length=-1``), deletes (0) or
       infills (1: one ``<mask>`` per span) the spans of positive length, and returns how many had
       length 0;
    4. each zero-length span inserts a ``<mask>``: Task 9.3's ``insert_tokens``.

    The pieces draw from ``rng`` in this order, fairseq's.
    """
    op = "whole_word_mask"
    ids = as_ids(ids, op=op, min_length=2, vocab_size=vocab_size)
    mask_id = check_id(mask_id, op=op, name="mask_id", vocab_size=vocab_size)
    ratio = check_fraction(ratio, op=op, name="ratio")
    mask_random = check_random_ids(mask_random, vocab_size, op=op)
    if replace_length not in (-1, 0, 1):
        raise ConfigError(f"{op}: replace_length={replace_length!r}: expected -1, 0 or 1")
    starts = check_word_starts(word_starts, ids.size, op=op)                   # (L,) first, last False
    num_to_mask = math.ceil(int(starts.sum()) * ratio)
    if num_to_mask == 0:
        return ids.copy()
    if poisson_lambda is None:
        lengths = np.ones(num_to_mask, dtype=np.int64)
    else:
        lengths = poisson_span_lengths(num_to_mask, rng=rng, poisson_lambda=poisson_lambda)
    out, num_inserts = mask_word_spans(ids, lengths, starts, rng=rng, mask_id=mask_id,
                                       replace_length=replace_length, mask_random=mask_random,
                                       vocab_size=vocab_size)
    if num_inserts > 0:
        out = insert_tokens(out, num_inserts, rng=rng, mask_id=mask_id, mask_random=mask_random,
                            vocab_size=vocab_size)
    return out


def token_masking(ids, *, mask_id, rng, ratio=0.15, word_starts=None, mask_random=0.0,
                  vocab_size=None):
    """Token masking (BERT-style, §2.2): ``ceil(#word starts · ratio)`` words each become ``<mask>``
    token for token; the length is unchanged. fairseq: ``replace_length=-1``, no span distribution."""
    return whole_word_mask(ids, rng=rng, mask_id=mask_id, ratio=ratio, replace_length=-1,
                           poisson_lambda=None, word_starts=word_starts, mask_random=mask_random,
                           vocab_size=vocab_size)


def token_deletion(ids, *, rng, ratio=0.15, word_starts=None):
    """Token deletion (§2.2): ``ceil(#word starts · ratio)`` words are removed; the model must find
    where. fairseq: ``replace_length=0``, no span distribution."""
    return whole_word_mask(ids, rng=rng, mask_id=0, ratio=ratio, replace_length=0,
                           poisson_lambda=None, word_starts=word_starts)


def text_infilling(ids, *, mask_id, rng, ratio=0.3, poisson_lambda=3.0, word_starts=None):
    """Text infilling (§2.2): spans with Poisson(λ) lengths (in words) covering ``ratio`` of the
    word starts are each replaced by ONE ``<mask>``; a 0-length span inserts a ``<mask>``.
    fairseq: ``mask_length=span-poisson``, ``replace_length=1``."""
    return whole_word_mask(ids, rng=rng, mask_id=mask_id, ratio=ratio, replace_length=1,
                           poisson_lambda=poisson_lambda, word_starts=word_starts)


def insertion_noise(ids, *, rng, mask_id, ratio, mask_random=0.0, vocab_size=None):
    """fairseq's ``add_insertion_noise``: insert ``ceil(L · ratio)`` new tokens at random inner
    positions (``ceil(n · mask_random)`` of them random ids in ``[1, V)``, the rest ``<mask>``)."""
    ids = as_ids(ids, op="insertion_noise", min_length=2, vocab_size=vocab_size)
    ratio = check_fraction(ratio, op="insertion_noise", name="ratio")
    n = math.ceil(ids.size * ratio)
    return insert_tokens(ids, n, rng=rng, mask_id=mask_id, mask_random=mask_random,
                         vocab_size=vocab_size)


def bart_noise(ids, *, rng, mask_id, vocab_size, full_stop_id, mask_ratio=0.3,
               permute_sentences=1.0, rotate=0.0, insert=0.0, replace_length=1, mask_random=0.0,
               poisson_lambda=3.0, word_start_table=None):
    """BART's noising pipeline, in fairseq's order: sentence permutation → masking → insertion →
    rotation. Defaults are the paper's large model (30% text infilling, all sentences permuted).

    Args:
        ids: ``(L,)`` ids with ``<s>`` first and ``</s>`` last; all in ``[0, vocab_size)``.
        mask_ratio: share of word starts to mask (0 skips masking).
        permute_sentences: share of sentences to shuffle (0 skips); sentences end at ``full_stop_id``.
        rotate: probability of rotating the document (``document_rotation``).
        insert: ``ceil(L · insert)`` extra tokens inserted (``insertion_noise``).
        replace_length: 1 one ``<mask>`` per span (infilling), 0 delete, -1 a ``<mask>`` per token.
        poisson_lambda: span lengths ~ Poisson(λ); ``None`` masks single words (token masking).
        word_start_table: optional ``(V,)`` bool, True for ids that begin a word (fairseq's
            ``mask_whole_word``); looked up after the permutation. Default: every token is a start.
    Returns the noised ids (a new array); the clean ``ids`` are the decoder's target.
    """
    op = "bart_noise"
    vocab_size = check_length(vocab_size, op=op, name="vocab_size", minimum=2)
    ids = as_ids(ids, op=op, min_length=2, vocab_size=vocab_size)
    mask_id = check_id(mask_id, op=op, name="mask_id", vocab_size=vocab_size)
    full_stop_id = check_id(full_stop_id, op=op, name="full_stop_id", vocab_size=vocab_size)
    mask_ratio = check_fraction(mask_ratio, op=op, name="mask_ratio")
    permute_sentences = check_fraction(permute_sentences, op=op, name="permute_sentences")
    rotate = check_fraction(rotate, op=op, name="rotate")
    insert = check_fraction(insert, op=op, name="insert")
    table = None
    if word_start_table is not None:
        table = np.asarray(word_start_table, dtype=bool)
        if table.shape != (vocab_size,):
            raise ShapeError(f"{op}: word_start_table has shape {table.shape}: expected "
                             f"({vocab_size},), one flag per vocabulary id")

    x = ids
    if permute_sentences > 0:
        x = sentence_permutation(x, full_stop_id=full_stop_id, rng=rng, p=permute_sentences)
    if mask_ratio > 0:
        starts = None if table is None else table[x]
        x = whole_word_mask(x, rng=rng, mask_id=mask_id, ratio=mask_ratio,
                            replace_length=replace_length, poisson_lambda=poisson_lambda,
                            word_starts=starts, mask_random=mask_random, vocab_size=vocab_size)
    if insert > 0:
        x = insertion_noise(x, rng=rng, mask_id=mask_id, ratio=insert, mask_random=mask_random,
                            vocab_size=vocab_size)
    if rotate > 0 and rng.random() < rotate:
        x = document_rotation(x, rng=rng)
    return x  # a new array: as_ids copied the caller's ids



# §2.2's functions as ``noising_options`` names them; the first three are one function (whole_word_mask)
NOISING_FUNCTIONS = ("masking", "deletion", "infilling", "permutation", "rotation")
_MASKING = {"masking": -1, "deletion": 0, "infilling": 1}  # name -> whole_word_mask's replace_length


def noising_options(noising: str, *, mask_ratio=0.3, permute_sentences=1.0, poisson_lambda=3.0) -> dict:
    """``bart_noise``'s keyword arguments for a ``+``-joined choice of §2.2's functions, as the
    ablation of Lewis et al. 2020 (Table 1) picks them: ``"infilling+permutation"`` (the paper's
    final choice) gives ``mask_ratio``, ``permute_sentences`` and ``poisson_lambda`` unchanged.

    ``masking`` / ``deletion`` / ``infilling``: ``mask_ratio`` of the words become one ``<mask>``
    each / are removed / in Poisson(λ) spans become ONE ``<mask>`` per span (at most one of the
    three: they are one fairseq function); ``permutation``: ``permute_sentences`` of the sentences
    shuffled; ``rotation``: every document rotated. Names not in ``NOISING_FUNCTIONS`` raise.
    """
    names = [n.strip() for n in str(noising).split("+") if n.strip()]
    unknown = [n for n in names if n not in NOISING_FUNCTIONS]
    masking = [n for n in names if n in _MASKING]
    if not names or unknown or len(masking) > 1 or len(set(names)) < len(names):
        raise ConfigError(f"noising_options: noising={noising!r}: expected '+'-joined names from "
                          f"{NOISING_FUNCTIONS}, each once, at most one of masking/deletion/infilling")
    kind = masking[0] if masking else None
    return {"mask_ratio": mask_ratio if kind else 0.0,
            "replace_length": _MASKING.get(kind, 1),
            "poisson_lambda": poisson_lambda if kind == "infilling" else None,
            "permute_sentences": permute_sentences if "permutation" in names else 0.0,
            "rotate": 1.0 if "rotation" in names else 0.0}
