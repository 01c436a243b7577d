"""Task 7.1: ELECTRA's masking, generator sampling and replaced-token labels.

ELECTRA (Clark et al. 2020, §2, Figure 2) trains a small masked-LM *generator* and a *discriminator*
that sees the generator's samples in place of the masked tokens and must tell, for every token,
whether it is "original" or "replaced". The data side, from the reference code
(google-research/electra, ``pretrain/pretrain_helpers.py`` and ``run_pretraining.py``):

1. Candidates: positions that are not special (``[CLS]``, ``[SEP]``), not ``[MASK]`` and not padding.
2. ``n = max(1, min(N, round(#non-pad · mask_prob)))`` per sequence; ``N = max_predictions``
   (``int((mask_prob + 0.005) · T)`` = 19 for T = 128 by default). ``#non-pad`` counts
   ``[CLS]``/``[SEP]``; ``round`` is half to even (Python's ``round`` and ``np.round`` both are).
3. Draw n positions uniformly from the candidates **with replacement**; a position drawn twice is
   masked once (so fewer than n may be masked).
4. Generator input: 85% of the masked positions become ``[MASK]``, 15% keep the original token.
   Unlike BERT there is no random replacement: the generator supplies the "random" tokens.
5. Sample with the Gumbel-max trick: ``argmax(logits/T + g)``, ``g = -log(-log(u))``, u ~ U(0,1),
   which is a draw from ``softmax(logits/T)``.
6. Write the samples into every masked position (``minilm.corruption.electra_corrupt``).
7. Label 1 ("replaced") iff the position was masked AND the sample differs from the original; a
   generator that guesses right produced an *original* token (label 0).

Letters: B batch, T sequence length, V vocabulary size, N = max_predictions.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError, TokenizerError
from minilm.corruption._token_ids import check_fraction, check_range

IGNORE_INDEX = -100


def _checked_ids(op, ids):
    """Given helper (not the lesson): ``ids`` as a new int64 array of non-negative ids."""
    arr = np.asarray(ids)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TokenizerError(f"{op}: ids have dtype {arr.dtype}: expected integer token ids")
    arr = arr.astype(np.int64)
    check_range(arr, op=op, vocab_size=None)
    return arr


def electra_mask(ids, *, mask_id, special_ids, pad_id, rng, mask_prob=0.15, max_predictions=None):
    """Task 7.1: ELECTRA's masking (steps 1-4 of the module docstring).

    ``ids``: (T,) or (B, T) int array, padded with ``pad_id``. Returns ``(inputs, masked, labels)``,
    each with the shape of ``ids``:
      * ``inputs``: int64, ``mask_id`` at 85% of the masked positions, the original id elsewhere;
      * ``masked``: bool, True at every masked position (each counted once);
      * ``labels``: int64, the original id where ``masked``, -100 elsewhere.

    Per sequence (row) b:
      1. ``candidates`` = positions whose id is not in ``special_ids``, not ``mask_id``, not ``pad_id``;
         if there are none, mask nothing in that row.
      2. ``n = max(1, min(N, round(nonpad * mask_prob)))`` where ``nonpad`` = number of ids
         != ``pad_id`` (``[CLS]``/``[SEP]`` included) and ``N = max_predictions`` (given below).
      3. ``rng.choice(candidates, size=n, replace=True)``; mark them in ``masked``.
      4. an independent draw per masked position: ``[MASK]`` w.p. 0.85, else keep the original.
         No random replacement.

    The graded tests check (over thousands of sequences): specials, padding and ``[MASK]`` never
    masked; the mean masked count matches n draws with replacement; n counts non-pad tokens only;
    the 85/15 split; masked inputs are only ever ``mask_id`` or the original; labels; ``ids`` unchanged.
    """
    op = "electra_mask"
    ids = _checked_ids(op, ids)  # given: a new int64 array
    check_fraction(mask_prob, op=op, name="mask_prob")
    if ids.ndim not in (1, 2):
        raise ShapeError(f"{op}: expected ids of shape (T,) or (B, T), got {ids.shape}")
    rows = ids[None, :] if ids.ndim == 1 else ids  # (B, T); a 1-D input is one row
    B, T = rows.shape
    N = max(1, int((mask_prob + 0.005) * T)) if max_predictions is None else max_predictions
    if int(N) != N or N < 1:
        raise ConfigError(f"{op}: max_predictions={max_predictions!r} must be an integer >= 1")
    raise NotImplementedError("Task 7.1: electra_mask")


def sample_from_logits(logits, *, rng, temperature=1.0, disallow_ids=None):
    """Task 7.1: one token per position from ``softmax(logits / temperature)``, by Gumbel-max.

    ``logits``: (..., V) float. Returns an int64 array of shape ``logits.shape[:-1]``.

    The Gumbel-max trick: with ``u ~ Uniform(0, 1)`` of the shape of ``logits`` and
    ``g = -log(-log(u + 1e-9) + 1e-9)`` (ELECTRA's constants keep the logs finite),
    ``argmax(logits / temperature + g, axis=-1)`` is distributed exactly as
    ``softmax(logits / temperature)``. A plain ``argmax(logits)`` is NOT a sample.

    ``disallow_ids`` (optional, int array of shape ``logits.shape[:-1]``): ELECTRA's
    ``disallow_correct``. After dividing by the temperature, subtract 1000 from the logit of that
    token at each position, so the generator (almost surely) never proposes the true token.
    Do not modify ``logits``.

    The graded tests compare the frequencies of >= 10,000 samples with ``softmax(logits / T)`` for
    several temperatures (a chi-square bound), and check ``disallow_ids`` and the output shape.
    """
    logits = np.asarray(logits, dtype=np.float64)  # given
    if logits.ndim < 1 or logits.shape[-1] == 0:
        raise ShapeError(f"sample_from_logits: expected logits (..., V) with V >= 1, got {logits.shape}")
    if not temperature > 0:
        raise ConfigError(f"sample_from_logits: temperature={temperature!r} must be > 0")
    if disallow_ids is not None:
        disallow_ids = np.asarray(disallow_ids)
        if disallow_ids.shape != logits.shape[:-1]:
            raise ShapeError(f"sample_from_logits: disallow_ids of shape {disallow_ids.shape} must "
                             f"have the shape of logits without its last axis, {logits.shape[:-1]}")
    raise NotImplementedError("Task 7.1: sample_from_logits")


def replaced_token_labels(original, corrupted, masked):
    """Task 7.1: the discriminator's targets, 1 = "replaced", 0 = "original".

    ``original``, ``corrupted`` (the generator's samples written into the masked positions) and
    ``masked`` (bool) share one shape, (T,) or (B, T). Return an int64 array of that shape:

        label_t = 1  iff  masked_t and corrupted_t != original_t

    A masked position where the generator happened to sample the original token is labelled 0:
    the token the discriminator sees *is* the original. (ELECTRA, §2: "if the generator happens to
    generate the correct token, that token is considered 'real' instead of 'fake'".)

    The graded tests check hand-made cases, including samples equal to the original.
    """
    original, corrupted, masked = np.asarray(original), np.asarray(corrupted), np.asarray(masked)  # given
    if not original.shape == corrupted.shape == masked.shape:
        raise ShapeError(f"replaced_token_labels: original {original.shape}, corrupted "
                         f"{corrupted.shape} and masked {masked.shape} must have one shape")
    raise NotImplementedError("Task 7.1: replaced_token_labels")
