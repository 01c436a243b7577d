"""Transformer-XL: segment-level recurrence with relative positional attention (Dai et al. 2019).

    h⁰ = wte[x]                                                  no absolute positions at all
    layer n, segment τ+1 (pre-LN):
        h̃ = [SG(mⁿ⁻¹_τ) ∘ hⁿ⁻¹]                                  memory ∘ current, (B, M+T, C)   §3.2
        q = LN₁(hⁿ⁻¹) W_q,  k = LN₁(h̃) W_k,  v = LN₁(h̃) W_v,  r = R W_{k,R}  (R sinusoidal, by distance)
        A = relative_scores(q, k, r, u, v) / √d                 (a) + (b) + (c) + (d)           §3.3, Task 12.3
        hⁿ = hⁿ⁻¹ + Attn(causal over memory + current);  hⁿ += MLP(LN₂ hⁿ)
        mⁿ⁻¹_{τ+1} = update_memory(mⁿ⁻¹_τ, hⁿ⁻¹, mem_len)       the last mem_len inputs, detached  Task 12.3
    logits = LN_f(h^L) · wteᵀ                                    tied output

Each layer's memory holds that layer's *input* states of the previous segment(s), so layer n of the
current segment sees layer n−1 of the past: information travels back up to L·mem_len steps (§3.2).
Query i of the segment sits at position M + i of [memory ∘ current]; it may see keys j <= M + i.

``forward(ids, mems=None) -> (logits, new_mems)``; ``mems`` is the ``new_mems`` of the previous call
(a list of n_layer Tensors (B, M, C)), or None at the start of a stream. With ``mem_len = 0`` every
memory is empty and the model is the plain relative-position causal LM, segment by segment.

Simplifications (as in ``xlnet.py``): pre-LN blocks with a final ``ln_f`` instead of the paper's
post-LN (at laptop size pre-LN trains reliably); no adaptive softmax; u, v (HF's ``r_w_bias``,
``r_r_bias``) per layer (HF's ``untie_r=True``). The sinusoidal R has no length limit, so keys may
reach any distance.

Parameter names: ``wte``, ``layers.{n}.ln1``, ``layers.{n}.{q,k,v,r,out}_proj``, ``layers.{n}.r_w_bias``
(u, (H, d)), ``layers.{n}.r_r_bias`` (v), ``layers.{n}.ln2``, ``layers.{n}.mlp.fc1/fc2``, ``ln_f``.

Letters: B batch, T segment length, M memory length, K = M + T keys, C channels, H heads,
d = C / H, V vocabulary, L layers.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import Tensor, cat, nn, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import FeedForward, check_token_ids, merge_heads, sinusoidal_positions, split_heads

__all__ = ["TransformerXLConfig", "TransformerXL", "RelativeAttentionLayer", "IGNORE_INDEX"]

# Task 12.3: solutions/task12_beyond/transformer_xl.py
update_memory = tasks.bind("task12_beyond.transformer_xl", "update_memory")
relative_scores = tasks.bind("task12_beyond.transformer_xl", "relative_scores")

IGNORE_INDEX = -100  # a target that adds nothing to the loss (PyTorch / Hugging Face)


@dataclass
class TransformerXLConfig:
    """The shape of a Transformer-XL. Defaults: laptop-sized (the paper's base WT103 model: C=410, 16 layers)."""

    vocab_size: int = 256        # V
    n_layer: int = 2             # L: layers (each keeps its own memory)
    n_head: int = 4              # H
    n_embd: int = 64             # C (n_embd must be a multiple of n_head)
    mem_len: int = 16            # memory steps kept per layer; 0 = no recurrence
    n_inner: int | None = None   # MLP width; None = 4·C
    dropout: float = 0.0         # on embeddings, attention weights and residual branches
    eps: float = 1e-5            # LayerNorm ε
    init_std: float = 0.02       # σ of the N(0, σ²) init of weights, embeddings, u and v
    seed: int = 0                # the init seed when no rng is given

    def __post_init__(self):
        for name in ("vocab_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ConfigError(f"TransformerXLConfig: {name}={value!r} must be a positive integer")
        if self.n_embd % self.n_head:
            raise ConfigError(f"TransformerXLConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if isinstance(self.mem_len, bool) or not isinstance(self.mem_len, (int, np.integer)) or self.mem_len < 0:
            raise ConfigError(f"TransformerXLConfig: mem_len={self.mem_len!r} must be an integer >= 0")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"TransformerXLConfig: dropout={self.dropout} must be in [0, 1)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def relative_encodings(K: int, C: int) -> np.ndarray:
    """(K, C) float32: row m is the sinusoidal encoding R_m of distance m = 0..K−1 (Task 3.3's table)."""
    return sinusoidal_positions(K, C).astype(np.float32)


class RelativeAttentionLayer(nn.Module):
    """One pre-LN Transformer-XL layer: relative multi-head attention over [memory ∘ current] + MLP."""

    def __init__(self, n_embd, n_head, n_inner, *, rng, dropout=0.0, eps=1e-5, init_std=0.02):
        super().__init__()
        self.n_embd, self.n_head, self.head_dim = n_embd, n_head, n_embd // n_head
        self.ln1 = nn.LayerNorm(n_embd, eps=eps)
        self.q_proj = nn.Linear(n_embd, n_embd, bias=False, rng=rng, init_std=init_std)
        self.k_proj = nn.Linear(n_embd, n_embd, bias=False, rng=rng, init_std=init_std)
        self.v_proj = nn.Linear(n_embd, n_embd, bias=False, rng=rng, init_std=init_std)
        self.r_proj = nn.Linear(n_embd, n_embd, bias=False, rng=rng, init_std=init_std)  # W_{k,R}
        self.out_proj = nn.Linear(n_embd, n_embd, bias=False, rng=rng, init_std=init_std)
        self.r_w_bias = nn.Parameter(rng.normal(0.0, init_std, size=(n_head, self.head_dim)).astype(np.float32))  # u
        self.r_r_bias = nn.Parameter(rng.normal(0.0, init_std, size=(n_head, self.head_dim)).astype(np.float32))  # v
        self.attn_dropout = nn.Dropout(dropout, rng=rng if dropout > 0 else None)
        self.resid_dropout = nn.Dropout(dropout, rng=rng if dropout > 0 else None)
        self.ln2 = nn.LayerNorm(n_embd, eps=eps)
        self.mlp = FeedForward(n_embd, n_inner, rng=rng, dropout=dropout, init_std=init_std)
        self.last_attention = None

    def forward(self, h, mem=None):
        """h (B, T, C) the current segment; mem (B, M, C) or None. Returns (B, T, C)."""
        B, T, C = h.shape
        H, d = self.n_head, self.head_dim
        x = self.ln1(h)                                               # (B, T, C)
        xm = x if mem is None or mem.shape[1] == 0 else cat([self.ln1(mem), x], axis=1)  # (B, K, C)
        K = xm.shape[1]
        M = K - T
        q = split_heads(self.q_proj(x), H)                            # (B, H, T, d)
        k = split_heads(self.k_proj(xm), H)                           # (B, H, K, d)
        v = split_heads(self.v_proj(xm), H)                           # (B, H, K, d)
        r = self.r_proj(Tensor(relative_encodings(K, C)))             # (K, C)
        r = r.reshape(K, H, d).transpose(1, 0, 2)                     # (H, K, d)
        scores = relative_scores(q, k, r, self.r_w_bias, self.r_r_bias)  # (B, H, T, K)
        mask = np.arange(K)[None, :] <= M + np.arange(T)[:, None]    # (T, K): causal over mem + current
        att = F.scaled_masked_softmax(scores, mask, scale=1.0 / math.sqrt(d))
        self.last_attention = att.data
        y = merge_heads(self.attn_dropout(att) @ v)                   # (B, T, C)
        h = h + self.resid_dropout(self.out_proj(y))
        return h + self.mlp(self.ln2(h))                              # (B, T, C)


class TransformerXL(nn.Module):
    """``model(ids, mems=None) -> (logits (B, T, V), new_mems)``; ``new_mems`` is a list of
    n_layer detached Tensors (B, min(M + T, mem_len), C) to pass with the next segment."""

    def __init__(self, config: TransformerXLConfig, *, rng: np.random.Generator | None = None):
        super().__init__()
        if not isinstance(config, TransformerXLConfig):
            raise ConfigError(f"TransformerXL: config must be a TransformerXLConfig, got {type(config).__name__}")
        self.config = config
        rng = np.random.default_rng(config.seed) if rng is None else rng
        C, std = config.n_embd, config.init_std
        n_inner = config.n_inner or 4 * C
        self.wte = nn.Embedding(config.vocab_size, C, rng=rng, init_std=std)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.layers = nn.ModuleList([
            RelativeAttentionLayer(C, config.n_head, n_inner, rng=rng, dropout=config.dropout,
                                   eps=config.eps, init_std=std)
            for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(C, eps=config.eps)

    def _check_mems(self, mems, B):
        if mems is None:
            return [None] * self.config.n_layer
        if len(mems) != self.config.n_layer:
            raise ShapeError(f"TransformerXL: {len(mems)} memories for {self.config.n_layer} layers")
        for m in mems:
            if m is not None and (m.ndim != 3 or m.shape[0] != B or m.shape[2] != self.config.n_embd):
                raise ShapeError(f"TransformerXL: a memory of shape {m.shape}, expected ({B}, M, {self.config.n_embd})")
        return list(mems)

    def forward(self, ids, mems=None):
        cfg = self.config
        ids = check_token_ids("TransformerXL", ids, cfg.vocab_size)  # (B, T)
        B, T = ids.shape
        mems = self._check_mems(mems, B)
        h = self.drop(self.wte(ids))                                  # (B, T, C)
        new_mems = []
        for layer, mem in zip(self.layers, mems):
            new_mems.append(update_memory(mem, h, cfg.mem_len))       # this layer's input, SG
            h = layer(h, mem)                                         # (B, T, C)
        h = self.ln_f(h)
        logits = h @ self.wte.weight.T                                # (B, T, V) tied output
        return logits, new_mems

    def segment_loss(self, ids, targets, mems=None):
        """Cross-entropy of ``targets`` (B, T; −100 = not predicted) on one segment given ``mems``.
        Returns ``(loss, logits, new_mems)``."""
        logits, new_mems = self(ids, mems)
        loss = F.cross_entropy(logits, np.asarray(targets), ignore_index=IGNORE_INDEX)
        return loss, logits, new_mems

    def stream_loss(self, ids, targets, segment_len, *, use_memory=True):
        """The loss over a long sequence ``ids`` (B, N) cut into segments of ``segment_len``,
        processed left to right carrying the memory (``use_memory=False``: every segment alone).
        ``targets`` (B, N): the token to predict at each position, or −100. Returns ``(loss, logits)``
        with logits (B, N, V); the loss is the mean over every predicted position of the stream."""
        ids, targets = np.asarray(ids), np.asarray(targets)
        if ids.shape != targets.shape or ids.ndim != 2:
            raise ShapeError(f"TransformerXL.stream_loss: ids {ids.shape} and targets {targets.shape}, expected equal (B, N)")
        if segment_len <= 0:
            raise ConfigError(f"TransformerXL.stream_loss: segment_len={segment_len}, expected > 0")
        mems, all_logits = None, []
        for s in range(0, ids.shape[1], segment_len):
            logits, new_mems = self(ids[:, s:s + segment_len], mems)
            mems = new_mems if use_memory else None
            all_logits.append(logits)
        logits = cat(all_logits, axis=1) if len(all_logits) > 1 else all_logits[0]
        return F.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX), logits

    def extra_repr(self):
        c = self.config
        return f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, mem_len={c.mem_len}"
