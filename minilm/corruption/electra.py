"""ELECTRA's input corruption (Clark et al. 2020, §2): mask, sample, replace, label.

The pipeline of one replaced-token-detection step, on the data side (google-research/electra,
``pretrain/pretrain_helpers.py``):

1. :func:`electra_mask` (Task 7.1): positions drawn with replacement from the non-special, non-pad
   tokens, ``n = max(1, min(N, round(#non-pad · 0.15)))``; 85% of them become ``[MASK]``, 15% keep
   the original (no random replacement). Returns ``(inputs, masked, labels)``.
2. The generator (a small masked LM) reads ``inputs``; :func:`sample_from_logits` (Task 7.1) draws
   one token per position from ``softmax(logits / T)`` by Gumbel-max (no gradient flows through it).
3. :func:`electra_corrupt` writes the samples into **every** masked position, the 15% that kept the
   original included.
4. :func:`replaced_token_labels` (Task 7.1): 1 iff masked and the sample differs from the original.

Letters: B batch, T sequence length, V vocabulary size.
"""
from __future__ import annotations

import numpy as np

from autograd import tasks
from autograd.errors import ShapeError

__all__ = ["electra_mask", "sample_from_logits", "replaced_token_labels", "electra_corrupt"]

electra_mask = tasks.bind("task07_electra.sampling", "electra_mask")  # Task 7.1: solutions/task07_electra/sampling.py
sample_from_logits = tasks.bind("task07_electra.sampling", "sample_from_logits")  # Task 7.1: solutions/task07_electra/sampling.py
replaced_token_labels = tasks.bind("task07_electra.sampling", "replaced_token_labels")  # Task 7.1: solutions/task07_electra/sampling.py


def electra_corrupt(original, masked, samples) -> np.ndarray:
    """The discriminator's input: ``original`` with ``samples`` written into every masked position.

    ``original`` (T,) or (B, T) ids; ``masked`` bool of the same shape; ``samples`` the generator's
    tokens, either of the same shape (one per position, as ``sample_from_logits`` gives for the
    logits of every position; only the masked ones are used) or 1-D with one token per masked
    position, in row-major order (as from logits gathered at ``np.nonzero(masked)``).
    """
    original = np.asarray(original)
    masked = np.asarray(masked, dtype=bool)
    samples = np.asarray(samples)
    if masked.shape != original.shape:
        raise ShapeError(f"electra_corrupt: masked {masked.shape} must have the shape of original "
                         f"{original.shape}")
    out = original.astype(np.int64)  # a new array
    if samples.shape == original.shape:
        out[masked] = samples[masked]
    elif samples.ndim == 1 and samples.shape[0] == int(masked.sum()):
        out[masked] = samples
    else:
        raise ShapeError(f"electra_corrupt: samples of shape {samples.shape} fit neither the "
                         f"sequence {original.shape} nor the {int(masked.sum())} masked positions")
    return out
