"""Gradient clipping by global norm (Pascanu et al. 2013; ``torch.nn.utils.clip_grad_norm_``).

All gradients are treated as one long vector g. Its L2 norm ‖g‖ = √(Σ over every element of
every gradient of gᵢ²) is the *total norm*. If ‖g‖ > max_norm, every gradient is multiplied by
max_norm / (‖g‖ + 10⁻⁶), so the clipped vector has norm max_norm (up to that 10⁻⁶) and keeps its
direction. BERT, GPT-2 and RoBERTa all clip at max_norm = 1.0.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError, TrainingError
from ..tensor import Tensor


def clip_grad_norm_(parameters, max_norm: float, error_if_nonfinite: bool = False) -> float:
    """Scale the gradients of ``parameters`` (a tensor or a list of them) so that their global L2
    norm is at most ``max_norm``; return the norm *before* clipping (log it: spikes show trouble).

    Parameters without a gradient are skipped. A non-finite norm raises ``TrainingError`` when
    ``error_if_nonfinite``; otherwise the gradients are scaled as PyTorch does (they become NaN).
    """
    if max_norm < 0:
        raise ConfigError(f"clip_grad_norm_: max_norm={max_norm} must be >= 0")
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p for p in params if p.grad is not None]
    if not grads:
        return 0.0
    # sum of squares in float64: millions of float32 squares would lose digits
    total = math.sqrt(sum(float(np.sum(np.square(p.grad, dtype=np.float64))) for p in grads))
    if error_if_nonfinite and not math.isfinite(total):
        raise TrainingError(f"clip_grad_norm_: the total gradient norm is {total}")
    coef = max_norm / (total + 1e-6)
    if coef < 1.0 or not math.isfinite(total):
        for p in grads:
            p.grad = p.grad * coef  # a new array: never scale a gradient array that may be shared
    return total
