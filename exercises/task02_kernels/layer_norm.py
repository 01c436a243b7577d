"""Task 2.5 (part 1): layer normalisation over the last axis, forward and backward.

Layer norm (Ba et al. 2016) normalises each feature vector x ∈ ℝᶜ (one row = the last axis) to zero
mean and unit variance, then applies a learned per-feature scale γ (``weight``) and shift β (``bias``):

    μ = (1/C) Σⱼ xⱼ          σ² = (1/C) Σⱼ (xⱼ − μ)²      (biased: divide by C, not C − 1)
    r = 1 / √(σ² + ε)        x̂ⱼ = (xⱼ − μ)·r              (ε inside the square root; 1e-5 in GPT-2/BERT)
    yⱼ = γⱼ x̂ⱼ + βⱼ

Backward, for one row with upstream gradient gⱼ = dL/dyⱼ. The parameters are shared by every row,
so their gradients are sums over all rows (every leading axis):

    dL/dβ = Σ_rows g            dL/dγ = Σ_rows g ⊙ x̂

For the input, write ĝ = g ⊙ γ (the gradient reaching x̂). Because μ and σ depend on every xⱼ,
the gradient is not just ĝ·r: differentiating through μ and r gives

    dL/dxⱼ = r · ( ĝⱼ − meanₖ(ĝₖ) − x̂ⱼ · meanₖ(ĝₖ x̂ₖ) )

(the two subtracted terms remove the components of ĝ along the directions that normalisation
projects out: shifting x, and scaling x). Shapes: x (..., C); weight, bias, dweight, dbias (C,);
mean, rstd (..., 1) (keepdims, so they broadcast back). Keep the input's dtype.
"""
import numpy as np


def layer_norm_forward(x, weight, bias, eps=1e-5):
    """Task 2.5: returns ``(out, mean, rstd)``: out = (x − μ)·r·weight + bias over the last axis,
    with mean = μ and rstd = r = 1/√(σ² + ε) of shape (..., 1), saved for the backward.

    Tests check: out against a reference (C = 4, where the unbiased variance C/(C−1) is clearly
    wrong); mean and rstd; the ε placement (inside the root); float32 stays float32.
    """
    raise NotImplementedError("Task 2.5: layer_norm_forward")


def layer_norm_backward(grad_output, x, weight, mean, rstd):
    """Task 2.5: returns ``(dx, dweight, dbias)`` (shapes of x, (C,), (C,)).

    grad_output: dL/dout, x's shape; x, weight: the forward's inputs; mean, rstd: its saved (..., 1).
    Tests check: all three against central differences of the reference (float64, random upstream
    gradient, 3-D input so dweight/dbias must sum over every leading axis, weight ≠ 1).
    """
    raise NotImplementedError("Task 2.5: layer_norm_backward")
