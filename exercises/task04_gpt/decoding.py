"""Task 4.2: the decoding rules — turning next-token logits into the next token.

A language model gives, at each step, logits z (V,) over the vocabulary. How to pick the token:

* **greedy**: argmax z. Deterministic; tends to loop on small models.
* **temperature** T: sample from softmax(z / T). T < 1 sharpens the distribution, T > 1 flattens
  it, T → 0 approaches greedy.
* **top-k** (Fan et al. 2018): keep the k largest logits, set the rest to −∞, renormalise.
  Ties with the k-th largest are kept (the threshold is a value, not a count); k is clipped to V.
* **top-p / nucleus** (Holtzman et al. 2020, §3.1): keep the smallest set of tokens, taken from
  the most probable down, whose probability reaches p, and renormalise. Hugging Face's rule
  (``TopPLogitsWarper``, src/transformers/generation/logits_process.py) keeps the token that
  *crosses* p: probabilities [.5, .3, .15, .05] with p = 0.7 keep two tokens (.5 alone is below
  0.7). The GPT-2 repository (openai/gpt-2, src/sample.py) dropped it and kept one.
* **sampling**: draw a token from softmax(z) of the filtered logits.

The library's ``minilm.decoding.sample_next`` chains them in the order of GPT-2 and Hugging Face,
temperature → top-k → top-p → ``sample_token`` (its docstring says why the temperature comes first).
Filtered tokens get −∞ (HF's ``filter_value``): softmax gives them probability exactly 0.

All functions take NumPy logits (V,) or (N, V) and return new arrays; none modifies its input.
Letters: N rows (a batch or beams), V vocabulary.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError


def greedy(logits):
    """Task 4.2: the most likely token of each row: argmax over the last axis.

    logits (V,) → a 0-d int64 array; (N, V) → (N,) int64. (Ties go to the lowest id, as np.argmax.)
    """
    raise NotImplementedError("Task 4.2: greedy")


def apply_temperature(logits, temperature):
    """Task 4.2: logits / T as a new float array. T must be > 0 (else raise ``ConfigError``: use
    greedy decoding for "T = 0"). T = 1 leaves the logits unchanged.

    The graded tests check values, that the input is not modified, and the error for T ≤ 0.
    """
    raise NotImplementedError("Task 4.2: apply_temperature")


def top_k_filter(logits, k):
    """Task 4.2: keep, in each row, every logit ≥ the k-th largest one; set the others to −inf.

    logits (V,) or (N, V) → a new float array of the same shape. ``k`` None or 0 means "no
    filter" (return a copy); k > V is clipped to V; a negative k raises ``ConfigError``.
    Ties with the k-th largest value are **kept**, so more than k entries may survive.

    Hint: the k-th largest of each row is ``np.sort(row)[-k]`` (or ``np.partition``); compare the
    row with it, keeping the dimensions (``[..., None]``) so the comparison broadcasts.

    The graded tests check: which entries survive (ties kept), values unchanged where kept, k > V,
    k = None / 0, 1-D and 2-D inputs, and the input left untouched.
    """
    raise NotImplementedError("Task 4.2: top_k_filter")


def top_p_filter(logits, p, min_tokens_to_keep=1):
    """Task 4.2: nucleus filtering, Hugging Face's rule (the token that crosses p is KEPT).

    logits (V,) or (N, V) → a new float array, −inf where filtered. For each row:

    1. sort the logits **ascending** and take the softmax of the sorted row, then its cumulative
       sum c (so c ends at 1 and the most probable token comes last);
    2. remove the tokens with c ≤ 1 − p (the improbable tail whose total mass is ≤ 1 − p);
    3. always keep the ``min_tokens_to_keep`` most probable tokens;
    4. put the decision back in the original order (undo the sort) and set removed logits to −inf.

    ``p`` must be in (0, 1] (else raise ``ConfigError``); p = 1 (or None) keeps everything.
    Entries that are already −inf (from top-k) count as probability 0.

    Worked example: probabilities [.5, .3, .15, .05], p = 0.7. Ascending: [.05, .15, .3, .5],
    c = [.05, .2, .5, 1.0]; removed: c ≤ 0.3 → .05 and .15; kept: .3 and .5 — two tokens.

    Hints: ``order = np.argsort(logits, axis=-1)``; ``np.take_along_axis``; to undo the sort,
    ``np.put_along_axis`` (or index with ``np.argsort(order)``).

    The graded tests check the worked example (and its GPT-2 variant that keeps 1 is a failure),
    several rows at once, min_tokens_to_keep, p = 1, and that the input is untouched.
    """
    if p is not None and not 0.0 < p <= 1.0:
        raise ConfigError(f"top_p_filter: p={p!r} must be in (0, 1]")
    if min_tokens_to_keep < 1:
        raise ConfigError(f"top_p_filter: min_tokens_to_keep={min_tokens_to_keep} must be >= 1")
    raise NotImplementedError("Task 4.2: top_p_filter")


def sample_token(logits, *, rng):
    """Task 4.2: draw one token from each row of ``softmax(logits)``, using only ``rng``.

    logits (V,) → a 0-d int64 array; (N, V) → (N,) int64, one independent draw per row. The logits
    arrive already divided by the temperature and filtered: an entry of −inf (removed by top-k or
    top-p) has probability exactly 0 and is never drawn; every row has at least one finite entry.

    Softmax each row (subtract the row max first: logits of 1000 must not overflow), then e.g.
    inverse-CDF sampling: with u = rng.random((N, 1)), the token is the number of entries of the
    row's cumulative sum that are ≤ u (divide the cumulative sum by its last entry first, so it
    ends at exactly 1). ``rng.choice(V, p=row)`` per row also works.

    The graded tests check the sampled frequencies over many draws (≥ 10,000): they match softmax of
    the logits (large ones too); a −inf entry is never drawn and the others are renormalised; each
    row follows its own distribution with its own draw; the same ``rng`` seed gives the same tokens.
    """
    raise NotImplementedError("Task 4.2: sample_token")
