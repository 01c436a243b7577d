"""Task 7.3: the ablations of ELECTRA §3.2 (Table 5) — where does ELECTRA's gain come from?

All four objectives share the generator half of the step (Tasks 7.1-7.2): mask ~15% of the
tokens, let the generator sample replacements, and feed the *corrupted* ids x̂ (the samples written
into every masked position) to the main network. They differ in what the main network predicts
and which positions its loss counts (m = the masked positions, a = the real, non-pad tokens)::

    objective        head                 target at t                loss counts t ∈     paper GLUE
    electra          binary (replaced?)   y_t = 1[x̂_t ≠ x_t]          a (all real tokens)  85.0
    electra15        binary (replaced?)   y_t = 1[x̂_t ≠ x_t]          m (masked only)      82.4
    replace_mlm      MLM softmax over V   x_t (the original)          m                    82.4
    all_tokens_mlm   MLM + copy D_t       x_t (the original)          a                    84.3
    (BERT: MLM on [MASK]ed input, loss on m: 82.2)

* **ELECTRA-15%**: the discriminator loss only on the masked positions — it isolates the benefit
  of learning from all tokens.
* **Replace MLM**: a masked LM whose masked tokens are replaced by generator samples instead of
  [MASK] — it isolates the [MASK] pre-train/fine-tune mismatch.
* **All-Tokens MLM**: like Replace MLM, but every token is predicted. The paper adds a *copy
  mechanism*: a sigmoid D_t = σ(c_t) gives the probability that the token is simply the input,
  and p(x_t) = D_t·1[x_t = x̂_t] + (1 − D_t)·softmax(logits_t)[x_t]. minilm implements it; c_t
  comes from the discriminator's binary head (dense → GELU → dense(1)).

The heads live in ``minilm.models.electra.Electra.main_loss`` and the weighting in Task 7.2's
``electra_loss``; these slots decide the targets and positions, and the copy-mechanism loss.

Letters: B batch, T time, V vocabulary.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd.errors import ConfigError, ShapeError
from autograd.function import as_tensor

OBJECTIVES = ("electra", "electra15", "replace_mlm", "all_tokens_mlm")
IGNORE_INDEX = -100


def variant_targets(objective, original, corrupted, masked, attention_mask):
    """Task 7.3: the main network's targets and the positions its loss counts, per objective.

    Arguments (all (B, T)): ``original`` the clean ids x; ``corrupted`` x̂, the ids the main network
    reads (generator samples at the masked positions); ``masked`` bool, the masked positions m;
    ``attention_mask`` 1/0 (or bool), the real tokens a ([CLS]/[SEP] included, padding excluded).

    Return ``(labels, weights)``: ``labels`` an int64 array (B, T), ``weights`` a bool array (B, T)
    that is True exactly where the loss counts:

    * ``"electra"``:        labels = 1[masked and x̂ ≠ x] (0/1),  weights = a
    * ``"electra15"``:      labels = 1[masked and x̂ ≠ x] (0/1),  weights = m
    * ``"replace_mlm"``:    labels = x where m, -100 elsewhere,  weights = m
    * ``"all_tokens_mlm"``: labels = x where a, -100 elsewhere,  weights = a

    (For the MLM objectives ``weights == (labels != -100)``; -100 is what ``F.cross_entropy``
    skips.) Do not modify the inputs.

    The graded tests check each objective on hand-made arrays: ELECTRA-15% counts only the masked
    positions and ELECTRA every real token; a masked position whose sample equals the original is
    a 0 label (it still counts); Replace MLM predicts the original at every masked position — the
    replaced ones and the ones where the sample happened to be right — and nowhere else; All-Tokens
    MLM predicts the original at every real token and never at padding.
    """
    if objective not in OBJECTIVES:  # given: checks
        raise ConfigError(f"variant_targets: objective={objective!r}, expected one of {OBJECTIVES}")
    original, corrupted = np.asarray(original), np.asarray(corrupted)
    masked, real = np.asarray(masked, dtype=bool), np.asarray(attention_mask).astype(bool)
    if not original.shape == corrupted.shape == masked.shape == real.shape:
        raise ShapeError(f"variant_targets: original {original.shape}, corrupted {corrupted.shape}, masked "
                         f"{masked.shape} and attention_mask {real.shape} must share one shape")
    raise NotImplementedError("Task 7.3: variant_targets")


def copy_mlm_loss(mlm_logits, copy_logits, inputs, labels):
    """Task 7.3: All-Tokens MLM with the copy mechanism (ELECTRA §3.2), a scalar Tensor.

    Arguments:
      mlm_logits   Tensor (B, T, V): the main network's MLM logits.
      copy_logits  Tensor (B, T): c_t; D_t = σ(c_t) is the probability of copying the input token.
      inputs       int array (B, T): x̂, the ids the network read.
      labels       int array (B, T): the original x_t, -100 where nothing is predicted (padding).

    For every position with a label::

        p_t = D_t · 1[labels_t = inputs_t]  +  (1 − D_t) · softmax(mlm_logits_t)[labels_t]
        L   = mean over labelled t of  −log(p_t + 1e-9)

    The copy term only helps where the input already is the answer (the token was kept, or the
    generator sampled it); elsewhere the model must both say "do not copy" (D_t → 0) and predict
    x_t. 1e-9 keeps the log finite. With no labelled position, return 0 (not NaN).

    Hints: ``F.log_softmax(mlm_logits, axis=-1)``, then ``.gather(-1, idx[..., None])[..., 0]``
    with ``idx = np.where(valid, labels, 0)`` (never index with -100); ``.exp()``, ``.log()``,
    ``F.sigmoid``; multiply by the 0/1 ``valid`` array before summing.

    The graded tests check: the value against a NumPy reference (copy term only where the label
    equals the input; D weighting the copy, 1 − D the softmax); unlabelled positions change nothing;
    the gradient reaches both the MLM and the copy logits.
    """
    logits, c = as_tensor(mlm_logits), as_tensor(copy_logits)  # given: checks
    inputs, labels = np.asarray(inputs), np.asarray(labels)
    if logits.ndim != 3 or c.shape != logits.shape[:2] or inputs.shape != c.shape or labels.shape != c.shape:
        raise ShapeError(f"copy_mlm_loss: mlm_logits {logits.shape} (B, T, V), copy_logits {c.shape}, inputs "
                         f"{inputs.shape} and labels {labels.shape} (B, T) do not fit")
    raise NotImplementedError("Task 7.3: copy_mlm_loss")
