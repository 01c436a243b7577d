"""The losses the later families add, composed from primitives (``F`` exposes them, as PyTorch does).

ELECTRA's discriminator judges every token with a binary cross-entropy on its logits,
``binary_cross_entropy_with_logits`` (on ``logsigmoid``, finite for any logit); a distilled student
matches its teacher with ``kl_div`` (soft targets), ``cosine_similarity`` (hidden states, DistilBERT)
and ``mse_loss`` (hidden states and attention, TinyBERT). Each is composed from the engine's
primitives, so its backward comes from the chain rule. Cross-entropy, which every family uses and
Task 2.2 teaches, stays in ``functional.py`` beside its fused node.
"""
from __future__ import annotations

import numpy as np

from .errors import ConfigError, ShapeError
from .elementwise import LogSigmoid, broadcast_shape
from .function import as_tensor
from .movement import where
from .tensor import Tensor, check_axis

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(op, reduction, allowed=REDUCTIONS):
    if reduction not in allowed:
        raise ConfigError(f"{op}: reduction={reduction!r}, expected one of {allowed}")


def logsigmoid(x: Tensor) -> Tensor:
    """log σ(x), finite for any x (one node: ``elementwise.LogSigmoid``)."""
    return LogSigmoid.apply(as_tensor(x))


def binary_cross_entropy_with_logits(logits: Tensor, target, weight=None, reduction: str = "mean", *,
                                     pos_weight=None) -> Tensor:
    """−w·[pos_weight·y·log σ(x) + (1 − y)·log(1 − σ(x))] (``F.binary_cross_entropy_with_logits``),
    with log(1 − σ(x)) = log σ(−x), so the loss is finite for any logit and its gradient is exactly
    w·[(pos_weight·y + 1 − y)·σ(x) − pos_weight·y] (w·(σ(x) − y) without pos_weight).
    ``weight`` (broadcastable, constant) scales each element; ``pos_weight`` (broadcastable, e.g.
    one per class on the last axis) scales the positive term; ``mean`` divides by the element count."""
    check_reduction("binary_cross_entropy_with_logits", reduction)
    x = as_tensor(logits)
    y = np.asarray(target.data if isinstance(target, Tensor) else target, dtype=x.dtype)
    if y.shape != x.shape:
        raise ShapeError(f"binary_cross_entropy_with_logits: logits {x.shape} and targets {y.shape} differ")
    positive = y if pos_weight is None else y * _constant("binary_cross_entropy_with_logits", "pos_weight",
                                                          pos_weight, x)
    loss = -(logsigmoid(x) * positive + logsigmoid(-x) * (1.0 - y))
    if weight is not None:
        loss = loss * _constant("binary_cross_entropy_with_logits", "weight", weight, x)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _constant(op: str, name: str, value, x: Tensor) -> np.ndarray:
    """A constant array in x's dtype that broadcasts to x's shape."""
    value = np.asarray(value.data if isinstance(value, Tensor) else value, dtype=x.dtype)
    try:
        np.broadcast_shapes(value.shape, x.shape)
    except ValueError:
        raise ShapeError(f"{op}: {name} of shape {value.shape} does not broadcast to the input {x.shape}") from None
    return value


def kl_div(input: Tensor, target, reduction: str = "batchmean", log_target: bool = False) -> Tensor:
    """KL(target ‖ model) with ``input`` = model log-probabilities (PyTorch's convention):
    Σ target·(log target − input); terms with target = 0 are 0. ``batchmean`` divides the sum by
    the batch size (input.shape[0]) — the mathematically correct KL per example."""
    check_reduction("kl_div", reduction, REDUCTIONS + ("batchmean",))
    input = as_tensor(input)
    target = as_tensor(target, (input,))
    if input.shape != target.shape:
        raise ShapeError(f"kl_div: input {input.shape} and target {target.shape} differ")
    if log_target:
        pointwise = target.exp() * (target - input)
    else:
        positive = target.data > 0
        safe = where(positive, target, 1.0)  # log(1) = 0 where target = 0
        pointwise = target * (safe.log() - input)
    if reduction == "none":
        return pointwise
    if reduction == "sum":
        return pointwise.sum()
    if reduction == "mean":
        return pointwise.mean()
    if input.ndim == 0:  # no batch axis: PyTorch's batchmean is then the sum
        return pointwise.sum()
    return pointwise.sum() / input.shape[0]


def cosine_similarity(x1: Tensor, x2: Tensor, axis: int = -1, eps: float = 1e-8) -> Tensor:
    """Σ (x1/‖x1‖)·(x2/‖x2‖) along ``axis`` of the broadcast inputs, each norm clamped below at ε
    (PyTorch's ``F.cosine_similarity``: broadcast first, so a (1,) input against a (4,) one is
    the 4-vector of its value; ``axis`` counts in the broadcast shape). The clamp passes the
    gradient straight through, as PyTorch's in-place clamp under no_grad does."""
    x1, x2 = as_tensor(x1), as_tensor(x2, (x1,))
    shape = broadcast_shape("cosine_similarity", x1.shape, x2.shape)
    if len(shape) == 0:
        raise ShapeError("cosine_similarity: the inputs are scalars; expected vectors along an axis")
    axis = check_axis("cosine_similarity", axis, shape)
    zeros = np.zeros(shape, dtype=np.result_type(x1.dtype, x2.dtype))
    x1, x2 = x1 + zeros, x2 + zeros  # broadcast (the gradient un-broadcasts back)

    def clamped_norm(v):
        sq = (v * v).sum(axis=axis, keepdims=True)  # (..., 1, ...)
        nonzero = sq.data > 0  # a zero vector's norm gets gradient 0, not 0·∞ = NaN (as PyTorch)
        n = where(nonzero, where(nonzero, sq, 1.0).sqrt(), 0.0)
        return n + Tensor(np.maximum(n.data, eps) - n.data)  # max(n, ε) with n's gradient

    return ((x1 / clamped_norm(x1)) * (x2 / clamped_norm(x2))).sum(axis=axis)


def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """Mean (or sum) of squared differences."""
    check_reduction("mse_loss", reduction)
    input = as_tensor(input)
    target = as_tensor(target, (input,))
    if input.shape != target.shape:
        raise ShapeError(f"mse_loss: input {input.shape} and target {target.shape} differ")
    diff = input - target
    sq = diff * diff
    if reduction == "none":
        return sq
    return sq.sum() if reduction == "sum" else sq.mean()
