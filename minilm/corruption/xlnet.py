"""XLNet's permutation language model: factorisation orders, permutation masks, targets.

Yang et al. 2019, "XLNet", §2.2–2.3; zihangdai/xlnet ``data_utils.py`` (``_local_perm``) and HF's
``DataCollatorForPermutationLanguageModeling``. The task slots (Task 8.1) are bound here; the two
functions below assemble a model's inputs from them.

Mask convention (XLNet's, the opposite of T5's): ``perm_mask[i, j] = True`` means position i may
NOT attend to position j. ``perm_mask`` is for the query stream (a target does not see its own
token); ``content_mask`` is the same without the diagonal (a token sees itself).

Letters: B batch, T sequence length, P number of predicted positions (``num_predict``).
"""
from __future__ import annotations

import numpy as np

from autograd import tasks
from autograd.errors import ConfigError, ShapeError

from ._token_ids import as_ids, check_id

__all__ = [
    "sample_factorization_order", "partial_prediction_targets", "permutation_mask",
    "sample_plm_spans", "xlnet_inputs", "plm_collator_inputs",
]

# Task 8.1: solutions/task08_xlnet/permutation.py
sample_factorization_order = tasks.bind("task08_xlnet.permutation", "sample_factorization_order")
partial_prediction_targets = tasks.bind("task08_xlnet.permutation", "partial_prediction_targets")
permutation_mask = tasks.bind("task08_xlnet.permutation", "permutation_mask")  # Task 8.1
sample_plm_spans = tasks.bind("task08_xlnet.permutation", "sample_plm_spans")  # Task 8.1


def _rows(ids, op):
    """``ids`` as a new (B, T) int64 array, and whether the caller gave a single (T,) row."""
    arr = np.asarray(ids)
    if arr.ndim == 1:
        return as_ids(arr, op=op)[None, :], True
    if arr.ndim == 2 and arr.shape[0] >= 1:
        return np.stack([as_ids(row, op=op) for row in arr]), False
    raise ShapeError(f"{op}: ids has shape {arr.shape}: expected (T,) or (B, T)")


def _id_set(ids) -> np.ndarray:
    """A collection of special ids (or one id) as a 1-D int64 array, for ``np.isin``."""
    return np.atleast_1d(np.asarray(ids, dtype=np.int64)).reshape(-1)


def xlnet_inputs(ids, *, rng, K=6, special_ids=(), functional_ids=(), perm_size=None,
                 num_predict=None):
    """The inputs of one XLNet pre-training step, as in the paper (partial prediction).

    For each row: sample a factorisation order (``perm_size`` for the local permutation), predict
    the last ``round(N / K)`` candidates of it (N = positions that are neither special nor
    functional), and build the two masks.

    Args:
        ids: ``(T,)`` or ``(B, T)`` token ids (the inputs are NOT masked: the content stream sees the
            real tokens; a target's own token is hidden from its query stream by ``perm_mask``).
        special_ids: ids that are never predicted and are plain context (e.g. padding).
        functional_ids: ids that are never predicted but keep their place in the order
            (XLNet's ``[SEP]`` and ``[CLS]``).
        num_predict: rows of ``target_mapping``; default the largest number of targets in a row.
    Returns a dict of new arrays (a leading B axis only if ``ids`` had one):
        ``input_ids (T,)`` int64, a copy of ``ids``;
        ``order (T,)`` int64, the factorisation order;
        ``perm_mask (T, T)`` bool, query stream, True = may not attend;
        ``content_mask (T, T)`` bool, content stream (perm_mask without the diagonal);
        ``target_mapping (P, T)`` float32, one-hot rows: row p selects the p-th target, targets
            in increasing position; zero rows pad up to ``num_predict`` (XLNet's layout; HF uses
            the T × T identity instead, see :func:`plm_collator_inputs`);
        ``target_mask (P,)`` float32, 1 for the real rows of ``target_mapping``;
        ``target_labels (P,)`` int64, the token of each row, -100 on padding rows;
        ``labels (T,)`` int64, the token where predicted, -100 elsewhere;
        ``inp_q (T,)`` float32, 1 at targets (where the query stream is used).
    """
    op = "xlnet_inputs"
    rows, single = _rows(ids, op)
    B, T = rows.shape
    specials, functionals = _id_set(special_ids), _id_set(functional_ids)
    per_row = []
    for row in rows:
        is_functional = np.isin(row, functionals)
        candidates = ~np.isin(row, specials) & ~is_functional
        order = sample_factorization_order(T, rng=rng, perm_size=perm_size)
        is_target = partial_prediction_targets(order, K=K, candidates=candidates)
        perm_mask, content_mask = permutation_mask(order, is_target, is_functional=is_functional)
        per_row.append((order, is_target, perm_mask, content_mask))

    out = _targets(rows, per_row, num_predict, op)
    return {k: v[0] for k, v in out.items()} if single else out


