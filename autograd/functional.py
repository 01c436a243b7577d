"""Operations composed from the primitives: their backward comes for free from the chain rule.

PyTorch's names and semantics (``torch.nn.functional``) wherever PyTorch has the op. Shapes:
N rows, V classes (vocabulary), C features.

The kernel-backed versions of the hot ops (softmax, log-softmax + NLL, layer norm, GELU,
embedding) live in ``kernels.py``; each is tested against the composed twin written here.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import ConfigError, ShapeError
from .function import as_tensor
from .movement import where
from .tensor import Tensor

REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(op, reduction, allowed=REDUCTIONS):
    if reduction not in allowed:
        raise ConfigError(f"{op}: reduction={reduction!r}, expected one of {allowed}")


def relu(x: Tensor) -> Tensor:
    return as_tensor(x).relu()


def sigmoid(x: Tensor) -> Tensor:
    return as_tensor(x).sigmoid()


def tanh(x: Tensor) -> Tensor:
    return as_tensor(x).tanh()


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """softmax(x)ᵢ = exp(xᵢ − m) / Σⱼ exp(xⱼ − m), m = max(x): subtracting m changes nothing
    mathematically and keeps exp() from overflowing."""
    x = as_tensor(x)
    shifted = x - Tensor(x.data.max(axis=axis, keepdims=True))  # a constant: no gradient needed
    e = shifted.exp()
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """log softmax(x)ᵢ = xᵢ − m − log Σⱼ exp(xⱼ − m)."""
    x = as_tensor(x)
    shifted = x - Tensor(x.data.max(axis=axis, keepdims=True))
    return shifted - shifted.exp().sum(axis=axis, keepdims=True).log()


def check_targets(op: str, target: np.ndarray, n_classes: int, ignore_index: int | None) -> np.ndarray:
    """Targets must be integers in [0, n_classes) (or ``ignore_index``); returns the valid mask."""
    if not np.issubdtype(target.dtype, np.integer):
        raise ShapeError(f"{op}: targets must be integer class ids, got dtype {target.dtype}")
    valid = target != ignore_index if ignore_index is not None else np.ones(target.shape, bool)
    bad = valid & ((target < 0) | (target >= n_classes))
    if bad.any():
        raise ShapeError(f"{op}: target id {target[bad].flat[0]} is outside [0, {n_classes}) "
                         f"(ignore_index={ignore_index})")
    return valid


def cross_entropy(logits: Tensor, target, ignore_index: int = -100, label_smoothing: float = 0.0,
                  reduction: str = "mean") -> Tensor:
    """Mean negative log-likelihood of ``target`` under softmax(``logits``).

    logits (..., V), target (...) integer ids. Positions whose target equals ``ignore_index`` add
    nothing and are not counted; if every target is ignored the mean is 0 (not NaN).
    ``label_smoothing`` ε mixes the one-hot target with the uniform distribution as PyTorch does:
    q = (1 − ε)·onehot + ε/V, so loss = (1 − ε)·NLL + ε·mean_v(−log p_v).
    """
    _check_reduction("cross_entropy", reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ConfigError(f"cross_entropy: label_smoothing={label_smoothing} is outside [0, 1]")
    logits = as_tensor(logits)
    target = np.asarray(target.data if isinstance(target, Tensor) else target)
    if logits.shape[:-1] != target.shape:
        raise ShapeError(f"cross_entropy: logits {logits.shape} need targets of shape {logits.shape[:-1]}, "
                         f"got {target.shape}")
    V = logits.shape[-1]
    valid = check_targets("cross_entropy", target, V, ignore_index)
    safe = np.where(valid, target, 0)  # never index with ignore_index
    logp = log_softmax(logits, axis=-1)  # (..., V)
    nll = -logp.gather(-1, safe[..., None])[..., 0]  # (...)
    if label_smoothing > 0:
        nll = nll * (1.0 - label_smoothing) + (-logp.mean(axis=-1)) * label_smoothing
    per_position = nll * valid.astype(logits.dtype)
    if reduction == "none":
        return per_position
    total = per_position.sum()
    if reduction == "sum":
        return total
    return total / max(int(valid.sum()), 1)


def nll_loss(logp: Tensor, target, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target`` given log-probabilities (..., V)."""
    _check_reduction("nll_loss", reduction)
    target = np.asarray(target)
    valid = check_targets("nll_loss", target, logp.shape[-1], ignore_index)
    nll = -logp.gather(-1, np.where(valid, target, 0)[..., None])[..., 0] * valid.astype(logp.dtype)
    if reduction == "none":
        return nll
    return nll.sum() if reduction == "sum" else nll.sum() / max(int(valid.sum()), 1)


