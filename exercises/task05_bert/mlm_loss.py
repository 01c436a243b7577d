"""Task 5.2 (the loss half): BERT's masked-LM loss, cross-entropy over the masked positions only.

Devlin et al. 2019, §3.1 "Task #1: Masked LM": "the final hidden vectors corresponding to the mask
tokens are fed into an output softmax over the vocabulary". Only the positions chosen by the masking
(``mask_tokens``, the other half of Task 5.2) are predicted; every other position adds nothing to the
loss and is not counted in its mean. With the indicator m_t = 1 for a predicted position::

    L_MLM = Σ_t m_t · (−log p(x_t | x̃)) / Σ_t m_t          (0 when Σ_t m_t = 0)

Letters: B batch, T time, V vocabulary. ``labels`` follows the Hugging Face convention: the original
token id where m_t = 1, and ``-100`` where m_t = 0.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import Tensor
from autograd.errors import ShapeError
from autograd.function import as_tensor

IGNORE_INDEX = -100  # the label of a position that is not predicted (m_t = 0)


def _checked_labels(op, logits, labels):
    """Given helper (not the lesson): ``labels`` as an int64 array of shape ``logits.shape[:-1]``
    whose entries are ``-100`` or a class id in [0, V)."""
    labels = np.asarray(labels.data if isinstance(labels, Tensor) else labels)
    if labels.shape != logits.shape[:-1]:
        raise ShapeError(f"{op}: logits {logits.shape} need labels of shape {logits.shape[:-1]}, "
                         f"got {labels.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ShapeError(f"{op}: labels must be integer ids (or -100), got dtype {labels.dtype}")
    V = logits.shape[-1]
    bad = (labels != IGNORE_INDEX) & ((labels < 0) | (labels >= V))
    if bad.any():
        raise ShapeError(f"{op}: label {int(labels[bad].flat[0])} is neither -100 nor a token id "
                         f"in [0, {V})")
    return labels.astype(np.int64)


def mlm_loss(logits, labels):
    """Task 5.2: the masked-LM loss — mean cross-entropy over the predicted positions only.

    Arguments:
      logits  Tensor (B, T, V) (or any (..., V)): the MLM head's scores at every position.
      labels  int array (B, T) (shape ``logits.shape[:-1]``): the original token id where the
              position was masked (m_t = 1), ``-100`` where it was not (m_t = 0).
    Returns a scalar Tensor (differentiable with respect to ``logits``)::

        m_t    = 1 if labels_t != -100 else 0
        nll_t  = −log softmax(logits_t)[labels_t]                  (only needed where m_t = 1)
        L      = Σ_t m_t · nll_t / max(Σ_t m_t, 1)

    Two things make it the *MLM* loss and not an ordinary language-model loss:
      * the sum runs over masked positions only — an unmasked token is visible in the input, so
        predicting it teaches nothing;
      * the mean divides by the number of masked positions, not by B·T: adding padding or
        unmasked tokens must not shrink the loss.
    When nothing is masked the loss is 0 (not 0/0 = NaN), and its gradient is zero.

    Hints:
      * ``F.log_softmax(logits, axis=-1)`` is stable; ``t.gather(-1, idx[..., None])[..., 0]``
        picks one entry per position (``idx`` a plain int array).
      * Never index with -100 (NumPy would silently read the 100th entry from the end): replace
        it first, e.g. ``np.where(m, labels, 0)``, and let m_t zero those terms.
      * Multiply a Tensor by a float array of 0/1 (``m.astype(logits.dtype)``) to drop terms;
        divide by a plain Python number.

    The graded tests check: the value against a NumPy reference; that logits at unmasked
    positions change neither the loss nor get any gradient; that appending fully unmasked rows
    (padding) leaves the loss unchanged (mean over masked positions, not over B·T); a batch
    repeated twice gives the same loss (a mean, not a sum); 0 and a finite zero gradient when
    nothing is masked; the gradient against (softmax − one-hot) / n.
    """
    logits = as_tensor(logits)
    labels = _checked_labels("mlm_loss", logits, labels)  # given: int64 (B, T), -100 or [0, V)
    raise NotImplementedError("Task 5.2: mlm_loss")
