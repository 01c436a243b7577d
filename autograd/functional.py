"""Operations composed from the primitives: their backward comes for free from the chain rule.

PyTorch's names and semantics (``torch.nn.functional``) wherever PyTorch has the op. Shapes:
N rows, V classes (vocabulary), C features.

The hot ops (softmax, log-softmax, cross-entropy, layer norm, GELU, embedding, and attention's
``scaled_masked_softmax``) run as single fused nodes (``fused.py``, on ``kernels/``: numba or NumPy,
see ``set_backend``). Their composed versions stay here, named ``_softmax_composed`` etc.: the same
maths from primitives, the twin every fused op is tested against (``tests/engine/test_fused_ops.py``),
and the fallback for inputs the kernels do not take (dtypes other than float32/float64, parameters
of unusual shapes). Layer norm has no composed version: it is Task 2.5, and the library calls the
slot rather than carry a second copy of the answer (STYLE.md, habit 11). Its fused node runs the
numba kernel or, on the NumPy backend and for every other dtype, the slot itself.

``softmax`` and ``log_softmax`` (with their composed twins) are parallel on purpose: each picks its
fused node or its twin itself, so ``F.softmax`` reaches the kernel in 3 calls
(docs/architecture.md counts them) and a reader sees the rule on the function's own page.

The losses the later families add (ELECTRA's binary cross-entropy on logits, distillation's KL,
cosine and MSE) are in ``losses.py``; ``F`` carries them under PyTorch's names.
"""
from __future__ import annotations

import math

import numpy as np

from . import fused
from .errors import ConfigError, ShapeError
from .function import as_tensor
from .losses import (binary_cross_entropy_with_logits, check_reduction, cosine_similarity, kl_div, logsigmoid,
                     mse_loss)
from .movement import where
from .tensor import Tensor

__all__ = [  # F's namespace, PyTorch's names; the later families' losses come from losses.py
    "relu", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "nll_loss", "check_targets", "gelu",
    "layer_norm", "dropout", "embedding", "check_ids", "scaled_masked_softmax",
    "logsigmoid", "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity", "mse_loss",
]


def relu(x: Tensor) -> Tensor:
    return as_tensor(x).relu()


def sigmoid(x: Tensor) -> Tensor:
    return as_tensor(x).sigmoid()


def tanh(x: Tensor) -> Tensor:
    return as_tensor(x).tanh()


_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _fusable(x: Tensor, *others) -> bool:
    """The fused kernels take float32/float64 inputs whose other tensors share that dtype."""
    return x.dtype in _FUSED_DTYPES and all(o is None or as_tensor(o).dtype == x.dtype for o in others)


def _check_axis(op: str, x: Tensor, axis) -> bool:
    """True for a single int axis (the fused kernels' case); a tuple of axes goes the composed way."""
    if not isinstance(axis, (int, np.integer)):
        return False
    if not -x.ndim <= axis < x.ndim:
        raise ShapeError(f"{op}: axis {axis} is out of range for a tensor of shape {x.shape}")
    return True


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """softmax(x)ᵢ = exp(xᵢ − m) / Σⱼ exp(xⱼ − m), m = max(x): subtracting m changes nothing
    mathematically and keeps exp() from overflowing. One fused node (``fused.Softmax``)."""
    x = as_tensor(x)
    if not _check_axis("softmax", x, axis) or not _fusable(x):
        return _softmax_composed(x, axis)
    return fused.Softmax.apply(x, axis=axis)


def _softmax_composed(x: Tensor, axis: int = -1) -> Tensor:
    """The composed twin of :func:`softmax`."""
    x = as_tensor(x)
    shifted = x - Tensor(x.data.max(axis=axis, keepdims=True))  # a constant: no gradient needed
    e = shifted.exp()
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """log softmax(x)ᵢ = xᵢ − m − log Σⱼ exp(xⱼ − m). One fused node (``fused.LogSoftmax``)."""
    x = as_tensor(x)
    if not _check_axis("log_softmax", x, axis) or not _fusable(x):
        return _log_softmax_composed(x, axis)
    return fused.LogSoftmax.apply(x, axis=axis)


