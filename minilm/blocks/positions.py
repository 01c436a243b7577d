"""Positions: sinusoidal tables, learned absolute positions, T5's relative position bias.

The lessons are Task 3.3 (``solutions/task03_transformer/positions.py``): the sinusoidal table, the
T5 bucket function and the embedding sum. This module wraps them as the modules the models use:

* ``LearnedPositionEmbedding`` — GPT's ``wpe`` / BERT's ``position_embeddings``: row t is position t;
* ``RelativePositionBias`` — T5's learned (num_buckets, H) table, read through the buckets of
  ``key − query`` and added to every head's attention scores (T5 shares one across all layers).

Letters: T time, Tq queries, Tk keys, C channels, H heads.
"""
from __future__ import annotations

import numpy as np

from autograd import nn, tasks
from autograd.errors import ConfigError, ShapeError

# Task 3.3: solutions/task03_transformer/positions.py
sinusoidal_positions = tasks.bind("task03_transformer.positions", "sinusoidal_positions")
relative_position_bucket = tasks.bind("task03_transformer.positions", "relative_position_bucket")


class LearnedPositionEmbedding(nn.Embedding):
    """A learned (max_positions, C) table; ``forward(T)`` gives rows 0..T-1, (T, C), and
    ``forward(positions)`` with an int array gives those rows. Init N(0, init_std²) (GPT-2: 0.02)."""

    def __init__(self, max_positions: int, n_embd: int, *, rng, init_std: float = 0.02, dtype=np.float32):
        super().__init__(max_positions, n_embd, rng=rng, init_std=init_std, dtype=dtype)

    @property
    def max_positions(self) -> int:
        return self.num_embeddings

    def forward(self, positions):
        if isinstance(positions, (int, np.integer)) and not isinstance(positions, bool):
            if not 0 <= positions <= self.max_positions:
                raise ShapeError(f"LearnedPositionEmbedding: sequence length {positions} exceeds the "
                                 f"{self.max_positions} learned positions")
            positions = np.arange(positions)
        positions = np.asarray(positions)
        if positions.size and (positions.min() < 0 or positions.max() >= self.max_positions):
            raise ShapeError(f"LearnedPositionEmbedding: position {positions.max()} is outside "
                             f"[0, {self.max_positions})")
        return super().forward(positions)                         # (..., C)


class RelativePositionBias(nn.Module):
    """T5's relative position bias: scores[b, h, i, j] += table[bucket(j − i), h].

    ``bidirectional=True`` for the encoder (keys on both sides), False for a causal decoder.
    The table is an Embedding named ``relative_attention_bias`` (Hugging Face's name), shape
    (num_buckets, n_head). ``forward(Tq, Tk)`` returns the bias as a (1, H, Tq, Tk) Tensor for
    ``MultiHeadAttention(..., scale=False)(x, bias=...)``.
    """

    def __init__(self, n_head: int, *, rng, bidirectional: bool = True, num_buckets: int = 32,
                 max_distance: int = 128, init_std: float = 0.02):
        super().__init__()
        if num_buckets < 2 or max_distance < num_buckets // 2:
            raise ConfigError(f"RelativePositionBias: num_buckets={num_buckets}, max_distance={max_distance}: "
                              "need num_buckets >= 2 and max_distance >= num_buckets // 2")
        self.n_head, self.bidirectional = n_head, bool(bidirectional)
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.relative_attention_bias = nn.Embedding(num_buckets, n_head, rng=rng, init_std=init_std)

    def buckets(self, Tq: int, Tk: int) -> np.ndarray:
        """(Tq, Tk) bucket ids of key − query."""
        relative = np.arange(Tk)[None, :] - np.arange(Tq)[:, None]   # (Tq, Tk): key − query
        return relative_position_bucket(relative, self.bidirectional, num_buckets=self.num_buckets,
                                        max_distance=self.max_distance)

    def forward(self, Tq: int, Tk: int | None = None):
        Tk = Tq if Tk is None else Tk
        values = self.relative_attention_bias(self.buckets(Tq, Tk))  # (Tq, Tk, H)
        return values.transpose(2, 0, 1).reshape(1, self.n_head, Tq, Tk)  # (1, H, Tq, Tk)

    def extra_repr(self):
        return (f"n_head={self.n_head}, bidirectional={self.bidirectional}, "
                f"num_buckets={self.num_buckets}, max_distance={self.max_distance}")
