"""Predicting chosen positions with an XLNet, one at a time in a chosen factorisation order, and
the multi-token-name probe ("new york") that compares the orders.

Yang et al. 2019, §2.6 (comparison with BERT): given the context, BERT predicts the masked tokens
*independently*,

    BERT:   log p(new | ctx) + log p(york | ctx)

while XLNet factorises the joint probability along its order,

    XLNet:  log p(new | ctx) + log p(york | new, ctx)          (order: new, then york)

so the second token of a name can depend on the first. With the synthetic corpus's names
("new york", "new delhi", "los angeles", ...) an independent guess may well say "new angeles";
a factorised one should not. :func:`predict_in_order` runs the trained model in either mode
(``order="independent"`` hides every target from every other — BERT's assumption inside XLNet),
and :func:`score_name_predictions` measures the result on probes any model can be run on.

Letters: B batch (N probes), T positions, V vocabulary.
"""
from __future__ import annotations

import numpy as np

from autograd import no_grad
from autograd.errors import ConfigError, ShapeError

__all__ = ["ORDERS", "prediction_masks", "predict_in_order", "name_probes", "score_name_predictions",
           "joint_name_accuracy"]

ORDERS = ("left_to_right", "right_to_left", "independent")


def _target_ranks(is_target: np.ndarray, order: str) -> np.ndarray:
    """(B, T) step of each target in the chosen order (0, 1, ...); −1 at context positions."""
    ranks = np.cumsum(is_target, axis=1) - 1                              # left to right
    if order == "right_to_left":
        ranks = is_target.sum(axis=1, keepdims=True) - 1 - ranks
    return np.where(is_target, ranks, -1)


def prediction_masks(is_target, order: str = "left_to_right") -> np.ndarray:
    """XLNet's ``perm_mask`` (B, T, T), True = may NOT attend, for predicting ``is_target`` (B, T):
    every position sees the context; no context position sees a target; a target sees the targets
    before it in ``order`` (``"left_to_right"``, ``"right_to_left"``) or none (``"independent"``),
    and never itself."""
    if order not in ORDERS:
        raise ConfigError(f"prediction_masks: order={order!r}: expected one of {ORDERS}")
    is_target = np.asarray(is_target)
    if is_target.ndim != 2 or is_target.dtype != bool:
        raise ShapeError(f"prediction_masks: is_target has shape {is_target.shape} and dtype "
                         f"{is_target.dtype}: expected (B, T) bool")
    hidden = np.broadcast_to(is_target[:, None, :], is_target.shape + is_target.shape[-1:])  # (B, T, T)
    if order == "independent":
        return hidden.copy()
    rank = _target_ranks(is_target, order)                                # (B, T)
    earlier = (rank[:, None, :] < rank[:, :, None]) & is_target[:, :, None]  # target i sees j if j first
    return hidden & ~earlier


def predict_in_order(model, input_ids, is_target, *, order: str = "left_to_right", fill_id: int = 0,
                     attention_mask=None) -> np.ndarray:
    """Greedy prediction of the ``is_target`` positions of ``input_ids`` (B, T); returns a copy of
    the ids with the targets replaced by the predictions.

    ``"independent"``: one pass, every target predicted from the context alone. Otherwise one pass
    per step of ``order``: the k-th target of each row is predicted from the context and the
    predictions already made (written into the input, where the content stream reads them).
    Targets start as ``fill_id``; the masks hide them, so its value never matters.
    """
    ids = np.array(getattr(input_ids, "data", input_ids), dtype=np.int64)
    is_target = np.asarray(is_target, dtype=bool)
    if ids.ndim != 2 or is_target.shape != ids.shape:
        raise ShapeError(f"predict_in_order: input_ids {ids.shape} and is_target {is_target.shape}: "
                         "expected the same (B, T) shape")
    perm_mask = prediction_masks(is_target, order)
    x = np.where(is_target, fill_id, ids)
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            if order == "independent":
                logits = model(x, perm_mask, attention_mask=attention_mask)["logits"].data  # (B, T, V)
                return np.where(is_target, logits.argmax(-1), x)
            rank = _target_ranks(is_target, order)
            B, T = ids.shape
            for k in range(int(is_target.sum(axis=1).max(initial=0))):
                step = rank == k                                          # (B, T) ≤ one per row
                mapping = step[:, None, :].astype(np.float32)             # (B, 1, T) one query row
                logits = model(x, perm_mask, mapping, attention_mask=attention_mask)["logits"].data
                rows = np.flatnonzero(step.any(axis=1))
                x[rows, step[rows].argmax(axis=1)] = logits[rows, 0].argmax(-1)
            return x
    finally:
        model.train(was_training)


