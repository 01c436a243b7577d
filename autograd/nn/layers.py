"""The layers a Transformer is built from, with PyTorch's parameter names, shapes and init.

Letters: N any leading (batch) dimensions, C_in / C_out features, V vocabulary, C embedding width.

============  =====================================  ===========================================
layer         parameters                             default init
============  =====================================  ===========================================
Linear        weight (C_out, C_in), bias (C_out,)    U(−1/√C_in, 1/√C_in) (PyTorch);
                                                     ``init_std=0.02``: N(0, 0.02²), bias 0 (GPT-2, BERT)
Embedding     weight (V, C)                          N(0, 1) (PyTorch); ``init_std=0.02`` (GPT-2, BERT)
LayerNorm     weight (C,), bias (C,)                 ones, zeros
============  =====================================  ===========================================

Every random init takes ``rng`` (a ``numpy.random.Generator``) as a keyword: the same seed gives
the same model.
"""
from __future__ import annotations

import math

import numpy as np

from .. import functional as F
from .. import fused
from ..errors import ConfigError, ShapeError
from ..function import as_tensor
from .module import Module, Parameter


def check_rng(op: str, rng) -> np.random.Generator:
    """Randomness is an argument: refuse anything but a ``numpy.random.Generator``."""
    if not isinstance(rng, np.random.Generator):
        raise ConfigError(f"{op}: rng must be a numpy.random.Generator (np.random.default_rng(seed)), "
                          f"got {type(rng).__name__}")
    return rng


def _check_features(op: str, x, expected: int):
    if x.ndim == 0 or x.shape[-1] != expected:
        raise ShapeError(f"{op}: input of shape {x.shape}, expected (..., {expected})")


class Linear(Module):
    """y = x Wᵀ + b: (N..., C_in) → (N..., C_out), with W of shape (C_out, C_in) as in PyTorch.

    Init: W and b ~ U(−1/√C_in, 1/√C_in), PyTorch's default (kaiming_uniform with a=√5 reduces to
    this bound). With ``init_std=σ`` instead: W ~ N(0, σ²) and b = 0, the GPT-2/BERT init (σ=0.02).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, rng,
                 dtype=np.float32, init_std: float | None = None):
        super().__init__()
        check_rng("Linear", rng)
        if in_features <= 0 or out_features <= 0:
            raise ConfigError(f"Linear: in_features={in_features}, out_features={out_features} must be > 0")
        self.in_features, self.out_features = in_features, out_features
        shape = (out_features, in_features)
        if init_std is None:
            bound = 1.0 / math.sqrt(in_features)
            self.weight = Parameter(rng.uniform(-bound, bound, size=shape), dtype=dtype)
            b = rng.uniform(-bound, bound, size=out_features)
        else:
            self.weight = Parameter(rng.normal(0.0, init_std, size=shape), dtype=dtype)
            b = np.zeros(out_features)
        self.register_parameter("bias", Parameter(b, dtype=dtype) if bias else None)

    def forward(self, x):
        x = as_tensor(x)
        _check_features("Linear", x, self.in_features)
        if self.bias is None:
            if x.ndim == 1:  # (C_in,): matmul takes no 1-D operand, so as one row and back
                return (x.reshape(1, self.in_features) @ self.weight.T).reshape(self.out_features)
            return x @ self.weight.T  # (N..., C_in) @ (C_in, C_out) -> (N..., C_out)
        return fused.Linear.apply(x, self.weight, self.bias)  # x @ W.T + b as one node (fused.py)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table: integer ids (N...) → rows of ``weight`` (N..., C). Ids outside [0, V)
    raise (negative ids too, which NumPy indexing would silently wrap).

    Init: N(0, 1) (PyTorch's default); ``init_std=0.02`` for GPT-2/BERT.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, *, rng, dtype=np.float32,
                 init_std: float = 1.0):
        super().__init__()
        check_rng("Embedding", rng)
        if num_embeddings <= 0 or embedding_dim <= 0:
            raise ConfigError(f"Embedding: num_embeddings={num_embeddings}, embedding_dim={embedding_dim} "
                              "must be > 0")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(rng.normal(0.0, init_std, size=(num_embeddings, embedding_dim)), dtype=dtype)

    def forward(self, ids):
        return F.embedding(ids, self.weight)  # (N...) -> (N..., C)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Layer normalisation over the last axis (Ba et al. 2016):
    y = (x − mean) / √(var + ε) · weight + bias, biased variance; weight = 1, bias = 0 at init.
    ``normalized_shape`` a tuple of several sizes normalises over that many trailing axes, with
    weight and bias of that shape (PyTorch's); an int or a 1-tuple keeps ``normalized_shape`` an int."""

    def __init__(self, normalized_shape, eps: float = 1e-5, *, dtype=np.float32):
        super().__init__()
        if isinstance(normalized_shape, (tuple, list)):
            shape = tuple(int(n) for n in normalized_shape)
            if not shape or min(shape) <= 0:
                raise ConfigError(f"LayerNorm: normalized_shape={shape} must be one or more sizes > 0")
            normalized_shape = shape[0] if len(shape) == 1 else shape
        self.normalized_shape, self.eps = normalized_shape if isinstance(normalized_shape, tuple) \
            else int(normalized_shape), float(eps)
        shape = self.normalized_shape if isinstance(self.normalized_shape, tuple) else (self.normalized_shape,)
        self.weight = Parameter(np.ones(shape), dtype=dtype)
        self.bias = Parameter(np.zeros(shape), dtype=dtype)

    def forward(self, x):
        x = as_tensor(x)
        if isinstance(self.normalized_shape, tuple):  # several trailing axes
            return F.layer_norm(x, self.weight, self.bias, eps=self.eps, normalized_shape=self.normalized_shape)
        _check_features("LayerNorm", x, self.normalized_shape)
        return F.layer_norm(x, self.weight, self.bias, eps=self.eps)  # (N..., C)

    def extra_repr(self):
        shape = self.normalized_shape if isinstance(self.normalized_shape, tuple) else (self.normalized_shape,)
        return f"{shape}, eps={self.eps}"


class Dropout(Module):
    """Inverted dropout while ``self.training`` (zero with probability p, scale the rest by
    1/(1−p)); the identity after ``model.eval()``. Needs ``rng`` when p > 0."""

    def __init__(self, p: float = 0.1, *, rng=None):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ConfigError(f"Dropout: p={p} must be in [0, 1)")
        if p > 0:
            check_rng("Dropout", rng)
        self.p, self.rng = float(p), rng

    def forward(self, x):
        return F.dropout(x, self.p, rng=self.rng, training=self.training)

    def extra_repr(self):
        return f"p={self.p}"


class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class GELU(Module):
    """GELU; ``approximate="tanh"`` (GPT-2, BERT; the default here, unlike PyTorch) or ``"none"``."""

    def __init__(self, approximate: str = "tanh"):
        super().__init__()
        if approximate not in ("tanh", "none"):
            raise ConfigError(f"GELU: approximate={approximate!r}, expected 'tanh' or 'none'")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Identity(Module):
    """Returns its input (a placeholder, e.g. for an optional layer)."""

    def forward(self, x):
        return x
