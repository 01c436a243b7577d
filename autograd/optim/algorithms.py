"""The update rules: SGD with momentum, Adam (Kingma & Ba 2015, Algorithm 1) and AdamW
(Loshchilov & Hutter 2019, Algorithm 2), with PyTorch's semantics.

Notation: θ a parameter, g its gradient, η the learning rate (``lr``), λ the weight decay, t the
step count of this parameter (1 on the first update).

* **SGD**:   g ← g + λθ;   b ← μb + g (b = g on the first step);   θ ← θ − η·b   (b = g when μ = 0)
* **Adam**:  g ← g + λθ  (L2 regularisation: the decay goes *through* the adaptive scaling)
             m ← β₁m + (1−β₁)g;   v ← β₂v + (1−β₂)g²
             m̂ = m / (1−β₁ᵗ);     v̂ = v / (1−β₂ᵗ)          (bias correction: m, v start at 0)
             θ ← θ − η·m̂ / (√v̂ + ε)
* **AdamW**: θ ← θ − ηλθ  (decoupled decay: every weight shrinks by the same factor 1 − ηλ),
             then the Adam step with λ = 0.

Why AdamW: with Adam's L2 term, a weight with large gradients has a large v and so gets *less*
decay; decoupling makes the decay independent of the gradient scale, which is what the
Transformer pre-training recipes (BERT, GPT-2, RoBERTa, ...) use.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from .optimizer import Optimizer


def _check_range(op: str, name: str, value, low: float, high: float = math.inf, high_open=False):
    ok = low <= value < high if high_open else low <= value <= high
    if not ok:
        bound = f"[{low}, {high})" if high_open else f"[{low}, {high}]"
        raise ConfigError(f"{op}: {name}={value} is outside {bound}")


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum μ and L2 weight decay λ (PyTorch's SGD
    without dampening or Nesterov)."""

    state_keys = ("momentum_buffer",)

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    def _check_hyperparameters(self, group):
        _check_range("SGD", "lr", group["lr"], 0.0)
        _check_range("SGD", "momentum", group["momentum"], 0.0, 1.0)
        _check_range("SGD", "weight_decay", group["weight_decay"], 0.0)

    def update(self, p, grad, group, state):
        lr, mu, wd = group["lr"], group["momentum"], group["weight_decay"]
        if wd != 0:
            grad = grad + wd * p.data
        if mu != 0:
            if "momentum_buffer" not in state:
                # an array even for a 0-d parameter (where grad + wd·θ is a NumPy scalar, and a
                # scalar's copy would take the in-place updates below out of the state)
                state["momentum_buffer"] = np.array(grad, dtype=p.dtype)
            else:
                buf = state["momentum_buffer"]
                buf *= mu
                buf += grad
            grad = state["momentum_buffer"]
        p.data -= lr * grad


class Adam(Optimizer):
    """Adam with bias correction; ``weight_decay`` is L2 added to the gradient (PyTorch's Adam)."""

    state_keys = ("step", "exp_avg", "exp_avg_sq")
    decoupled = False  # AdamW sets True

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    def _check_hyperparameters(self, group):
        name = type(self).__name__
        group["betas"] = tuple(float(b) for b in group["betas"])
        if len(group["betas"]) != 2:
            raise ConfigError(f"{name}: betas={group['betas']}, expected two numbers (β₁, β₂)")
        _check_range(name, "lr", group["lr"], 0.0)
        _check_range(name, "betas[0]", group["betas"][0], 0.0, 1.0, high_open=True)
        _check_range(name, "betas[1]", group["betas"][1], 0.0, 1.0, high_open=True)
        _check_range(name, "eps", group["eps"], 0.0)
        _check_range(name, "weight_decay", group["weight_decay"], 0.0)

    def update(self, p, grad, group, state):
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if wd != 0:
            if self.decoupled:
                p.data *= 1.0 - lr * wd  # AdamW: θ ← θ − ηλθ
            else:
                grad = grad + wd * p.data  # Adam: L2 in the gradient
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p.data)     # m
            state["exp_avg_sq"] = np.zeros_like(p.data)  # v
        state["step"] += 1
        t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        m *= beta1
        m += (1.0 - beta1) * grad
        v *= beta2
        v += (1.0 - beta2) * (grad * grad)
        bias1, bias2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
        denom = np.sqrt(v) / math.sqrt(bias2) + eps  # √v̂ + ε
        p.data -= (lr / bias1) * m / denom           # θ ← θ − η·m̂ / (√v̂ + ε)


class AdamW(Adam):
    """Adam with decoupled weight decay (default λ = 0.01, as PyTorch): θ ← θ(1 − ηλ), then Adam."""

    decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