def _log_softmax_composed(x: Tensor, axis: int = -1) -> Tensor:
    """The composed twin of :func:`log_softmax`."""
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
                  reduction: str = "mean", *, weight=None) -> Tensor:
    """Mean negative log-likelihood of ``target`` under softmax(``logits``) (``F.cross_entropy``).

    logits (..., V); the class axis is the **last** (PyTorch's is axis 1 for inputs of more than
    two dimensions). ``target`` is either (...) integer ids or, with logits' shape and a floating
    dtype, class probabilities (soft targets). ``weight`` (V,) optionally scales each class.

    Integer targets: positions whose target equals ``ignore_index`` add nothing and are not
    counted. Position n adds w[tₙ]·(−log p[tₙ]); "mean" divides the sum by Σₙ w[tₙ] over the
    counted positions (the count itself when ``weight`` is None); if that is 0 (every target
    ignored) the mean is 0, not NaN. ``label_smoothing`` ε mixes the one-hot target with the
    uniform distribution as PyTorch does: loss = (1 − ε)·NLL + (ε/V)·Σᵥ w[v]·(−log p_v).

    Probability targets q: position n adds −Σᵥ w[v]·q'ₙᵥ·log pₙᵥ with q' = (1 − ε)·q + ε/V;
    "mean" divides by the number of positions; ``ignore_index`` does not apply.

    The plain case (integer targets, no weight) is one fused node (``fused.SoftmaxCrossEntropy``)
    over the (N, V) view of the logits; the others are composed on the fused log-softmax.
    """
    logits, target, valid, weight = _cross_entropy_inputs(logits, target, ignore_index, label_smoothing,
                                                          reduction, weight)
    if weight is not None or valid is None:
        return _cross_entropy_from_logp(log_softmax(logits, axis=-1), target, valid, weight,
                                        label_smoothing, reduction)
    if not _fusable(logits):
        return _cross_entropy_composed(logits, target, ignore_index, label_smoothing, reduction)
    V = logits.shape[-1]
    flat_target = target.reshape(-1).astype(np.int64)  # (N,)
    loss = fused.SoftmaxCrossEntropy.apply(
        logits.reshape(flat_target.size, V), target=flat_target,
        ignore_index=-1 if ignore_index is None else int(ignore_index),  # -1 never matches a checked id
        label_smoothing=float(label_smoothing), reduction=reduction)
    return loss.reshape(target.shape) if reduction == "none" else loss


