"""RoBERTa's masking (Liu et al. 2019, §4.1): fairseq's MaskTokensDataset, dynamic vs static.

* :func:`roberta_mask` masks one sequence with Task 6.1's two pieces: :func:`mask_plan` chooses
  ``num_mask = int(p·T + U[0,1))`` positions without replacement from all T positions and decides
  for each: 80% ``<mask>``, 10% unchanged, 10% a random id; :func:`apply_mask_plan` writes that
  into the tokens (random ids from the non-special vocabulary ``[nspecial, V)``) and makes the
  targets: the original id at masked positions and ``pad_id`` elsewhere (fairseq's convention;
  :func:`targets_to_labels` turns them into the -100 convention).
* :func:`dynamic_mask_rng` (Task 6.1) is the Generator for sequence ``index`` in epoch ``epoch``:
  ``np.random.default_rng([seed, epoch, index])``, reproducible and new every epoch.
* :class:`MaskedDataset` (Task 6.1) reads sequences masked dynamically (a fresh mask per epoch) or
  statically (one of ``static_copies`` masks made up front, BERT's ``dupe_factor = 10``).

Letters: T sequence length, V vocabulary size.
"""
from __future__ import annotations

import numpy as np

from autograd import tasks

from ._token_ids import as_ids, check_mask_args

__all__ = ["mask_plan", "apply_mask_plan", "roberta_mask", "dynamic_mask_rng", "MaskedDataset",
           "targets_to_labels"]

mask_plan = tasks.bind("task06_roberta.masking", "mask_plan")  # Task 6.1: solutions/task06_roberta/masking.py
apply_mask_plan = tasks.bind("task06_roberta.masking", "apply_mask_plan")  # Task 6.1: solutions/task06_roberta/masking.py
dynamic_mask_rng = tasks.bind("task06_roberta.masking", "dynamic_mask_rng")  # Task 6.1: solutions/task06_roberta/masking.py
MaskedDataset = tasks.bind("task06_roberta.masking", "MaskedDataset")  # Task 6.1: solutions/task06_roberta/masking.py


def roberta_mask(ids, *, mask_id: int, vocab_size: int, nspecial: int, rng: np.random.Generator,
                 prob: float = 0.15, leave_unmasked_prob: float = 0.1, random_token_prob: float = 0.1,
                 pad_id: int = 1):
    """fairseq's ``MaskTokensDataset`` on one sequence ``ids`` (T,): returns ``(inputs, targets)``, (T,) each.

    1-2. which positions, and what each becomes: Task 6.1's ``mask_plan`` over the T positions
         (``<s>`` included: fairseq excludes no special token);
    3-4. the targets and the corrupted input: Task 6.1's ``apply_mask_plan``.

    The two draw from ``rng`` in this order. ``functools.partial(roberta_mask, mask_id=..., ...)``
    is the masker a ``MaskedDataset`` takes.
    """
    op = "roberta_mask"
    ids = as_ids(ids, op=op, vocab_size=vocab_size, min_length=0)           # (T,) a new int64 array
    check_mask_args(op, mask_id=mask_id, vocab_size=vocab_size, nspecial=nspecial, prob=prob,
                    leave_unmasked_prob=leave_unmasked_prob, random_token_prob=random_token_prob)
    plan = mask_plan(len(ids), rng=rng, prob=prob, leave_unmasked_prob=leave_unmasked_prob,
                     random_token_prob=random_token_prob)                   # (masked, to_mask, to_random)
    return apply_mask_plan(ids, plan, mask_id=mask_id, vocab_size=vocab_size, nspecial=nspecial, rng=rng,
                           pad_id=pad_id)


def targets_to_labels(targets, *, pad_id: int = 1, ignore_index: int = -100) -> np.ndarray:
    """fairseq targets (pad where nothing is predicted) -> labels with ``ignore_index`` there.

    fairseq's masked-LM criterion skips ``pad`` targets; ``cross_entropy(..., ignore_index=-100)``
    skips -100. A masked position whose original token was ``pad`` itself is skipped either way.
    """
    targets = np.asarray(targets)
    return np.where(targets == pad_id, ignore_index, targets).astype(np.int64)
