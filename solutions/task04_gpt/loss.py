"""Task 4.1: GPT's training objective — teacher-forced next-token prediction with a tied output layer.

A causal language model factorises the probability of a text left to right (Radford et al. 2018,
§3.1, Eq. 1):

    L(x₁..x_T) = − Σ_{t=1}^{T−1}  log p(x_{t+1} | x₁..x_t)

*Teacher forcing*: the whole true sequence goes in at once, and the causal mask makes the output at
position t depend on x₁..x_t only, so one forward pass gives T − 1 predictions. Logits at position t
are scored against the token at t + 1; the last position has no next token, and the first token is
never predicted.

*Tied output*: GPT-2 scores the final hidden state h_t against every row of the token embedding,
``logits = h · wteᵀ`` (openai/gpt-2, src/model.py; Press & Wolf 2017). One (V, C) matrix serves as
input and output layer, with no output bias, and receives gradients from both ends.

Letters: B batch, T time, C channels, V vocabulary.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd.errors import ShapeError

IGNORE_INDEX = -100  # PyTorch / Hugging Face: a target that adds nothing to the loss


def causal_lm_loss(logits, targets, ignore_index=IGNORE_INDEX):
    """Task 4.1: mean cross-entropy of predicting token t+1 from position t.

    Inputs: logits (B, T, V) Tensor; targets (B, T) int array **aligned with the input ids** (the
    Hugging Face ``labels`` convention: usually ``targets = idx``, with ``ignore_index`` (-100)
    wherever nothing should be predicted, e.g. padding or a prompt). Returns a scalar Tensor.
    (``GPT.lm_loss(ids)`` calls this; ``GPT.forward(x, y)`` instead takes targets that the data
    loader has already shifted, y[:, t] = x[:, t+1], as nanoGPT does.)

    The shift: the prediction at position t (``logits[:, t]``) is scored against ``targets[:, t+1]``,
    for t = 0..T-2. So drop the last position of the logits and the first of the targets, then take
    the mean cross-entropy over every (b, t) pair whose target is not ``ignore_index``. When every
    target is ignored, the loss is 0 (not NaN).

    Hint: ``F.cross_entropy(logits, target, ignore_index=...)`` takes (..., V) logits and (...)
    targets and already averages over the valid ones; Tensor slicing ``logits[:, :-1]`` keeps the
    gradient.

    The graded tests check the value against a direct computation (so an unshifted target, or a
    loss that wraps the last position around to the first token, fails), that -100 positions are
    ignored, T = 1 gives 0, and the gradient at the last position is exactly zero.
    """
    targets = np.asarray(targets)
    if logits.ndim != 3 or targets.shape != logits.shape[:2]:
        raise ShapeError(f"causal_lm_loss: logits {logits.shape} and targets {targets.shape}; expected "
                         f"(B, T, V) and (B, T)")
    # BEGIN SOLUTION
    shifted_logits = logits[:, :-1]                  # (B, T-1, V): predictions for positions 1..T-1
    shifted_targets = targets[:, 1:]                 # (B, T-1):    the tokens that came next
    return F.cross_entropy(shifted_logits, shifted_targets, ignore_index=ignore_index)
    # END SOLUTION


def tied_lm_logits(h, wte):
    """Task 4.1: the tied output layer, logits = h · wteᵀ (no bias).

    h (B, T, C) Tensor — the final hidden states (after ``ln_f``); wte (V, C) — the token embedding
    Parameter itself. Returns (B, T, V) logits. Use ``wte`` directly (not a copy, not
    ``wte.detach()``): the point of tying is that the output layer's gradient reaches the embedding.

    The graded tests check the values and that wte.grad receives the output-layer gradient hᵀ·g.
    """
    # BEGIN SOLUTION
    return h @ wte.T                                 # (B, T, C) @ (C, V) -> (B, T, V)
    # END SOLUTION
