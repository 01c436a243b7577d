"""The gradient-noise scale: the batch size past which a larger batch stops buying fewer steps.

McCandlish, Kaplan, Amodei et al. 2018, "An Empirical Model of Large-Batch Training", §2.2 and
Appendix A.1. Let G be the true gradient of the loss and Σ the covariance of one example's gradient.
A batch of B examples gives an estimate G_B with

    E |G_B|² = |G|² + tr(Σ) / B                                                  (A.1)

and the "simple" noise scale is

    B_simple = tr(Σ) / |G|²,

the batch at which the noise in G_B is as large as G itself. Far below it, doubling the batch
nearly halves the steps needed (the same examples read, in fewer steps); far above it, the extra
examples are wasted. (The paper's B_noise weights Σ by the Hessian; B_simple is what it measures.)

Two batch sizes give two equations (A.1) in the two unknowns, so with the mean squared norm of
gradients at a small batch b and at a big batch B:

    |G|²  ≈ (B · E|G_B|² − b · E|G_b|²) / (B − b)
    tr Σ  ≈ (E|G_b|² − E|G_B|²) / (1/b − 1/B)

Both are unbiased; their ratio is not, and it is noisy, so the estimate is a measurement of the
order of magnitude (the paper averages over many steps for the same reason).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = ["squared_grad_norm", "noise_scale"]


def squared_grad_norm(model, loss: Callable, batch) -> float:
    """|∇ loss(model, batch)|² summed over every parameter of ``model`` (the gradients are cleared
    before and after, so the model's training state is untouched)."""
    model.zero_grad()
    loss(model, batch).backward()
    total = sum(float(np.sum(p.grad.astype(np.float64) ** 2)) for p in model.parameters() if p.grad is not None)
    model.zero_grad()
    return total


def noise_scale(model, loss: Callable, small_batches: Sequence, big_batches: Sequence, small: int, big: int) -> dict:
    """Estimate B_simple = tr(Σ)/|G|² of ``loss`` at ``model``'s current weights.

    ``loss(model, batch)`` -> a scalar Tensor, the mean loss over the batch's examples;
    ``small_batches`` are batches of ``small`` examples and ``big_batches`` of ``big`` examples, drawn
    from the same distribution (more of each, a steadier estimate). Returns ``{"noise_scale": B_simple,
    "grad_sq": |G|², "trace_sigma": tr Σ}``, B_simple in examples; inf where the estimated |G|² is not
    positive (the gradient is lost in the noise at these batch sizes)."""
    if not 0 < small < big:
        raise ValueError(f"noise_scale: expected 0 < small < big batch sizes, got small={small}, big={big}")
    if not small_batches or not big_batches:
        raise ValueError("noise_scale: needs at least one small and one big batch")
    small_sq = float(np.mean([squared_grad_norm(model, loss, b) for b in small_batches]))   # E|G_b|²
    big_sq = float(np.mean([squared_grad_norm(model, loss, b) for b in big_batches]))       # E|G_B|²
    grad_sq = (big * big_sq - small * small_sq) / (big - small)
    trace_sigma = (small_sq - big_sq) / (1 / small - 1 / big)
    scale = trace_sigma / grad_sq if grad_sq > 0 else float("inf")
    return {"noise_scale": scale, "grad_sq": grad_sq, "trace_sigma": trace_sigma}
