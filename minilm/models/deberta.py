"""DeBERTa: disentangled attention and the enhanced mask decoder (He et al. 2021, §3.1–3.2).

    x₀ = LayerNorm(E_tok[ids])                         no absolute position at the input
    P  = LayerNorm(E_rel)  (2k, C)                     relative-position embeddings, shared by all layers
    xₗ = Block(xₗ₋₁, P),  l = 1 … n_layer               post-LN, attention = disentangled (Task 12.4):
         scores_ij = (Q^c_i·K^c_j + Q^c_i·K^r_δ(i,j) + K^c_j·Q^r_δ(j,i)) / √(3d)
    EMD (§3.2):  I = x_L + E_abs[t]                    absolute positions, only now, just before the head
                 z = Block_last(query = I, keys/values = x_L, P), applied ``emd_layers`` times (I ← z)
    logits = LayerNorm(GELU(W z + b)) · E_tokᵀ + b_out  the MLM head, tied to the word embeddings

Why the enhanced mask decoder: relative positions alone cannot tell "a new *store* opened beside the
new *mall*" apart from the same words swapped, when both nouns sit at the same relative distance
from "new"; the absolute position tells the MLM head which is the subject. DeBERTa adds it as late
as possible, so the layers below learn from relative positions only. As in the released code, the
decoder re-uses the last encoder layer's weights (n = 2 applications by default, §3.2).

``share_att_key=True`` projects P with the content projections (W_q^r = W_q^c, W_k^r = W_k^c; as in
DeBERTa-v2); the default keeps the paper's separate W_q^r, W_k^r.

Letters: B batch, T time, C channels (n_embd), H heads, d = C / H, V vocabulary, k the maximum
relative distance (``max_relative_positions``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import nn, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import FeedForward, check_token_ids, merge_heads, padding_mask, split_heads

# Task 12.4: solutions/task12_beyond/deberta.py
deberta_scores = tasks.bind("task12_beyond.deberta", "deberta_scores")

IGNORE_INDEX = -100

__all__ = ["DebertaConfig", "DisentangledSelfAttention", "DebertaLayer", "DebertaForMaskedLM"]


@dataclass
class DebertaConfig:
    vocab_size: int                       # V
    max_position_embeddings: int = 64     # absolute positions, used only by the enhanced mask decoder
    max_relative_positions: int = 8       # k: distances beyond ±k share one embedding (DeBERTa-base: 256)
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 64
    n_inner: int | None = None            # FFN width; None = 4·n_embd
    share_att_key: bool = False           # True: P projected by the content W_q, W_k (DeBERTa-v2)
    emd_layers: int = 2                   # applications of the enhanced mask decoder (§3.2: n = 2)
    dropout: float = 0.0
    layer_norm_eps: float = 1e-7          # DeBERTa's ε
    initializer_range: float = 0.02

    def __post_init__(self):
        for name in ("vocab_size", "max_position_embeddings", "max_relative_positions", "n_layer", "n_head",
                     "n_embd"):
            v = getattr(self, name)
            if isinstance(v, bool) or int(v) != v or v < 1:
                raise ConfigError(f"DebertaConfig: {name}={v!r} must be a positive integer")
        if self.n_embd % self.n_head:
            raise ConfigError(f"DebertaConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.emd_layers < 0:
            raise ConfigError(f"DebertaConfig: emd_layers={self.emd_layers} must be >= 0")


class DisentangledSelfAttention(nn.Module):
    """Multi-head attention with DeBERTa's three-term scores (Task 12.4's ``deberta_scores``).

    ``forward(x, rel, mask=None, query=None)``: x (B, T, C) gives the content keys and values, and
    the content queries unless ``query`` (B, T, C) is given (the enhanced mask decoder's I);
    rel (2k, C) the relative embeddings P; mask broadcastable to (B, H, T, T)."""

    def __init__(self, config: DebertaConfig, *, rng):
        super().__init__()
        C, std = config.n_embd, config.initializer_range
        self.n_head, self.k, self.share = config.n_head, config.max_relative_positions, config.share_att_key
        self.q_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.k_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.v_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.out_proj = nn.Linear(C, C, rng=rng, init_std=std)
        if not self.share:                                   # the paper's separate W_q^r, W_k^r
            self.pos_q_proj = nn.Linear(C, C, rng=rng, init_std=std)
            self.pos_k_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.attn_dropout = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.last_attention = None

    def _rel_heads(self, proj, rel):
        """(2k, C) → (H, 2k, d): the projected relative embeddings, one table per head."""
        R, C = rel.shape
        return proj(rel).reshape(R, self.n_head, C // self.n_head).transpose(1, 0, 2)

    def forward(self, x, rel, mask=None, query=None):
        B, T, C = x.shape
        q_c = split_heads(self.q_proj(x if query is None else query), self.n_head)   # (B, H, T, d)
        k_c = split_heads(self.k_proj(x), self.n_head)                              # (B, H, T, d)
        v = split_heads(self.v_proj(x), self.n_head)                                # (B, H, T, d)
        q_r = self._rel_heads(self.q_proj if self.share else self.pos_q_proj, rel)   # (H, 2k, d)
        k_r = self._rel_heads(self.k_proj if self.share else self.pos_k_proj, rel)   # (H, 2k, d)
        scores, *_ = deberta_scores(q_c, k_c, q_r, k_r, self.k)                     # (B, H, T, T), scaled
        attn = F.scaled_masked_softmax(scores, mask, scale=1.0)                      # over the keys
        self.last_attention = attn.data
        out = self.attn_dropout(attn) @ v                                            # (B, H, T, d)
        return self.out_proj(merge_heads(out))                                       # (B, T, C)


class DebertaLayer(nn.Module):
    """Post-LN block (BERT's order): h = LN(q + Attn); out = LN(h + FFN(h)), where q is the query
    stream (x itself, or the decoder's I)."""

    def __init__(self, config: DebertaConfig, *, rng):
        super().__init__()
        C = config.n_embd
        self.attn = DisentangledSelfAttention(config, rng=rng)
        self.ln1 = nn.LayerNorm(C, eps=config.layer_norm_eps)
        self.mlp = FeedForward(C, config.n_inner or 4 * C, rng=rng, dropout=config.dropout,
                               init_std=config.initializer_range)
        self.ln2 = nn.LayerNorm(C, eps=config.layer_norm_eps)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)

    def forward(self, x, rel, mask=None, query=None):
        q = x if query is None else query
        h = self.ln1(q + self.drop(self.attn(x, rel, mask=mask, query=query)))   # (B, T, C)
        return self.ln2(h + self.mlp(h))                                          # (B, T, C)


class DebertaForMaskedLM(nn.Module):
    """``model(input_ids, attention_mask=None, labels=None) -> {"loss", "logits", "hidden_states"}``.

    labels (B, T): the original id at predicted positions, -100 elsewhere (the MLM convention of
    ``minilm.corruption.mask_tokens``); the loss is the mean cross-entropy over the predicted ones.
    """

    def __init__(self, config: DebertaConfig, *, rng):
        super().__init__()
        if not isinstance(config, DebertaConfig):
            raise ConfigError(f"DebertaForMaskedLM: config must be a DebertaConfig, got {type(config).__name__}")
        self.config = config
        C, std, eps = config.n_embd, config.initializer_range, config.layer_norm_eps
        self.word_embeddings = nn.Embedding(config.vocab_size, C, rng=rng, init_std=std)
        self.emb_ln = nn.LayerNorm(C, eps=eps)
        self.rel_embeddings = nn.Embedding(2 * config.max_relative_positions, C, rng=rng, init_std=std)
        self.rel_ln = nn.LayerNorm(C, eps=eps)
        self.layers = nn.ModuleList([DebertaLayer(config, rng=rng) for _ in range(config.n_layer)])
        self.abs_position_embeddings = nn.Embedding(config.max_position_embeddings, C, rng=rng, init_std=std)
        self.head_dense = nn.Linear(C, C, rng=rng, init_std=std)
        self.head_ln = nn.LayerNorm(C, eps=eps)
        self.head_bias = nn.Parameter(np.zeros(config.vocab_size), dtype=self.word_embeddings.weight.dtype)

    def forward(self, input_ids, attention_mask=None, labels=None) -> dict:
        cfg = self.config
        ids = check_token_ids("DebertaForMaskedLM", input_ids, cfg.vocab_size)     # (B, T)
        B, T = ids.shape
        if T > cfg.max_position_embeddings:
            raise ShapeError(f"DebertaForMaskedLM: sequence length {T} exceeds max_position_embeddings "
                             f"{cfg.max_position_embeddings}")
        if attention_mask is None:
            attention_mask = np.ones((B, T), dtype=np.int64)
        if np.shape(attention_mask) != (B, T):
            raise ShapeError(f"DebertaForMaskedLM: attention_mask of shape {np.shape(attention_mask)}, "
                             f"expected (B, T) = {(B, T)}")
        mask = padding_mask(attention_mask)                                         # (B, 1, 1, T)
        x = self.emb_ln(self.word_embeddings(ids))                                  # (B, T, C): content only
        rel = self.rel_ln(self.rel_embeddings.weight)                               # (2k, C)
        hidden = []
        for layer in self.layers:
            x = layer(x, rel, mask=mask)                                            # (B, T, C)
            hidden.append(x)
        # Enhanced mask decoder (§3.2): absolute positions enter only here, as the query stream
        z = x + self.abs_position_embeddings.weight[:T]                             # (B, T, C): I = H + P_abs
        for _ in range(cfg.emd_layers):
            z = self.layers[-1](x, rel, mask=mask, query=z)                         # keys/values: H
        h = self.head_ln(F.gelu(self.head_dense(z)))                                # (B, T, C)
        logits = h @ self.word_embeddings.weight.T + self.head_bias                 # (B, T, V), tied
        loss = None
        if labels is not None:
            labels = np.asarray(labels)
            if labels.shape != (B, T):
                raise ShapeError(f"DebertaForMaskedLM: labels of shape {labels.shape}, expected {(B, T)}")
            loss = F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX)
        return {"loss": loss, "logits": logits, "hidden_states": hidden}

    def extra_repr(self):
        c = self.config
        return (f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, k={c.max_relative_positions}, "
                f"emd_layers={c.emd_layers}, share_att_key={c.share_att_key}")