def _targets(rows, per_row, num_predict, op) -> dict:
    """:func:`xlnet_inputs`'s dict for ``rows`` (B, T), given each row's ``(order, is_target,
    perm_mask, content_mask)``: the stacked masks, and the targets in XLNet's padded layout."""
    B, T = rows.shape
    most = max(int(r[1].sum()) for r in per_row)
    P = most if num_predict is None else int(num_predict)
    if P < most:
        raise ConfigError(f"{op}: num_predict={P} but a row has {most} targets: expected "
                          f"num_predict >= {most} (raise it or K)")
    out = {
        "input_ids": rows.copy(),
        "order": np.stack([r[0] for r in per_row]),
        "perm_mask": np.stack([r[2] for r in per_row]),
        "content_mask": np.stack([r[3] for r in per_row]),
        "target_mapping": np.zeros((B, P, T), dtype=np.float32),
        "target_mask": np.zeros((B, P), dtype=np.float32),
        "target_labels": np.full((B, P), -100, dtype=np.int64),
        "labels": np.full((B, T), -100, dtype=np.int64),
        "inp_q": np.stack([r[1] for r in per_row]).astype(np.float32),
    }
    for b, (_, is_target, _, _) in enumerate(per_row):
        positions = np.flatnonzero(is_target)  # (n,) increasing
        n = positions.size
        out["target_mapping"][b, np.arange(n), positions] = 1.0
        out["target_mask"][b, :n] = 1.0
        out["target_labels"][b, :n] = rows[b, positions]
        out["labels"][b, positions] = rows[b, positions]
    return out


def plm_collator_inputs(ids, *, rng, mask_id, special_ids=(), plm_probability=1 / 6,
                        max_span_length=5):
    """HF's ``DataCollatorForPermutationLanguageModeling``, for comparison with :func:`xlnet_inputs`.

    Targets are spans from :func:`sample_plm_spans` (special positions removed); their input ids
    become ``mask_id``; the order is the local permutation with ``perm_size = T // 2`` (T even).
    Special tokens are plain context here (HF lets them also see the targets before them).
    Returns ``input_ids`` (masked), ``perm_mask (T, T)``, ``content_mask``,
    ``target_mapping`` = the ``(T, T)`` identity (HF's layout) and ``labels`` (-100 where not
    predicted); with a leading B axis if ``ids`` had one.
    """
    op = "plm_collator_inputs"
    mask_id = check_id(mask_id, op=op, name="mask_id")
    rows, single = _rows(ids, op)
    B, T = rows.shape
    specials = _id_set(special_ids)
    keys = ("input_ids", "perm_mask", "content_mask", "target_mapping", "labels")
    out = {k: [] for k in keys}
    for row in rows:
        is_target = sample_plm_spans(T, rng=rng, plm_probability=plm_probability,
                                     max_span_length=max_span_length) & ~np.isin(row, specials)
        order = sample_factorization_order(T, rng=rng, perm_size=T // 2)
        perm_mask, content_mask = permutation_mask(order, is_target)
        out["input_ids"].append(np.where(is_target, mask_id, row))
        out["perm_mask"].append(perm_mask)
        out["content_mask"].append(content_mask)
        out["target_mapping"].append(np.eye(T, dtype=np.float32))
        out["labels"].append(np.where(is_target, row, -100))
    stacked = {k: np.stack(v) for k, v in out.items()}
    return {k: v[0] for k, v in stacked.items()} if single else stacked
