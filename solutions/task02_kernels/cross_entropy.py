"""Task 2.2: softmax cross-entropy with ``ignore_index`` and label smoothing (PyTorch semantics).

Rows n = 0 … N−1 of ``logits`` (N, V) are predictions over V classes; ``target`` (N,) holds the
class ids. With log-probabilities ℓₙ = log softmax(logitsₙ) (computed stably, Task 2.1):

    target distribution   qₙ = (1 − ε)·onehot(targetₙ) + ε/V          (label smoothing ε ∈ [0, 1])
    per-row loss          lossₙ = −Σᵥ qₙᵥ ℓₙᵥ = (1 − ε)·(−ℓₙ,targetₙ) + ε·(−meanᵥ ℓₙᵥ)

Note that the smoothing mass ε/V goes to *every* class, the target included (PyTorch's
``CrossEntropyLoss(label_smoothing=ε)``; fairseq spreads ε/(V−1) over the others instead — not this).

**Ignored rows.** A row whose target equals ``ignore_index`` (the HF convention −100 marks "no
prediction here": padding, unmasked MLM positions) contributes 0 and is **not counted**:

    reduction "none": the (N,) vector of lossₙ, 0.0 on ignored rows
    reduction "sum":  Σₙ lossₙ
    reduction "mean": Σₙ lossₙ / N_valid,  N_valid = #rows not ignored;  0.0 if N_valid = 0

(PyTorch gives NaN for an all-ignored mean; BERT/ELECTRA divide by N_valid + 1e-5 → 0. We return
0, so an all-padding batch never poisons training.) Gather with ``np.where(valid, target, 0)`` so
−100 never indexes the array (NumPy would silently read class V−100).

**Backward.** dlossₙ/dlogitsₙ = pₙ − qₙ with pₙ = softmax(logitsₙ) = exp(ℓₙ). The upstream
gradient is per row for "none" (shape (N,)), a scalar otherwise; "mean" divides it by N_valid.
Ignored rows get a zero gradient.
"""
import numpy as np


def cross_entropy_forward(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """Task 2.2: returns ``(loss, probs)``.

    logits (N, V) float; target (N,) int (ids in [0, V), or ``ignore_index``);
    label_smoothing ε in [0, 1]; reduction "mean" | "sum" | "none" (already validated).
    loss: a 0-d array for "mean"/"sum", the (N,) per-row losses for "none" — logits' dtype.
    probs: softmax(logits) (N, V), saved for the backward.

    Tests check: the mean against −log p[target]; logits ±1e4 stay finite; ignored rows add 0
    and are left out of the mean's count; all rows ignored → 0.0 (not NaN); label smoothing
    equals −Σ q·log p with q = (1−ε)·onehot + ε/V; "sum" and "none".
    """
    # BEGIN SOLUTION
    N, V = logits.shape
    valid = target != ignore_index  # (N,)
    safe = np.where(valid, target, 0)  # never index with ignore_index
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))  # (N, V)
    nll = -logp[np.arange(N), safe]  # (N,)
    losses = (1.0 - label_smoothing) * nll
    if label_smoothing > 0:
        losses = losses + label_smoothing * -logp.mean(axis=1)
    losses = np.where(valid, losses, 0.0).astype(logits.dtype)
    if reduction == "none":
        loss = losses
    elif reduction == "sum":
        loss = losses.sum()
    else:
        loss = losses.sum() / max(int(valid.sum()), 1)
    return np.asarray(loss, dtype=logits.dtype), np.exp(logp)
    # END SOLUTION


def cross_entropy_backward(grad_output, probs, target, ignore_index=-100, label_smoothing=0.0,
                           reduction="mean"):
    """Task 2.2: dL/dlogits (N, V) = wₙ·(pₙ − qₙ), with wₙ = 0 on ignored rows and otherwise
    wₙ = grad_output[n] ("none"), grad_output ("sum") or grad_output / N_valid ("mean").

    grad_output: (N,) for "none", a 0-d array otherwise. probs: saved softmax (N, V).
    Tests check: against central differences of the reference loss (float64) for every
    reduction, with and without smoothing and ignored rows; all ignored → zeros (no NaN).
    """
    # BEGIN SOLUTION
    N, V = probs.shape
    valid = target != ignore_index
    q = np.full((N, V), label_smoothing / V, dtype=probs.dtype)
    q[np.arange(N), np.where(valid, target, 0)] += 1.0 - label_smoothing
    if reduction == "none":
        w = np.asarray(grad_output, dtype=probs.dtype)
    elif reduction == "sum":
        w = np.full(N, grad_output, dtype=probs.dtype)
    else:
        w = np.full(N, grad_output / max(int(valid.sum()), 1), dtype=probs.dtype)
    w = np.where(valid, w, 0.0).astype(probs.dtype)  # (N,)
    return w[:, None] * (probs - q)
    # END SOLUTION
