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

The released checkpoints (microsoft/DeBERTa, transformers' ``modeling_deberta{,_v2}.py``) differ from
the paper in ways the config can switch on; the defaults are the paper's model and Task 12.4's lesson
(``minilm/pretrained/deberta.py`` sets them for a loaded folder):

    rel_index="released"     position-to-content reads K^c_j · Q^r_δ(i,j), the same index as content-to-
                             position (the paper's term is K^c_j · Q^r_δ(j,i)); still Task 12.4's slot,
                             fed re-indexed tables (``slot_tables``)
    emd=False                the head reads x_L: transformers' ...ForMaskedLM never runs the decoder
    rel_norm="none"          P used as stored (v1); "layer_norm" (default, v2/v3 ``norm_rel_ebd``)
    position_buckets=b > 0   distances beyond ±b/2 are log-bucketed up to ``max_relative_positions``
                             (v3: b = 256, 512), so P has 2b rows (``deberta_positions.py``)
    pos_att_type=("c2p",)    which relative terms exist; the scale is 1/√(d·(1 + number of terms))
    activation="gelu_exact"  the erf GELU of every released checkpoint (default: the tanh form)
    embedding_size=E         embeddings of width E, projected to C without bias (head: C → E)
    position_biased_input    absolute positions also added at the input (v1 configs may say so)
    padding="released"       the pairwise mask m_i·m_j: a padded row attends uniformly to every
                             position, and the embeddings of padded tokens are zeroed

Letters: B batch, T time, C channels (n_embd), H heads, d = C / H, V vocabulary, k the maximum
relative distance (``max_relative_positions``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import nn, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import FeedForward, check_token_ids, merge_heads, padding_mask, split_heads
from minilm.models.deberta_positions import slot_tables

# Task 12.4: solutions/task12_beyond/deberta.py
deberta_scores = tasks.bind("task12_beyond.deberta", "deberta_scores")

IGNORE_INDEX = -100

__all__ = ["DebertaConfig", "DisentangledSelfAttention", "DebertaLayer", "DebertaForMaskedLM"]


@dataclass
class DebertaConfig:
    vocab_size: int                       # V
    max_position_embeddings: int = 64     # absolute positions, used only by the enhanced mask decoder
    max_relative_positions: int = 8       # k: distances beyond ±k share one embedding (DeBERTa-base: 256)
    n_layer: int = 2                      # encoder layers
    n_head: int = 2                       # attention heads
    n_embd: int = 64                      # model width
    n_inner: int | None = None            # FFN width; None = 4·n_embd
    share_att_key: bool = False           # True: P projected by the content W_q, W_k (DeBERTa-v2)
    emd_layers: int = 2                   # applications of the enhanced mask decoder (§3.2: n = 2)
    dropout: float = 0.0                  # dropout probability
    layer_norm_eps: float = 1e-7          # DeBERTa's ε
    initializer_range: float = 0.02       # std of the normal initial weights
    # the released code's switches (module docstring); the defaults are the paper's model
    rel_index: str = "paper"              # "released": position-to-content indexed δ(i, j)
    emd: bool = True                      # False: no enhanced mask decoder (transformers' ...ForMaskedLM)
    rel_norm: str = "layer_norm"          # "none": the relative table as stored (DeBERTa v1)
    position_buckets: int = 0             # b > 0: log-bucketed distances, P has 2b rows (v3: 256)
    pos_att_type: tuple = ("c2p", "p2c")  # the relative terms: content-to-position, position-to-content
    activation: str = "gelu"              # "gelu_exact": the erf form (released checkpoints)
    embedding_size: int | None = None     # E; None = n_embd
    position_biased_input: bool = False   # True: absolute positions added at the input as well
    padding: str = "keys"                 # "released": pairwise mask, pad rows uniform, pad embeddings 0

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
        self.pos_att_type = tuple(self.pos_att_type)           # a checkpoint's JSON gives a list
        choices = {"rel_index": ("paper", "released"), "rel_norm": ("layer_norm", "none"),
                   "activation": ("gelu", "gelu_exact"), "padding": ("keys", "released")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(f"DebertaConfig: {name}={getattr(self, name)!r}, expected one of {allowed}")
        if not self.pos_att_type or not set(self.pos_att_type) <= {"c2p", "p2c"} \
                or len(set(self.pos_att_type)) != len(self.pos_att_type):
            raise ConfigError(f"DebertaConfig: pos_att_type={self.pos_att_type!r}, expected 'c2p' and/or 'p2c'")
        b = self.position_buckets
        if isinstance(b, bool) or int(b) != b or b < 0 or b == 1:
            raise ConfigError(f"DebertaConfig: position_buckets={b!r}, expected 0 (none) or a whole number >= 2")
        if b and self.max_relative_positions - 1 <= b // 2:
            raise ConfigError(f"DebertaConfig: position_buckets={b} needs max_relative_positions > {b // 2 + 1} "
                              f"(the log buckets span b/2 … max − 1), got {self.max_relative_positions}")
        E = self.embedding_size
        if E is not None and (isinstance(E, bool) or int(E) != E or E < 1):
            raise ConfigError(f"DebertaConfig: embedding_size={E!r} must be None or a positive integer")
        if self.emd and self.position_biased_input and (E or self.n_embd) != self.n_embd:
            raise ConfigError(f"DebertaConfig: emd with position_biased_input needs embedding_size = n_embd "
                              f"({self.n_embd}), got {E}: the decoder adds the same table after the projection")

    @property
    def paper_form(self) -> bool:
        """Whether the scores are exactly Task 12.4's (the graded ``deberta_scores`` computes them)."""
        return self.rel_index == "paper" and self.position_buckets == 0 and self.pos_att_type == ("c2p", "p2c")

    @property
    def rel_span(self) -> int:
        """K: the relative table P has 2K rows (K = position_buckets when bucketed, else k)."""
        return self.position_buckets or self.max_relative_positions


class DisentangledSelfAttention(nn.Module):
    """Multi-head attention with DeBERTa's three-term scores (Task 12.4's ``deberta_scores``).

    ``forward(x, rel, mask=None, query=None, rows=None)``: x (B, T, C) gives the content keys and
    values, and the content queries unless ``query`` (B, T, C) is given (the enhanced mask decoder's
    I); rel (2K, C) the relative embeddings P; mask broadcastable to (B, H, T, T); rows (B, 1, T, 1)
    0/1: a 0 row's scores are replaced by zeros (``padding="released"``: a uniform row)."""

    def __init__(self, config: DebertaConfig, *, rng):
        super().__init__()
        C, std = config.n_embd, config.initializer_range
        self.config = config
        self.n_head, self.k, self.share = config.n_head, config.max_relative_positions, config.share_att_key
        self.q_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.k_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.v_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.out_proj = nn.Linear(C, C, rng=rng, init_std=std)
        if not self.share:                                   # the paper's separate W_q^r, W_k^r
            if "p2c" in config.pos_att_type:
                self.pos_q_proj = nn.Linear(C, C, rng=rng, init_std=std)
            if "c2p" in config.pos_att_type:
                self.pos_k_proj = nn.Linear(C, C, rng=rng, init_std=std)
        self.attn_dropout = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.last_attention = None

    def _rel_heads(self, proj, rel):
        """(2k, C) → (H, 2k, d): the projected relative embeddings, one table per head."""
        R, C = rel.shape
        return proj(rel).reshape(R, self.n_head, C // self.n_head).transpose(1, 0, 2)

    def forward(self, x, rel, mask=None, query=None, rows=None):
        B, T, C = x.shape
        terms = self.config.pos_att_type
        q_c = split_heads(self.q_proj(x if query is None else query), self.n_head)   # (B, H, T, d)
        k_c = split_heads(self.k_proj(x), self.n_head)                              # (B, H, T, d)
        v = split_heads(self.v_proj(x), self.n_head)                                # (B, H, T, d)
        q_r = self._rel_heads(self.q_proj if self.share else self.pos_q_proj, rel) if "p2c" in terms else None
        k_r = self._rel_heads(self.k_proj if self.share else self.pos_k_proj, rel) if "c2p" in terms else None
        if self.config.paper_form:                                                  # (H, 2k, d) each
            scores, *_ = deberta_scores(q_c, k_c, q_r, k_r, self.k)                 # (B, H, T, T), /√(3d)
        else:                                                                       # the released switches
            scores, *_ = deberta_scores(q_c, k_c, *slot_tables(q_r, k_r, T, self.config))
            if len(terms) == 1:                                                     # 1/√(2d), not 1/√(3d)
                scores = scores * math.sqrt(3 / 2)
        if rows is not None:
            scores = scores * rows                                                  # pad rows: all 0
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
                               init_std=config.initializer_range, activation=config.activation)
        self.ln2 = nn.LayerNorm(C, eps=config.layer_norm_eps)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)

    def forward(self, x, rel, mask=None, query=None, rows=None):
        q = x if query is None else query
        h = self.ln1(q + self.drop(self.attn(x, rel, mask=mask, query=query, rows=rows)))   # (B, T, C)
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
        E = config.embedding_size or C
        self.word_embeddings = nn.Embedding(config.vocab_size, E, rng=rng, init_std=std)
        self.emb_ln = nn.LayerNorm(C, eps=eps)
        self.rel_embeddings = nn.Embedding(2 * config.rel_span, C, rng=rng, init_std=std)
        if config.rel_norm == "layer_norm":
            self.rel_ln = nn.LayerNorm(C, eps=eps)
        self.layers = nn.ModuleList([DebertaLayer(config, rng=rng) for _ in range(config.n_layer)])
        if config.emd or config.position_biased_input:
            self.abs_position_embeddings = nn.Embedding(config.max_position_embeddings,
                                                        E if config.position_biased_input else C, rng=rng,
                                                        init_std=std)
        self.head_dense = nn.Linear(C, E, rng=rng, init_std=std)
        self.head_ln = nn.LayerNorm(E, eps=eps)
        self.head_bias = nn.Parameter(np.zeros(config.vocab_size), dtype=self.word_embeddings.weight.dtype)
        if E != C:                                            # E → C, no bias (transformers' embed_proj)
            self.embed_proj = nn.Linear(E, C, bias=False, rng=rng, init_std=std)

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
        x = self.word_embeddings(ids)                                               # (B, T, E): content only
        if cfg.position_biased_input:                                               # (not in the paper's model)
            x = x + self.abs_position_embeddings.weight[:T]
        if "embed_proj" in self._modules:
            x = self.embed_proj(x)                                                  # (B, T, C)
        x = self.emb_ln(x)                                                          # (B, T, C)
        rows = None
        if cfg.padding == "released":                                               # transformers' masking
            m = np.asarray(attention_mask).astype(bool)                             # (B, T)
            x = x * m[:, :, None].astype(x.data.dtype)                              # padded tokens: 0
            mask = (m[:, None, :, None] & m[:, None, None, :]) | ~m[:, None, :, None]   # (B, 1, T, T)
            rows = m[:, None, :, None].astype(x.data.dtype)                         # (B, 1, T, 1)
        else:
            mask = padding_mask(attention_mask)                                     # (B, 1, 1, T)
        rel = self.rel_embeddings.weight                                            # (2K, C)
        if cfg.rel_norm == "layer_norm":
            rel = self.rel_ln(rel)
        hidden = []
        for layer in self.layers:
            x = layer(x, rel, mask=mask, rows=rows)                                 # (B, T, C)
            hidden.append(x)
        z = x
        if cfg.emd:   # Enhanced mask decoder (§3.2): absolute positions enter only here, as the query stream
            z = x + self.abs_position_embeddings.weight[:T]                         # (B, T, C): I = H + P_abs
            for _ in range(cfg.emd_layers):
                z = self.layers[-1](x, rel, mask=mask, query=z, rows=rows)          # keys/values: H
        h = self.head_ln(F.gelu(self.head_dense(z),
                                approximate="none" if cfg.activation == "gelu_exact" else "tanh"))   # (B, T, E)
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
        extra = "" if c.paper_form and c.emd else f", rel_index={c.rel_index!r}, emd={c.emd}, buckets={c.position_buckets}"
        return (f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, k={c.max_relative_positions}, "
                f"emd_layers={c.emd_layers}, share_att_key={c.share_att_key}{extra}")
