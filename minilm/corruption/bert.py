"""BERT's masked-LM corruption (Devlin et al. 2019, §3.1 and Appendix A.1), in two flavours.

* :func:`mask_tokens` — the task slot (Task 5.2), Hugging Face's ``DataCollatorForLanguageModeling``:
  each non-special position is chosen by Bernoulli(p), so the count is binomial; labels are -100
  where nothing is predicted. This is the pinned public API (``corruption.mask_tokens``).
* :func:`bert_masked_lm_predictions` — BERT's original ``create_masked_lm_predictions``: a *fixed*
  number ``min(max_pred, max(1, round(T·p)))`` of positions, sorted and padded to ``max_pred`` with
  weights, the format BERT's pre-training examples are stored in.

Both then apply the 80/10/10 rule to every chosen position: ``[MASK]`` w.p. 0.8, a random id from
the whole vocabulary w.p. 0.1, the original w.p. 0.1. Whole-word masking (Task 12.2) chooses words
instead of pieces: Task 12.2's :func:`word_groups` and :func:`choose_groups`, put together by
:func:`bert_whole_word_mask`; :func:`mask_tokens_wwm` adds the 80/10/10 rule.

Letters: B batch, T sequence length, V vocabulary size, P = ``max_predictions``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from autograd import tasks
from autograd.errors import ConfigError, ShapeError

from ._token_ids import as_ids, check_fraction, check_id

__all__ = [
    "IGNORE_INDEX", "mask_tokens", "MaskedLMPredictions", "bert_masked_lm_predictions",
    "predictions_to_labels", "word_groups", "choose_groups", "bert_whole_word_mask", "mask_tokens_wwm",
]

IGNORE_INDEX = -100  # label of a position the loss skips (PyTorch / Hugging Face convention)

mask_tokens = tasks.bind("task05_bert.masking", "mask_tokens")  # Task 5.2: solutions/task05_bert/masking.py
word_groups = tasks.bind("task12_beyond.wwm", "word_groups")  # Task 12.2: solutions/task12_beyond/wwm.py
choose_groups = tasks.bind("task12_beyond.wwm", "choose_groups")  # Task 12.2: solutions/task12_beyond/wwm.py


def _check_args(op: str, prob: float, max_predictions: int) -> None:
    check_fraction(prob, op=op, name="prob")
    if isinstance(max_predictions, bool) or int(max_predictions) != max_predictions or max_predictions < 0:
        raise ConfigError(f"{op}: max_predictions={max_predictions!r}: expected an integer >= 0")


def bert_whole_word_mask(tokens, *, rng: np.random.Generator, prob: float = 0.15,
                         max_predictions: int = 20) -> list[int]:
    """BERT's whole-word choice (``create_masked_lm_predictions`` with ``do_whole_word_mask``): the
    sorted positions to predict, whole words at a time. ``tokens``: WordPiece strings, [CLS]/[SEP]
    included (they count in the budget and are never chosen).

    1. the words: Task 12.2's ``word_groups`` (a ``##`` piece joins the word before it);
    2. the budget and the shuffled walk over the words: Task 12.2's ``choose_groups``, with
       ``num_tokens = len(tokens)``;
    3. the chosen positions, sorted (BERT sorts its ``masked_lms`` by position).

    (BART's noising has a function of fairseq's name ``whole_word_mask``; this is BERT's.)
    """
    _check_args("bert_whole_word_mask", prob, max_predictions)
    tokens = list(tokens)
    chosen = choose_groups(word_groups(tokens), len(tokens), rng=rng, prob=prob, max_predictions=max_predictions)
    return sorted(int(t) for t in chosen)


def _replace_80_10_10(ids: np.ndarray, positions, *, mask_id: int, vocab_size: int, rng) -> np.ndarray:
    """BERT's rule at each chosen position: [MASK] w.p. 0.8, a uniformly random id from the whole
    vocabulary w.p. 0.1 (specials included), the original w.p. 0.1. The rule is Task 5.2's, so it
    runs Task 5.2's ``mask_tokens`` on the chosen ids with every one of them chosen (prob = 1)."""
    out = ids.copy()
    positions = np.asarray(positions, dtype=np.int64)
    if positions.size:
        out[positions], _ = mask_tokens(ids[positions], mask_id=mask_id, vocab_size=vocab_size, special_ids=(),
                                        rng=rng, prob=1.0)
    return out


class MaskedLMPredictions(NamedTuple):
    """One BERT pre-training instance's MLM part, as ``create_pretraining_data.py`` stores it."""
    input_ids: np.ndarray  # (T,)  the corrupted sequence
    positions: np.ndarray  # (P,)  sorted masked positions, then 0-padding
    label_ids: np.ndarray  # (P,)  the original id at each position, then 0-padding
    weights: np.ndarray    # (P,)  1.0 for a real prediction, 0.0 for padding (float32)


def bert_masked_lm_predictions(ids, *, cls_id: int, sep_id: int, mask_id: int, vocab_size: int,
                               rng: np.random.Generator, prob: float = 0.15,
                               max_predictions: int = 20, groups=None) -> MaskedLMPredictions:
    """BERT's ``create_masked_lm_predictions`` (google-research/bert, ``create_pretraining_data.py``)
    on one sequence of ids.

    1. Candidates: every position whose id is not ``cls_id`` or ``sep_id``, each a group of one —
       or the given ``groups`` (lists of positions, e.g. ``word_groups(tokens)`` for whole words).
    2. Shuffle the groups; ``n = min(max_predictions, max(1, round(T · prob)))``, T counting
       [CLS] and [SEP] (Python's ``round``: half to even, so T=30 gives round(4.5) = 4).
    3. Walk the groups: stop at n; skip a group that would overflow n (steps 2-3 are Task 12.2's
       ``choose_groups``; the groups must be disjoint).
    4. 80/10/10 at each chosen position (random ids from the whole vocabulary).
    5. Sort the positions; pad positions and label ids with 0 and weights with 0.0 up to P.

    With no candidate (every token [CLS]/[SEP], or an empty sequence) nothing is predicted although
    n >= 1: all weights are 0, and BERT's loss Σw·NLL / (Σw + 1e-5) is 0.
    """
    op = "bert_masked_lm_predictions"
    ids = as_ids(ids, op=op, vocab_size=vocab_size, min_length=0)     # (T,) a new int64 array
    _check_args(op, prob, max_predictions)
    check_id(mask_id, op=op, name="mask_id", vocab_size=vocab_size)
    if groups is None:
        groups = [[t] for t in np.flatnonzero((ids != cls_id) & (ids != sep_id)).tolist()]
    else:
        groups = [[int(t) for t in g] for g in groups]
        seen: set[int] = set()
        for g in groups:
            if any(not 0 <= t < len(ids) for t in g):
                raise ShapeError(f"{op}: group {g} has a position outside [0, {len(ids)})")
            if seen.intersection(g) or len(set(g)) < len(g):
                raise ShapeError(f"{op}: group {g} repeats a position of an earlier group (or its own): "
                                 f"expected disjoint groups, as word_groups gives")
            seen.update(g)

    chosen = list(choose_groups(groups, len(ids), rng=rng, prob=prob,     # Task 12.2: the budget and the
                                max_predictions=max_predictions))          # shuffled walk over the groups
    input_ids = _replace_80_10_10(ids, chosen, mask_id=mask_id, vocab_size=vocab_size, rng=rng)
    chosen.sort()
    P = int(max_predictions)
    positions = np.zeros(P, dtype=np.int64)
    label_ids = np.zeros(P, dtype=np.int64)
    weights = np.zeros(P, dtype=np.float32)
    k = len(chosen)
    positions[:k] = chosen
    label_ids[:k] = ids[chosen]
    weights[:k] = 1.0
    return MaskedLMPredictions(input_ids, positions, label_ids, weights)


def predictions_to_labels(pred: MaskedLMPredictions) -> np.ndarray:
    """The (T,) label array of the Hugging Face convention: the original id at each predicted
    position, ``IGNORE_INDEX`` (-100) everywhere else."""
    labels = np.full(pred.input_ids.shape, IGNORE_INDEX, dtype=np.int64)
    real = pred.weights > 0
    labels[pred.positions[real]] = pred.label_ids[real]
    return labels


def mask_tokens_wwm(ids, tokens, *, mask_id: int, vocab_size: int, rng: np.random.Generator,
                    prob: float = 0.15, max_predictions: int = 20, special_ids=()):
    """Whole-word masking with the 80/10/10 rule; returns ``(inputs, labels)`` like ``mask_tokens``.

    ``ids`` (T,) and ``tokens`` (T WordPiece strings) describe one sequence; a batch is ``ids`` of
    shape (B, T) with a list of B token lists. The positions come from :func:`bert_whole_word_mask`
    (Task 12.2's slots); as in Hugging Face's ``DataCollatorForWholeWordMask``, positions
    holding one of ``special_ids`` (e.g. padding) are then dropped. Each remaining position becomes
    [MASK] w.p. 0.8, a random id in [0, V) w.p. 0.1, or stays w.p. 0.1; labels are -100 elsewhere.
    """
    op = "mask_tokens_wwm"
    arr = np.asarray(ids)
    if arr.ndim == 2:
        if len(tokens) != arr.shape[0]:
            raise ShapeError(f"{op}: ids of shape {arr.shape} need {arr.shape[0]} token lists, "
                             f"got {len(tokens)}")
        rows = [mask_tokens_wwm(row, toks, mask_id=mask_id, vocab_size=vocab_size, rng=rng,
                                prob=prob, max_predictions=max_predictions, special_ids=special_ids)
                for row, toks in zip(arr, tokens)]
        if not rows:
            empty = np.zeros(arr.shape, dtype=np.int64)
            return empty, empty.copy()
        return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])
    ids = as_ids(arr, op=op, vocab_size=vocab_size, min_length=0)     # (T,) a new int64 array
    _check_args(op, prob, max_predictions)
    if len(tokens) != len(ids):
        raise ShapeError(f"{op}: {len(ids)} ids but {len(tokens)} tokens; they must match one to one")

    positions = bert_whole_word_mask(tokens, rng=rng, prob=prob, max_predictions=max_predictions)
    special = set(int(s) for s in special_ids)
    positions = [int(t) for t in positions if int(ids[t]) not in special]
    inputs = _replace_80_10_10(ids, positions, mask_id=mask_id, vocab_size=vocab_size, rng=rng)
    labels = np.full(ids.shape, IGNORE_INDEX, dtype=np.int64)
    labels[positions] = ids[positions]
    return inputs, labels
