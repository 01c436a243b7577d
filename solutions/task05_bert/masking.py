"""Task 5.2: BERT's masked-LM corruption, the Hugging Face collator way.

BERT (Devlin et al. 2019, §3.1 "Task #1: Masked LM") hides 15% of the input tokens and trains the
model to predict them from both sides. A hidden token is replaced by ``[MASK]`` only 80% of the time:
10% of the time it becomes a random token and 10% of the time it stays unchanged, so that the model
cannot learn "only positions showing [MASK] matter" (``[MASK]`` never appears at fine-tuning time).

This file follows ``DataCollatorForLanguageModeling`` of Hugging Face ``transformers``, which decides
every position independently (a Bernoulli draw), so the number of masked tokens per sequence is
binomial. BERT's original script draws a *fixed* number instead; that version is
``minilm.corruption.bert_masked_lm_predictions``.

Shapes: ``ids`` may be 1-D ``(T,)`` or a batch ``(B, T)``; every output has the shape of ``ids``.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import TokenizerError
from minilm.corruption._token_ids import check_fraction, check_id, check_range

IGNORE_INDEX = -100  # the label of a position the loss must skip (PyTorch / HF convention)


def _checked_ids(op, ids, vocab_size):
    """Given helper (not the lesson): ``ids`` (any shape) as a new int64 array; ids outside
    [0, vocab_size) raise ``TokenizerError`` naming the id."""
    arr = np.asarray(ids)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TokenizerError(f"{op}: ids have dtype {arr.dtype}: expected integer token ids")
    arr = arr.astype(np.int64)  # a copy, so the caller's array is never touched
    check_range(arr, op=op, vocab_size=vocab_size)
    return arr


def mask_tokens(ids, *, mask_id, vocab_size, special_ids, rng, prob=0.15):
    """Task 5.2: BERT's masked-LM corruption (Devlin et al. 2019, §3.1), as Hugging Face's
    ``DataCollatorForLanguageModeling`` does it (src/transformers/data/data_collator.py).

    Returns ``(inputs, labels)``, two new int64 arrays with the shape of ``ids``.

    The maths, for every position t independently:

    1. chosen_t ~ Bernoulli(prob), except that a special token (its id is in ``special_ids``;
       padding is one of them) is never chosen. The number chosen is binomial, not fixed.
    2. labels_t = ids_t if chosen_t else -100 (the ``ignore_index`` of the loss; not 0, which is a
       real token id).
    3. Every chosen position, independently:
         * with probability 0.8  -> inputs_t = mask_id
         * with probability 0.1  -> inputs_t = a random id, uniform over the WHOLE vocabulary
                                    [0, vocab_size) (special ids included, as in BERT and HF)
         * with probability 0.1  -> inputs_t = ids_t (unchanged, but still predicted)
       A position that is not chosen keeps ids_t.

    Hints:
      * ``rng.random(shape) < p`` gives a boolean Bernoulli(p) array; ``np.isin(ids, special)`` finds
        the special tokens.
      * One uniform draw u per position can split the chosen ones: u < 0.8 / 0.8 <= u < 0.9 / rest.
      * ``rng.integers(0, vocab_size, size=k)`` draws k random ids. Use only ``rng`` (no global
        ``np.random``), so the same Generator state gives the same result.
      * Never modify ``ids``: work on a copy (the given first line already makes one).

    The graded tests check: specials (and padding) never chosen; about 15% of the other positions
    chosen, a binomial count that changes from call to call; the 80/10/10 split among chosen
    positions; random ids spread over all of [0, vocab_size); labels -100 exactly where nothing is
    predicted; both 1-D and (B, T) inputs; the caller's array unchanged. Each rate is measured over
    >= 10,000 positions and must lie within 4 standard errors.
    """
    ids = _checked_ids("mask_tokens", ids, vocab_size)  # given: a new int64 array (T,) or (B, T)
    check_fraction(prob, op="mask_tokens", name="prob")
    check_id(mask_id, op="mask_tokens", name="mask_id", vocab_size=vocab_size)
    # BEGIN SOLUTION
    special = np.isin(ids, np.asarray(list(special_ids), dtype=np.int64))
    chosen = (rng.random(ids.shape) < prob) & ~special            # (..., T) Bernoulli(prob)

    labels = np.where(chosen, ids, IGNORE_INDEX)                   # predict the original id

    u = rng.random(ids.shape)                                      # one draw splits 80/10/10
    to_mask = chosen & (u < 0.8)
    to_random = chosen & (u >= 0.8) & (u < 0.9)                    # the last 10%: unchanged

    inputs = ids.copy()
    inputs[to_mask] = mask_id
    inputs[to_random] = rng.integers(0, vocab_size, size=int(to_random.sum()))
    return inputs, labels
    # END SOLUTION
