"""Task 12.1: GPT-1 fine-tuning with the auxiliary language-modelling loss (Radford et al. 2018, §3.2).

GPT-1 pre-trains a Transformer decoder as a language model (L1), then fine-tunes it on a labelled
task. The input ``x¹ … x^m`` (wrapped in a start token and an *extract* token) goes through the
pre-trained model; the final state of the **last** token, ``h_l^m``, feeds one new linear layer:

    P(y | x¹ … x^m) = softmax(h_l^m W_y)                 the task head, "built entirely on the final state"
    L2(C) = Σ_(x, y) −log P(y | x¹ … x^m)                the task loss (mean cross-entropy here)
    L3(C) = L2(C) + λ · L1(C),     λ = 0.5               L1 = the LM loss on the same task inputs

Keeping the LM loss during fine-tuning "improves generalization of the supervised model, and
accelerates convergence" (§3.2); the paper's ablation (Table 5) finds it helps the larger datasets.

The padding convention of this module is **right padding**: row b holds its ``n_b`` real tokens at
positions ``0 … n_b − 1`` and padding after them (``attention_mask[b, t] = 1`` on real tokens).
With a causal model the last real token has already read the whole sentence, so its state is the
sentence vector; position ``T − 1`` is padding for every row but the longest, and position 0 has
read only one token. Mean and max pooling are the other options (over the real tokens only).

Letters: B batch, T time, C channels, K classes.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd.errors import ConfigError, ShapeError

POOLING = ("last", "mean", "max")


def _check_pooling_inputs(hidden, attention_mask, how):
    """Given helper (not the lesson): the shapes and the pooling name; returns the mask as bool (B, T)."""
    if how not in POOLING:
        raise ConfigError(f"sequence_representation: how={how!r}, expected one of {POOLING}")
    if hidden.ndim != 3:
        raise ShapeError(f"sequence_representation: hidden of shape {hidden.shape}, expected (B, T, C)")
    m = np.asarray(attention_mask)
    if m.shape != hidden.shape[:2]:
        raise ShapeError(f"sequence_representation: attention_mask of shape {m.shape}, expected "
                         f"(B, T) = {hidden.shape[:2]} of 1 (token) / 0 (padding)")
    if not np.isin(m, (0, 1)).all():
        raise ShapeError("sequence_representation: attention_mask must hold only 1 (token) and 0 (padding)")
    m = m.astype(bool)
    if not m.any(axis=1).all():
        raise ShapeError("sequence_representation: a row has no real token (its attention_mask is all 0)")
    return m


def gpt_finetune_loss(task_logits, labels, lm_loss, aux_weight=0.5):
    """Task 12.1: GPT-1's fine-tuning objective ``L3 = L2 + λ·L1`` (Radford et al. 2018, §3.2).

    Inputs:
        task_logits  Tensor (B, K): the classifier's scores, ``h_last W_y``
        labels       int array (B,) in [0, K)
        lm_loss      a scalar Tensor: L1, the language-model loss on the same inputs
        aux_weight   λ ≥ 0 (the paper's 0.5); λ = 0 is plain fine-tuning
    Return the scalar Tensor ``cross_entropy(task_logits, labels) + aux_weight * lm_loss``
    (the mean cross-entropy over the batch, ``F.cross_entropy``).

    Keep it a Tensor expression so that both losses send gradients back into the model: the LM
    term's gradient must arrive scaled by λ.

    The graded tests check the value against CE + λ·LM for several λ (λ must not be ignored or
    fixed at 0.5), that the gradient reaching ``lm_loss`` is exactly λ and the one reaching the
    logits is the cross-entropy's, and that λ = 0 gives the plain task loss.
    """
    if aux_weight < 0:
        raise ConfigError(f"gpt_finetune_loss: aux_weight={aux_weight}, expected λ >= 0")
    # BEGIN SOLUTION
    task_loss = F.cross_entropy(task_logits, np.asarray(labels))   # L2: mean over the batch
    return task_loss + aux_weight * lm_loss                          # L3 = L2 + λ·L1
    # END SOLUTION


def sequence_representation(hidden, attention_mask, how="last"):
    """Task 12.1: one vector per sequence from a decoder's final states, under right padding.

    Inputs:
        hidden          Tensor (B, T, C): the final hidden states (after the last LayerNorm)
        attention_mask  array (B, T) of 1 (real token) / 0 (padding); row b is ``n_b`` ones then zeros
        how             "last" | "mean" | "max"
    Return a Tensor (B, C):
        "last"  hidden[b, n_b − 1] — the last **real** token of each row (GPT-1's extract token),
                not position 0 (it has read one token) and not position T − 1 (padding in short rows)
        "mean"  the mean of hidden[b, t] over the real positions t only: Σ_t m_bt h_bt / Σ_t m_bt
        "max"   the element-wise max over the real positions only (padding must never win, even
                when its states are larger than every real one)

    Hints: ``n = attention_mask.sum(axis=1)``; ``hidden[np.arange(B), n - 1]`` picks one position
    per row (Tensor indexing keeps the gradient); for "max", ``hidden.masked_fill(pad[..., None],
    -1e9)`` first, then ``.max(axis=1)``. Build everything from Tensor operations.

    The graded tests fill the padded positions with huge values and compare every option with the
    real tokens' last state / mean / max, on rows of different lengths; they check that the
    gradient of "last" reaches only the last real position of each row.
    """
    m = _check_pooling_inputs(hidden, attention_mask, how)   # given: bool (B, T)
    # BEGIN SOLUTION
    B, T, C = hidden.shape
    if how == "last":
        last = m.sum(axis=1) - 1                              # (B,) index of the last real token
        return hidden[np.arange(B), last]                     # (B, C)
    if how == "mean":
        w = m.astype(hidden.dtype)[:, :, None]                # (B, T, 1): 1 on real tokens
        return (hidden * w).sum(axis=1) / w.sum(axis=1)       # (B, C)
    return hidden.masked_fill(~m[:, :, None], -1e9).max(axis=1)   # (B, C): padding never wins
    # END SOLUTION