def binary_cross_entropy_with_logits(logits: Tensor, target, weight=None, reduction: str = "mean") -> Tensor:
    """−[y·log σ(x) + (1−y)·log(1−σ(x))], computed stably as max(x, 0) − x·y + log(1 + e^−|x|).
    ``weight`` (broadcastable, constant) scales each element; ``mean`` divides by the element count."""
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    x = as_tensor(logits)
    y = np.asarray(target.data if isinstance(target, Tensor) else target, dtype=x.dtype)
    if y.shape != x.shape:
        raise ShapeError(f"binary_cross_entropy_with_logits: logits {x.shape} and targets {y.shape} differ")
    abs_x = x.relu() + (-x).relu()
    loss = x.relu() - x * y + ((-abs_x).exp() + 1.0).log()
    if weight is not None:
        loss = loss * np.asarray(weight, dtype=x.dtype)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def gelu(x: Tensor, approximate: str = "tanh") -> Tensor:
    """GELU. ``"tanh"`` (GPT-2, BERT): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)));
    ``"none"``: the exact x·Φ(x) (kernels.py, which has an erf)."""
    x = as_tensor(x)
    if approximate == "none":
        from .kernels import gelu_exact
        return gelu_exact(x)
    if approximate != "tanh":
        raise ConfigError(f"gelu: approximate={approximate!r}, expected 'tanh' or 'none'")
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (inner.tanh() + 1.0)


def layer_norm(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last axis: (x − mean) / √(var + ε) · weight + bias (biased variance)."""
    x = as_tensor(x)
    mu = x.mean(axis=-1, keepdims=True)
    centred = x - mu
    var = (centred * centred).mean(axis=-1, keepdims=True)
    out = centred / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def dropout(x: Tensor, p: float = 0.1, *, rng: np.random.Generator | None = None, training: bool = True) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1−p) (inverted dropout);
    the identity when not training or p = 0."""
    if not 0.0 <= p < 1.0:
        raise ConfigError(f"dropout: p={p} must be in [0, 1)")
    x = as_tensor(x)
    if not training or p == 0.0:
        return x
    if rng is None:
        raise ConfigError("dropout: training with p > 0 needs rng= (a numpy.random.Generator)")
    keep = (rng.random(x.shape) >= p).astype(x.dtype) / np.asarray(1.0 - p, dtype=x.dtype)
    return x * keep


def check_ids(op: str, ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """Token ids must be integers in [0, vocab_size): NumPy would silently wrap a negative id."""
    ids = np.asarray(ids.data if isinstance(ids, Tensor) else ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ShapeError(f"{op}: ids must be integers, got dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        bad = ids[(ids < 0) | (ids >= vocab_size)].flat[0]
        raise ShapeError(f"{op}: id {bad} is outside the vocabulary [0, {vocab_size})")
    return ids


def embedding(ids, weight: Tensor) -> Tensor:
    """Rows of ``weight`` (V, C) picked by integer ``ids`` (...) → (..., C)."""
    ids = check_ids("embedding", ids, weight.shape[0])
    return weight[ids]


def kl_div(input: Tensor, target, reduction: str = "batchmean", log_target: bool = False) -> Tensor:
    """KL(target ‖ model) with ``input`` = model log-probabilities (PyTorch's convention):
    Σ target·(log target − input); terms with target = 0 are 0. ``batchmean`` divides the sum by
    the batch size (input.shape[0]) — the mathematically correct KL per example."""
    _check_reduction("kl_div", reduction, REDUCTIONS + ("batchmean",))
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
    return pointwise.sum() / input.shape[0]


def cosine_similarity(x1: Tensor, x2: Tensor, axis: int = -1, eps: float = 1e-8) -> Tensor:
    """x1·x2 / (max(‖x1‖, ε)·max(‖x2‖, ε)) along ``axis``."""
    x1, x2 = as_tensor(x1), as_tensor(x2, (x1,))
    dot = (x1 * x2).sum(axis=axis)
    n1 = (x1 * x1).sum(axis=axis).sqrt()
    n2 = (x2 * x2).sum(axis=axis).sqrt()
    n1 = where(n1.data > eps, n1, eps)
    n2 = where(n2.data > eps, n2, eps)
    return dot / (n1 * n2)


def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """Mean (or sum) of squared differences."""
    _check_reduction("mse_loss", reduction)
    input = as_tensor(input)
    target = as_tensor(target, (input,))
    if input.shape != target.shape:
        raise ShapeError(f"mse_loss: input {input.shape} and target {target.shape} differ")
    diff = input - target
    sq = diff * diff
    if reduction == "none":
        return sq
    return sq.sum() if reduction == "sum" else sq.mean()
