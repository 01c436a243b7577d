"""Input embeddings: token + position (+ segment), the input of the first Transformer block.

    x[b, t] = wte[ids[b, t]] + wpe[t] + wse[segment[b, t]]

GPT uses the first two terms; BERT adds the segment ("token type") embedding that tells sentence A
from sentence B (Devlin et al. 2019, §3, Fig. 2). The sum itself is Task 3.3's ``embed_inputs``
(``solutions/task03_transformer/positions.py``).

Letters: B batch, T time, C channels, V vocabulary.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import nn, tasks
from autograd.errors import ShapeError

# Task 3.3: solutions/task03_transformer/positions.py
embed_inputs = tasks.bind("task03_transformer.positions", "embed_inputs")


class SegmentEmbedding(nn.Embedding):
    """BERT's token-type table (n_segments, C), ``n_segments=2`` (sentence A = 0, B = 1).
    ``forward(segment_ids)`` (B, T) → (B, T, C); an id outside [0, n_segments) raises."""

    def __init__(self, n_segments: int, n_embd: int, *, rng, init_std: float = 0.02, dtype=np.float32):
        super().__init__(n_segments, n_embd, rng=rng, init_std=init_std, dtype=dtype)

    def forward(self, segment_ids):
        ids = np.asarray(segment_ids)
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_embeddings):
            bad = ids[(ids < 0) | (ids >= self.num_embeddings)].flat[0]
            raise ShapeError(f"SegmentEmbedding: segment id {bad} is outside [0, {self.num_embeddings})")
        return super().forward(ids)                               # (B, T, C)


def check_token_ids(op: str, idx, vocab_size: int) -> np.ndarray:
    """``idx`` as an integer (B, T) array with every id in [0, vocab_size); raises otherwise,
    naming the id (negative ids too: NumPy indexing would wrap them silently)."""
    idx = np.asarray(getattr(idx, "data", idx))
    if idx.ndim != 2:
        raise ShapeError(f"{op}: token ids of shape {idx.shape}, expected (B, T)"
                         + (" — add a batch axis with ids[None]" if idx.ndim == 1 else ""))
    return F.check_ids(op, idx, vocab_size)