def _name_ids(tokenizer, names) -> list[tuple[int, ...]]:
    if names is None:
        from minilm.data import multi_token_names
        names = multi_token_names()
    out = [tuple(int(i) for i in tokenizer.encode(n)) for n in names]
    return [n for n in out if len(n) >= 2]


def name_probes(stream, tokenizer, *, block_size: int, names=None, max_probes: int | None = None) -> dict:
    """Windows of the token ``stream`` around each occurrence of a multi-token name, the name's
    tokens the targets: ``{"input_ids" (N, T), "is_target" (N, T), "names": list of id tuples}``.

    The names (default: the synthetic corpus's, ``minilm.data.multi_token_names()``) are encoded
    with ``tokenizer``; those of one token are skipped. Each window of ``block_size`` tokens puts
    the name near its middle. Probes come in stream order, the first ``max_probes`` kept.
    """
    stream = np.asarray(stream, dtype=np.int64)
    if stream.ndim != 1 or len(stream) < block_size:
        raise ShapeError(f"name_probes: a stream of shape {stream.shape} is shorter than block_size={block_size}")
    name_ids = _name_ids(tokenizer, names)
    found = []                                                            # (start, length)
    for name in name_ids:
        n = len(name)
        windows = np.lib.stride_tricks.sliding_window_view(stream, n)     # (len - n + 1, n)
        found += [(int(s), n) for s in np.flatnonzero((windows == np.array(name)).all(axis=1))]
    found.sort()
    if max_probes is not None:
        found = found[:max_probes]
    ids = np.zeros((len(found), block_size), dtype=np.int64)
    is_target = np.zeros((len(found), block_size), dtype=bool)
    for r, (s, n) in enumerate(found):
        start = int(np.clip(s - (block_size - n) // 2, 0, len(stream) - block_size))
        ids[r] = stream[start:start + block_size]
        is_target[r, s - start:s - start + n] = True
    return {"input_ids": ids, "is_target": is_target, "names": name_ids}


def score_name_predictions(predicted, probes: dict) -> dict:
    """How well ``predicted`` (N, T) ids fill the probes' names: ``joint_accuracy`` (every token of
    the name right), ``token_accuracy`` (per token), ``coherent_rate`` (the predicted tokens spell
    SOME real name — "new york" for "new delhi" is wrong but coherent, "new angeles" is not), ``n``."""
    predicted = np.asarray(predicted)
    truth, is_target = probes["input_ids"], probes["is_target"]
    if predicted.shape != truth.shape:
        raise ShapeError(f"score_name_predictions: predicted {predicted.shape}, probes {truth.shape}")
    N = len(truth)
    if N == 0:
        return {"joint_accuracy": 0.0, "token_accuracy": 0.0, "coherent_rate": 0.0, "n": 0}
    known = set(probes["names"])
    joint = coherent = 0
    for r in range(N):
        span = is_target[r]
        joint += bool((predicted[r, span] == truth[r, span]).all())
        coherent += tuple(predicted[r, span].tolist()) in known
    tokens = float((predicted[is_target] == truth[is_target]).mean())
    return {"joint_accuracy": joint / N, "token_accuracy": tokens, "coherent_rate": coherent / N, "n": N}


def joint_name_accuracy(model, tokenizer, stream, *, block_size: int | None = None,
                        order: str = "left_to_right", names=None, max_probes: int | None = 256) -> dict:
    """The multi-token-name probe for an XLNet: every name in ``stream`` masked as a whole and
    predicted in ``order`` (``"independent"``: BERT's assumption). Returns
    :func:`score_name_predictions`'s dict. ``block_size`` defaults to the model's maximum length."""
    T = block_size or model.config.max_position_embeddings
    probes = name_probes(stream, tokenizer, block_size=T, names=names, max_probes=max_probes)
    if len(probes["input_ids"]) == 0:
        return score_name_predictions(probes["input_ids"], probes)
    predicted = predict_in_order(model, probes["input_ids"], probes["is_target"], order=order)
    return score_name_predictions(predicted, probes)
