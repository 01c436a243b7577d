"""RoBERTa's masking (Liu et al. 2019, §4.1): fairseq's MaskTokensDataset, dynamic vs static.

* :func:`roberta_mask` (Task 6.1) masks one sequence: ``num_mask = int(p·T + U[0,1))`` positions
  drawn without replacement from all T positions; of those 80% ``<mask>``, 10% unchanged, 10% a
  random id from the non-special vocabulary ``[nspecial, V)``. Targets are the original id at
  masked positions and ``pad_id`` elsewhere (fairseq's convention; :func:`targets_to_labels` turns
  them into the -100 convention).
* :func:`dynamic_mask_rng` (Task 6.1) is the Generator for sequence ``index`` in epoch ``epoch``:
  ``np.random.default_rng([seed, epoch, index])``, reproducible and new every epoch.
* :class:`MaskedDataset` (Task 6.1) reads sequences masked dynamically (a fresh mask per epoch) or
  statically (one of ``static_copies`` masks made up front, BERT's ``dupe_factor = 10``).

Letters: T sequence length, V vocabulary size.
"""
from __future__ import annotations

import numpy as np

from autograd import tasks

__all__ = ["mask_plan", "roberta_mask", "dynamic_mask_rng", "MaskedDataset", "targets_to_labels"]

mask_plan = tasks.bind("task06_roberta.masking", "mask_plan")  # Task 6.1: solutions/task06_roberta/masking.py
roberta_mask = tasks.bind("task06_roberta.masking", "roberta_mask")  # Task 6.1: solutions/task06_roberta/masking.py
dynamic_mask_rng = tasks.bind("task06_roberta.masking", "dynamic_mask_rng")  # Task 6.1: solutions/task06_roberta/masking.py
MaskedDataset = tasks.bind("task06_roberta.masking", "MaskedDataset")  # Task 6.1: solutions/task06_roberta/masking.py


def targets_to_labels(targets, *, pad_id: int = 1, ignore_index: int = -100) -> np.ndarray:
    """fairseq targets (pad where nothing is predicted) -> labels with ``ignore_index`` there.

    fairseq's masked-LM criterion skips ``pad`` targets; ``cross_entropy(..., ignore_index=-100)``
    skips -100. A masked position whose original token was ``pad`` itself is skipped either way.
    """
    targets = np.asarray(targets)
    return np.where(targets == pad_id, ignore_index, targets).astype(np.int64)
