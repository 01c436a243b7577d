"""Task 5.4: sentence classification on BERT's h[CLS], and pooling a sequence into one vector.

Devlin et al. 2019, §3.2 and Figure 4: for a sentence (or sentence-pair) task, "the [CLS]
representation is fed into an output layer for classification" — one new matrix W ∈ R^{K×C} and
bias b, and everything is fine-tuned end to end::

    logits = h[CLS] · Wᵀ + b,      h[CLS] = last_hidden_state[:, 0]

Note what is *not* used: the pooler output tanh(W_p·h[CLS] + b_p). The pooler was trained only by
next-sentence prediction, so its features are shaped for "does B follow A?", and models pre-trained
without NSP (RoBERTa, ELECTRA) have no trained pooler at all. minilm classifies on h[CLS] directly.

The alternatives summarise every token instead of one: mean or max over the *real* tokens
(Sentence-BERT, Reimers & Gurevych 2019, offers CLS, MEAN and MAX pooling in §3; its ablation in
§6 found MEAN the best).
Padding must never take part: a padded position is not a word of the sentence.

Letters: B batch, T time, C channels (hidden size), K classes.
"""
from __future__ import annotations

import numpy as np

from autograd import Tensor, where
from autograd.errors import ConfigError, ShapeError
from autograd.function import as_tensor

POOLING = ("cls", "mean", "max")


def classify_logits(outputs, weight, bias):
    """Task 5.4: the classification logits of BERT fine-tuning, read off h[CLS].

    Arguments:
      outputs  the dict ``BertModel.forward`` returns: ``outputs["last_hidden_state"]`` is a
               Tensor (B, T, C), ``outputs["pooler_output"]`` a Tensor (B, C).
      weight   Tensor (K, C) and ``bias`` Tensor (K,): the new output layer (PyTorch's Linear
               layout: one row per class).
    Returns the logits, a Tensor (B, K)::

        h_cls  = last_hidden_state[:, 0]          (B, C)   the vector at position 0, [CLS]
        logits = h_cls · weightᵀ + bias           (B, K)

    Use ``last_hidden_state``, not ``pooler_output``: the pooler was trained for next-sentence
    prediction only (and is untrained in models pre-trained without NSP). And use position 0, not
    the last position as a GPT does — with right padding the last position is often a pad.

    The graded tests check: the result equals h[CLS]·Wᵀ + b (not the pooler, not the last or
    the mean token); it does not depend on the other positions; gradients reach weight, bias and
    the [CLS] vector only.
    """
    # BEGIN SOLUTION
    h = outputs["last_hidden_state"]       # (B, T, C)
    h_cls = h[:, 0]                        # (B, C)
    return h_cls @ weight.T + bias         # (B, K)
    # END SOLUTION


def _checked_pool_args(hidden, attention_mask, how):
    """Given helper (not the lesson): ``hidden`` as a Tensor (B, T, C) and ``attention_mask`` as a
    bool array (B, T) (all True when None); ``how`` must be one of POOLING."""
    if how not in POOLING:
        raise ConfigError(f"pool: how={how!r}, expected one of {POOLING}")
    hidden = as_tensor(hidden)
    if hidden.ndim != 3:
        raise ShapeError(f"pool: hidden states of shape {hidden.shape}, expected (B, T, C)")
    B, T, _ = hidden.shape
    if attention_mask is None:
        return hidden, np.ones((B, T), dtype=bool)
    mask = np.asarray(attention_mask.data if isinstance(attention_mask, Tensor) else attention_mask)
    if mask.shape != (B, T):
        raise ShapeError(f"pool: attention_mask of shape {mask.shape}, expected {(B, T)} to match "
                         f"hidden states {hidden.shape}")
    return hidden, mask.astype(bool)


def pool(hidden, attention_mask=None, how="cls"):
    """Task 5.4: one vector per sequence from the hidden states — [CLS], mean or max pooling.

    Arguments:
      hidden          Tensor (B, T, C): e.g. ``outputs["last_hidden_state"]``.
      attention_mask  array (B, T), True (or 1) on real tokens and False (0) on padding;
                      ``None`` means every position is real.
      how             ``"cls"``, ``"mean"`` or ``"max"``.
    Returns a Tensor (B, C), differentiable with respect to ``hidden``. With m_t the mask::

        cls:   h[:, 0]
        mean:  Σ_t m_t · h_t / Σ_t m_t                    (over real tokens only)
        max:   max over {t : m_t = 1} of h_t, per channel  (a pad can never win)

    A row with no real token at all gives zeros for "mean" and "max" (never NaN or −inf).

    Hints:
      * ``m = attention_mask[..., None]`` (B, T, 1) broadcasts against (B, T, C).
      * For the mean, multiply by the 0/1 mask and divide by the count per row (at least 1).
      * For the max, ``hidden.masked_fill(~m, very_negative)`` first; pick a *finite*
        very_negative (e.g. ``np.finfo(hidden.dtype).min``) so that no −inf reaches the backward.
        Then replace the result of a row without real tokens by 0 (``autograd.where``).

    The graded tests check: "mean" equals the mean over real tokens and ignores whatever the
    pads hold; "max" never returns a pad's value, even a very large one; gradients are zero at
    padded positions; "cls" is position 0; an all-padding row gives zeros; ``None`` = no padding.
    """
    hidden, mask = _checked_pool_args(hidden, attention_mask, how)  # given: Tensor (B, T, C), bool (B, T)
    # BEGIN SOLUTION
    if how == "cls":
        return hidden[:, 0]                                    # (B, C)
    m = mask[..., None]                                        # (B, T, 1)
    counts = mask.sum(axis=1, keepdims=True)                   # (B, 1) real tokens per row
    if how == "mean":
        total = (hidden * m.astype(hidden.dtype)).sum(axis=1)  # (B, C) pads add 0
        return total / np.maximum(counts, 1).astype(hidden.dtype)
    very_negative = np.finfo(hidden.dtype).min
    best = hidden.masked_fill(~m, very_negative).max(axis=1)  # (B, C) a pad never wins
    return where(counts > 0, best, 0.0)                        # all-pad row -> 0
    # END SOLUTION
