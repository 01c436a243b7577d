"""The position-wise feed-forward network (Vaswani et al. 2017, §3.3).

    FFN(x) = act(x W₁ + b₁) W₂ + b₂,    W₁: C → n_inner,  W₂: n_inner → C

The same two-layer MLP runs on every position independently (attention is the only place where
positions meet). The inner width is 4·C in the original Transformer, GPT-2 and BERT. The
activation is GELU in GPT and BERT (tanh form, Hendrycks & Gimpel 2016) and ReLU in the original Transformer and T5;
``"gelu_exact"`` is the erf form x·Φ(x), which Hugging Face's ``hidden_act: "gelu"`` means (pretrained BERTs).

Letters: B batch, T time, C channels (n_embd).
"""
from __future__ import annotations

import autograd.functional as F
from autograd import nn
from autograd.errors import ConfigError

ACTIVATIONS = ("gelu", "gelu_exact", "relu")


def activate(h, activation: str):
    """``activation`` of ``h`` by its minilm name: "gelu" (tanh form), "gelu_exact" (erf) or "relu".
    The feed-forward networks here and the models' heads (``head_activation``) share it."""
    if activation == "relu":
        return F.relu(h)
    if activation not in ACTIVATIONS:
        raise ConfigError(f"activate: activation={activation!r}, expected one of {ACTIVATIONS}")
    return F.gelu(h, approximate="none" if activation == "gelu_exact" else "tanh")


class FeedForward(nn.Module):
    """fc1 (C → n_inner) → activation → fc2 (n_inner → C) → dropout. ``bias=False`` for T5.
    ``init_std`` = 0.02 gives the GPT-2/BERT init (default: PyTorch's)."""

    def __init__(self, n_embd: int, n_inner: int, *, rng, activation: str = "gelu", dropout: float = 0.0,
                 bias: bool = True, init_std: float | None = None):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ConfigError(f"FeedForward: activation={activation!r}, expected one of {ACTIVATIONS}")
        self.activation = activation
        self.fc1 = nn.Linear(n_embd, n_inner, bias=bias, rng=rng, init_std=init_std)
        self.fc2 = nn.Linear(n_inner, n_embd, bias=bias, rng=rng, init_std=init_std)
        self.dropout = nn.Dropout(dropout, rng=rng if dropout > 0 else None)

    def forward(self, x):
        h = activate(self.fc1(x), self.activation)             # (B, T, n_inner)
        return self.dropout(self.fc2(h))                       # (B, T, C)

    def extra_repr(self):
        return f"activation={self.activation!r}"


class GatedFeedForward(FeedForward):
    """The gated FFN of T5 v1.1 / FLAN-T5 (Shazeer 2020, "GLU Variants Improve Transformer", §2):

        FFN(x) = (act(x W₁) ⊙ x W_lin) W₂        W₁, W_lin: C → n_inner,  W₂: n_inner → C

    ``fc1`` is HF's ``wi_0`` (through the activation), ``fc_lin`` its ``wi_1`` (linear), ``fc2`` its ``wo``."""

    def __init__(self, n_embd: int, n_inner: int, *, rng, activation: str = "gelu", dropout: float = 0.0,
                 bias: bool = False, init_std: float | None = None):
        super().__init__(n_embd, n_inner, rng=rng, activation=activation, dropout=dropout, bias=bias,
                         init_std=init_std)
        self.fc_lin = nn.Linear(n_embd, n_inner, bias=bias, rng=rng, init_std=init_std)

    def forward(self, x):
        h = activate(self.fc1(x), self.activation)             # (B, T, n_inner)
        return self.dropout(self.fc2(h * self.fc_lin(x)))      # (B, T, C)