def _cross_entropy_inputs(logits, target, ignore_index, label_smoothing, reduction, weight=None):
    """Check the arguments of cross_entropy; returns (logits Tensor, target array, valid mask or
    None for probability targets, weight array or None)."""
    check_reduction("cross_entropy", reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ConfigError(f"cross_entropy: label_smoothing={label_smoothing} is outside [0, 1]")
    logits = as_tensor(logits)
    target = np.asarray(target.data if isinstance(target, Tensor) else target)
    if logits.ndim == 0:
        raise ShapeError("cross_entropy: logits must have a class axis (..., V), got a scalar")
    weight = _class_weight("cross_entropy", weight, logits)
    if np.issubdtype(target.dtype, np.floating) and target.shape == logits.shape:
        return logits, target.astype(logits.dtype, copy=False), None, weight  # probabilities
    if logits.shape[:-1] != target.shape:
        raise ShapeError(f"cross_entropy: logits {logits.shape} need targets of shape {logits.shape[:-1]} "
                         f"(class ids) or {logits.shape} (probabilities, floating), got {target.shape} "
                         f"{target.dtype}")
    valid = check_targets("cross_entropy", target, logits.shape[-1], ignore_index)
    return logits, target, valid, weight


def _class_weight(op: str, weight, x: Tensor):
    """``weight``: None, or a constant (V,) array in x's dtype (V = x's last axis)."""
    if weight is None:
        return None
    weight = np.asarray(weight.data if isinstance(weight, Tensor) else weight)
    if weight.shape != x.shape[-1:]:
        raise ShapeError(f"{op}: weight must hold one number per class, shape {x.shape[-1:]}, got {weight.shape}")
    return weight.astype(x.dtype, copy=False)


def _weighted_mean(op_total: Tensor, denominator: float) -> Tensor:
    """total / denominator, 0 when the denominator is 0 (every target ignored): never NaN."""
    return op_total / denominator if denominator != 0 else op_total * 0.0


def _cross_entropy_from_logp(logp: Tensor, target, valid, weight, label_smoothing: float, reduction: str):
    """Cross-entropy from log-probabilities (..., V): class ids (``valid`` their mask) or, with
    ``valid`` None, probability targets; ``weight`` None or (V,). PyTorch's formulas (see above)."""
    V = logp.shape[-1]
    eps = float(label_smoothing)
    if valid is None:  # probability targets
        q = target * (1.0 - eps) + eps / V if eps else target
        if weight is not None:
            q = q * weight
        per_position = -(logp * q.astype(logp.dtype, copy=False)).sum(axis=-1)  # (...)
        if reduction == "none":
            return per_position
        total = per_position.sum()
        return total if reduction == "sum" else _weighted_mean(total, per_position.size)
    safe = np.where(valid, target, 0)  # never index with ignore_index
    w_target = valid.astype(logp.dtype) if weight is None else np.where(valid, weight[safe], 0).astype(logp.dtype)
    per_position = -logp.gather(-1, safe[..., None])[..., 0] * w_target  # (...)
    if eps > 0:
        smooth = -(logp.sum(axis=-1) if weight is None else (logp * weight).sum(axis=-1))
        per_position = per_position * (1.0 - eps) + smooth * (valid.astype(logp.dtype) * (eps / V))
    if reduction == "none":
        return per_position
    total = per_position.sum()
    return total if reduction == "sum" else _weighted_mean(total, float(w_target.sum()))


def _cross_entropy_composed(logits: Tensor, target, ignore_index: int = -100, label_smoothing: float = 0.0,
                            reduction: str = "mean", *, weight=None) -> Tensor:
    """The composed twin of :func:`cross_entropy` (log_softmax, gather, mean over valid positions)."""
    logits, target, valid, weight = _cross_entropy_inputs(logits, target, ignore_index, label_smoothing,
                                                          reduction, weight)
    logp = _log_softmax_composed(logits, axis=-1)  # (..., V)
    return _cross_entropy_from_logp(logp, target, valid, weight, label_smoothing, reduction)


def nll_loss(logp: Tensor, target, ignore_index: int = -100, reduction: str = "mean", *, weight=None) -> Tensor:
    """Negative log-likelihood of integer ``target`` (...) given log-probabilities (..., V)
    (``F.nll_loss``, class axis last). Position n adds −w[tₙ]·logp[tₙ]; "mean" divides by
    Σₙ w[tₙ] over the positions not ignored (0 if there are none)."""
    check_reduction("nll_loss", reduction)
    logp = as_tensor(logp)
    target = np.asarray(target.data if isinstance(target, Tensor) else target)
    if logp.ndim == 0 or logp.shape[:-1] != target.shape:
        raise ShapeError(f"nll_loss: log-probabilities {logp.shape} need targets of shape {logp.shape[:-1]}, "
                         f"got {target.shape}")
    weight = _class_weight("nll_loss", weight, logp)
    valid = check_targets("nll_loss", target, logp.shape[-1], ignore_index)
    return _cross_entropy_from_logp(logp, target, valid, weight, 0.0, reduction)


def gelu(x: Tensor, approximate: str = "tanh") -> Tensor:
    """GELU. ``"tanh"`` (GPT-2, BERT): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)));
    ``"none"``: the exact x·Φ(x) = 0.5·x·(1 + erf(x/√2)). One fused node (``fused.GELU``)."""
    x = as_tensor(x)
    if approximate not in ("tanh", "none"):
        raise ConfigError(f"gelu: approximate={approximate!r}, expected 'tanh' or 'none'")
    if approximate == "tanh" and not _fusable(x):
        return _gelu_composed(x, approximate)
    return fused.GELU.apply(x, approximate=approximate)


def _gelu_composed(x: Tensor, approximate: str = "tanh") -> Tensor:
    """The composed twin of :func:`gelu`. The primitives have no erf, so the exact form has no
    composed twin: it is always the fused node (tested against ``math.erf``)."""
    x = as_tensor(x)
    if approximate == "none":
        return fused.GELU.apply(x, approximate="none")
    if approximate != "tanh":
        raise ConfigError(f"gelu: approximate={approximate!r}, expected 'tanh' or 'none'")
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (inner.tanh() + 1.0)


def layer_norm(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5, *,
               normalized_shape=None) -> Tensor:
    """(x − mean) / √(var + ε) · weight + bias (biased variance), over the last axis — or, with
    ``normalized_shape`` (an int or a tuple, PyTorch's ``F.layer_norm(x, normalized_shape, ...)``),
    over the trailing axes that have that shape; weight and bias then have that shape too.

    One fused node (``fused.LayerNorm`` on the (..., prod(normalized_shape)) view): the numba
    kernel, or Task 2.5's slot (``solutions/task02_kernels/layer_norm.py``) on the NumPy backend and
    for the dtypes the kernel does not take. A weight or bias of another shape than (C,) (one that
    broadcasts to x) scales and shifts the node's x̂ with the primitives, which broadcast it and
    un-broadcast its gradient."""
    x = as_tensor(x)
    if normalized_shape is not None:
        return _layer_norm_trailing(x, weight, bias, eps, normalized_shape)
    if x.ndim == 0:
        raise ShapeError("layer_norm: the input must have a feature axis (..., C), got a scalar")
    C = x.shape[-1]
    weight, bias = (None if p is None else as_tensor(p, (x,)) for p in (weight, bias))
    ones, zeros = Tensor(np.ones(C, dtype=x.dtype)), Tensor(np.zeros(C, dtype=x.dtype))
    if all(p is None or p.shape == (C,) for p in (weight, bias)):
        return fused.LayerNorm.apply(x, ones if weight is None else weight, zeros if bias is None else bias,
                                     eps=float(eps))
    out = fused.LayerNorm.apply(x, ones, zeros, eps=float(eps))  # x̂ (..., C)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _layer_norm_trailing(x: Tensor, weight, bias, eps, normalized_shape) -> Tensor:
    """Layer norm over the trailing axes ``normalized_shape``: flatten them into one axis, normalise
    that axis, unflatten (reshape is differentiable, so weight and bias get their gradients)."""
    shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else \
        tuple(int(n) for n in normalized_shape)
    k = len(shape)
    if k == 0 or x.ndim < k or x.shape[x.ndim - k:] != shape:
        raise ShapeError(f"layer_norm: normalized_shape={shape} must be the trailing axes of the input, "
                         f"got shape {x.shape}")
    params = []
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None:
            p = as_tensor(p, (x,))
            if p.shape != shape:
                raise ShapeError(f"layer_norm: {name} of shape {p.shape}, expected normalized_shape {shape}")
            p = p.reshape(-1)  # (prod(shape),)
        params.append(p)
    lead = x.shape[:x.ndim - k]
    flat = x.reshape(lead + (math.prod(shape),))  # (..., prod(shape))
    return layer_norm(flat, params[0], params[1], eps).reshape(x.shape)


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
    """Rows of ``weight`` (V, C) picked by integer ``ids`` (...) → (..., C). One fused node
    (``fused.Embedding``) whose backward scatter-adds (a repeated id sums its gradients)."""
    weight = as_tensor(weight)
    ids = check_ids("embedding", ids, weight.shape[0])
    if weight.ndim != 2:
        return _embedding_composed(ids, weight)
    return fused.Embedding.apply(weight, ids=ids)


def _embedding_composed(ids, weight: Tensor) -> Tensor:
    """The composed twin of :func:`embedding` (indexing; its backward is np.add.at)."""
    ids = check_ids("embedding", ids, weight.shape[0])
    return weight[ids]


def scaled_masked_softmax(scores: Tensor, mask=None, scale: float = 1.0) -> Tensor:
    """Attention weights: softmax over the last axis of ``scale · scores``, keeping only the keys
    that ``mask`` allows (Vaswani et al. 2017, §3.2.1; scale = 1/√d_head).

    scores (..., Tq, Tk), usually (B, H, Tq, Tk). ``mask``: boolean, broadcastable to scores,
    **True = may attend** (keep), False = masked out — e.g. ``causal_mask(T)`` (T, T) or
    ``padding_mask(...)`` (B, 1, 1, Tk); ``None`` allows every key. Masked entries get weight
    exactly 0; a row with no allowed key is all zeros (not NaN, not uniform) and passes no gradient.
    One fused node (``fused.ScaledMaskedSoftmax``; the numba kernel is Task 2.4).
    """
    scores = as_tensor(scores)
    mask = _check_attention_mask(scores, mask)
    if not _fusable(scores):
        return _scaled_masked_softmax_composed(scores, mask, scale)
    return fused.ScaledMaskedSoftmax.apply(scores, mask=mask, scale=float(scale))


def _check_attention_mask(scores: Tensor, mask):
    if scores.ndim == 0:
        raise ShapeError("scaled_masked_softmax: scores must have at least one axis (the keys), got a scalar")
    if mask is None:
        return None
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    if mask.dtype != bool:
        raise ShapeError(f"scaled_masked_softmax: mask must be boolean (True = may attend), "
                         f"got dtype {mask.dtype}")
    try:
        np.broadcast_to(mask, scores.shape)
    except ValueError:
        raise ShapeError(f"scaled_masked_softmax: mask {mask.shape} does not broadcast to "
                         f"scores {scores.shape}") from None
    return mask


def _scaled_masked_softmax_composed(scores: Tensor, mask=None, scale: float = 1.0) -> Tensor:
    """The composed twin of :func:`scaled_masked_softmax`: fill masked scores with the most
    negative finite number (so the max of a fully masked row is finite, not −inf − (−inf) = NaN),
    softmax, then multiply by the mask (a fully masked row came out uniform: this zeroes it)."""
    scores = as_tensor(scores)
    mask = _check_attention_mask(scores, mask)
    z = scores * float(scale)
    if mask is None:
        return _softmax_composed(z, axis=-1)
    z = where(mask, z, float(np.finfo(z.dtype).min) if np.issubdtype(z.dtype, np.floating) else -1e30)
    return _softmax_composed(z, axis=-1) * mask.astype(z.dtype)
