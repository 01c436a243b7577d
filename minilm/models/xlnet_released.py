"""The released XLNet (Yang et al. 2019; zihangdai/xlnet ``modeling.py``, transformers'
``modeling_xlnet.py``), numerically the model of ``XLNetLMHeadModel``, beside minilm's teaching
XLNet (``xlnet.py``, absolute positions and pre-LN, graded Tasks 8.1–8.2).

    h⁰_i = E[x_i]                        no absolute position anywhere
    g⁰_p = mask_emb                      one query row per target p (only with target_mapping)
    R_m  = [sin(d_m ω), cos(d_m ω)]      d_m = K, K−1, …, −T+1 (distances, clamped to ±clamp_len),
                                         ω_k = 10000^(−2k/C)                         Transformer-XL §3.3
    score(i, j) = [ (q_i + r_w)·k_j  +  (q_i + r_r)·(W_r R)_{d = M+i−j}  +  (q_i + r_s)·s_{ij} ] / √D
                  content              position (bidirectional)            segment: s = seg_embed[0]
                                                                           if i, j share a segment, else [1]
    layer l (post-LN)   h ← LN(h + Attn_h(h))            K, V from [mems ∘ h]; h may see itself
                        g ← LN(g + Attn_g(g))            same weights, same K, V; perm_mask as is
                        x ← LN(x + W₂ act(W₁ x + b₁) + b₂) for x in (h, g)
    logits              (g^L if target_mapping else h^L) · Eᵀ + b      ``lm_loss``, tied to E

Masks follow XLNet: ``perm_mask[b, i, j] = 1``: i may NOT see j. The content stream ``h`` uses
perm_mask with the diagonal cleared (a token sees itself), the query stream ``g`` perm_mask itself.
A masked score is ``score − 1e30`` as in the released code: a row that sees nothing (possible in
``g``) attends uniformly over every key instead of giving zeros. Padding (``attention_mask`` 0) hides
the pad *keys*; a pad query still sees itself. Without ``target_mapping`` there is no query stream
at all and the logits come from ``h`` (B, T, V), as in transformers.

Differences from minilm's teaching model are listed in ``xlnet.py``. Memory: ``mems`` (one (B, M, C)
array per layer, the inputs of that layer on the previous segment) are read and the next ones
returned (the last ``mem_len``, all when None). Not supported: ``attn_type="uni"``, ``bi_data``,
``reuse_len``, ``same_length`` (defaults of every released checkpoint but the pre-training runs).
Transformer-XL's Task 12.3 ``relative_scores`` covers causal distances only; XLNet's are two-sided,
so the shift is written here (``_relative_index``).

Parameter names are transformers' inside ``transformer.`` (``word_embedding``, ``mask_emb`` (1, 1, C),
``layer.N.rel_attn.{q,k,v,o,r}`` (C, H, D), ``r_w_bias r_r_bias r_s_bias`` (H, D), ``seg_embed``
(2, H, D), ``rel_attn.layer_norm``, ``ff.layer_1 ff.layer_2 ff.layer_norm``); ``lm_bias`` is
``lm_loss.bias``.

Letters: B batch, T positions, M memory, K = M + T keys, R = K + T distances, P targets, C d_model,
H heads, D = C / H, V vocabulary.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import Tensor, cat, nn
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import check_token_ids

from .config_checks import check_model_args

__all__ = ["XLNetReleasedConfig", "XLNetReleased", "relative_positions", "IGNORE_INDEX"]

IGNORE_INDEX = -100
ACTIVATIONS = ("gelu_exact", "gelu", "relu")   # minilm's names: "gelu" is the tanh form (HF "gelu_new")
MASKED = 1e30                                  # the released code's additive mask


@dataclass
class XLNetReleasedConfig:
    """The shape of a released XLNet (xlnet-base-cased: V 32000, C 768, 12 layers, 12 heads, 3072)."""

    vocab_size: int = 32000       # V
    n_embd: int = 768             # C  (HF: d_model)
    n_layer: int = 12             # (HF: n_layer)
    n_head: int = 12              # H  (HF: n_head; d_head = C / H)
    n_inner: int = 3072           # feed-forward width (HF: d_inner)
    activation: str = "gelu_exact"   # HF ff_activation "gelu" = exact erf form
    layer_norm_eps: float = 1e-12
    clamp_len: int = -1           # distances beyond ±clamp_len share one encoding; −1: none
    mem_len: int | None = None    # how many past states the returned mems keep; None: all
    dropout: float = 0.0          # embeddings, attention probabilities, sublayer outputs (XLNet: 0.1)
    initializer_range: float = 0.02

    def __post_init__(self):
        for name in ("vocab_size", "n_embd", "n_layer", "n_head", "n_inner"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"XLNetReleasedConfig: {name}={value!r}, expected a positive integer")
        if self.n_embd % self.n_head or self.n_embd % 2:
            raise ConfigError(f"XLNetReleasedConfig: n_embd={self.n_embd} must be even and a multiple of "
                              f"n_head={self.n_head}")
        if self.activation not in ACTIVATIONS:
            raise ConfigError(f"XLNetReleasedConfig: activation={self.activation!r}, expected one of {ACTIVATIONS}")
        if self.mem_len is not None and self.mem_len < 0:
            raise ConfigError(f"XLNetReleasedConfig: mem_len={self.mem_len}, expected None or >= 0")
        if not 0.0 <= self.dropout < 1.0 or self.layer_norm_eps <= 0:
            raise ConfigError(f"XLNetReleasedConfig: dropout={self.dropout} (0 <= p < 1) and layer_norm_eps="
                              f"{self.layer_norm_eps} (> 0)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def relative_positions(T: int, K: int, C: int, clamp_len: int = -1) -> np.ndarray:
    """(R, C) float32 sinusoids of the distances K, K−1, …, −T+1 (attn_type "bi"): row m is
    distance K − m; sin in the first C/2 columns, cos in the rest (not interleaved)."""
    inv_freq = (1.0 / np.power(np.float32(10000), np.arange(0, C, 2, dtype=np.float32) / np.float32(C)))
    distance = np.arange(K, -T, -1).astype(np.float32)                  # (R,)
    if clamp_len > 0:
        distance = np.clip(distance, -clamp_len, clamp_len)
    angle = distance[:, None] * inv_freq.astype(np.float32)[None, :]     # (R, C/2)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1).astype(np.float32)


def _relative_index(B: int, H: int, T: int, K: int) -> np.ndarray:
    """(B, H, T, K) column of the (T, R) position scores that key j of query i reads: distance
    M + i − j sits in column T − i + j (the released code's ``rel_shift``, done by a gather)."""
    i, j = np.arange(T)[:, None], np.arange(K)[None, :]
    return np.ascontiguousarray(np.broadcast_to(T - i + j, (B, H, T, K)))


class RelativeAttention(nn.Module):
    """transformers' ``XLNetRelativeAttention``: no-bias projections stored (C, H, D), three score
    biases, the segment table, and the post-LN around the output projection."""

    def __init__(self, config: XLNetReleasedConfig, *, rng):
        super().__init__()
        C, H = config.n_embd, config.n_head
        D, std = C // H, config.initializer_range
        self.n_head, self.d_head = H, D
        for name in ("q", "k", "v", "o", "r"):
            setattr(self, name, nn.Parameter(rng.normal(0.0, std, (C, H, D)), dtype=np.float32))
        for name in ("r_r_bias", "r_s_bias", "r_w_bias"):
            setattr(self, name, nn.Parameter(rng.normal(0.0, std, (H, D)), dtype=np.float32))
        self.seg_embed = nn.Parameter(rng.normal(0.0, std, (2, H, D)), dtype=np.float32)
        self.layer_norm = nn.LayerNorm(C, eps=config.layer_norm_eps)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)

    def project(self, x, name: str):
        """x (B, N, C) @ W (C, H, D) → (B, H, N, D)."""
        B, N, C = x.shape
        W = getattr(self, name).reshape(C, self.n_head * self.d_head)
        return (x @ W).reshape(B, N, self.n_head, self.d_head).transpose(0, 2, 1, 3)

    def core(self, q, k, v, k_r, ctx):
        """Attention of queries q (B, H, T, D) over [mems ∘ h] → (B, T, H·D)."""
        B, H, T, D = q.shape
        r_w, r_r, r_s = (getattr(self, n).reshape(1, H, 1, D) for n in ("r_w_bias", "r_r_bias", "r_s_bias"))
        ac = (q + r_w) @ k.transpose(0, 1, 3, 2)                        # (B, H, T, K) content
        bd = ((q + r_r) @ k_r.transpose(0, 1, 3, 2)).gather(-1, ctx["index"])   # (B, H, T, R) → (B, H, T, K)
        score = ac + bd
        if ctx["seg_diff"] is not None:                                 # (B, 1, T, K) 1 = other segment
            e = (q + r_s) @ self.seg_embed.transpose(1, 2, 0).reshape(1, H, D, 2)  # (B, H, T, 2)
            diff = ctx["seg_diff"]
            score = score + e[..., 0:1] * (1.0 - diff) + e[..., 1:2] * diff
        score = score * (1.0 / math.sqrt(D))
        if ctx["mask"] is not None:                                     # (B, 1, T, K) True = hidden
            score = score.masked_fill(ctx["mask"], -MASKED)
        att = self.drop(F.softmax(score, axis=-1))
        return (att @ v).transpose(0, 2, 1, 3).reshape(B, T, H * D)

    def post(self, x, attn_vec):
        C = x.shape[-1]
        out = attn_vec @ self.o.reshape(C, self.n_head * self.d_head).T  # (B, N, C)
        return self.layer_norm(self.drop(out) + x)


class FeedForward(nn.Module):
    """``XLNetFeedForward``: LN(x + W₂ act(W₁ x + b₁) + b₂)."""

    def __init__(self, config: XLNetReleasedConfig, *, rng):
        super().__init__()
        C, std = config.n_embd, config.initializer_range
        self.layer_norm = nn.LayerNorm(C, eps=config.layer_norm_eps)
        self.layer_1 = nn.Linear(C, config.n_inner, rng=rng, init_std=std)
        self.layer_2 = nn.Linear(config.n_inner, C, rng=rng, init_std=std)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.activation = config.activation

    def forward(self, x):
        y = self.layer_1(x)
        if self.activation == "relu":
            y = F.relu(y)
        else:
            y = F.gelu(y, approximate="none" if self.activation == "gelu_exact" else "tanh")
        return self.layer_norm(self.drop(self.layer_2(self.drop(y))) + x)


class XLNetLayer(nn.Module):
    def __init__(self, config: XLNetReleasedConfig, *, rng):
        super().__init__()
        self.rel_attn = RelativeAttention(config, rng=rng)
        self.ff = FeedForward(config, rng=rng)

    def forward(self, h, g, mem, pos_emb, ctx):
        """(h (B, T, C), g (B, P, C) or None) → the same after attention and feed-forward."""
        a = self.rel_attn
        both = h if mem is None else cat([mem, h], axis=1)              # (B, K, C)
        k, v, k_r = a.project(both, "k"), a.project(both, "v"), a.project(pos_emb, "r")
        h_out = a.post(h, a.core(a.project(h, "q"), k, v, k_r, ctx["h"]))
        g_out = None
        if g is not None:
            B, P, C = g.shape
            tm = ctx["target_mapping"]                                  # (B, P, T) one-hot rows
            q_g = (a.project(g, "q").transpose(0, 2, 1, 3).reshape(B, P, C))   # (B, P, H·D)
            q_at = (tm.transpose(0, 2, 1) @ q_g).reshape(B, -1, a.n_head, a.d_head).transpose(0, 2, 1, 3)
            g_out = a.post(g, tm @ a.core(q_at, k, v, k_r, ctx["g"]))  # rows back to the targets
        return self.ff(h_out), None if g_out is None else self.ff(g_out)


class XLNetReleased(nn.Module):
    """``model(input_ids, attention_mask=None, *, token_type_ids=None, perm_mask=None,
    target_mapping=None, mems=None, labels=None) -> {"logits", "mems", "loss"}``: transformers'
    ``XLNetLMHeadModel`` in minilm's (B, T) layout. ``perm_mask`` (B, T, T) 1/True = may not see;
    ``target_mapping`` (B, P, T) one-hot rows (then the logits are (B, P, V)); ``mems`` a list of
    n_layer arrays (B, M, C); ``labels`` (B, T) or (B, P), −100 = no loss."""

    def __init__(self, config: XLNetReleasedConfig, *, rng: np.random.Generator):
        super().__init__()
        self.config = check_model_args("XLNetReleased", config, XLNetReleasedConfig, rng)
        C, std = config.n_embd, config.initializer_range
        self.word_embedding = nn.Embedding(config.vocab_size, C, rng=rng, init_std=std)
        self.mask_emb = nn.Parameter(rng.normal(0.0, std, (1, 1, C)), dtype=np.float32)
        self.layer = nn.ModuleList([XLNetLayer(config, rng=rng) for _ in range(config.n_layer)])
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.lm_bias = nn.Parameter(np.zeros(config.vocab_size), dtype=np.float32)   # lm_loss.bias

    def forward(self, input_ids, attention_mask=None, *, token_type_ids=None, perm_mask=None,
                target_mapping=None, mems=None, labels=None) -> dict:
        ids = check_token_ids("XLNetReleased", input_ids, self.config.vocab_size).astype(np.int64)
        B, T = ids.shape
        mems = _check_mems(mems, B, self.config)
        M = 0 if mems is None else mems[0].shape[1]
        ctx = _contexts(B, self.config.n_head, T, M, attention_mask, perm_mask, token_type_ids, target_mapping)
        h = self.drop(self.word_embedding(ids))                         # (B, T, C)
        g = None
        if target_mapping is not None:
            P = ctx["target_mapping"].shape[1]
            g = self.drop(self.mask_emb.reshape(1, 1, -1) * np.ones((B, P, 1), dtype=np.float32))   # (B, P, C)
        pos_emb = self.drop(Tensor(relative_positions(T, M + T, self.config.n_embd, self.config.clamp_len)[None]))
        new_mems = []
        for n, layer in enumerate(self.layer):
            new_mems.append(self._cache(h, None if mems is None else mems[n]))
            h, g = layer(h, g, None if mems is None else mems[n], pos_emb, ctx)
        out = self.drop(g if g is not None else h)                      # (B, P or T, C)
        logits = out @ self.word_embedding.weight.T + self.lm_bias      # (B, P or T, V)
        loss = None
        if labels is not None:
            labels = np.asarray(getattr(labels, "data", labels))
            if labels.shape != logits.shape[:2]:
                raise ShapeError(f"XLNetReleased: labels of shape {labels.shape}, expected {logits.shape[:2]}")
            loss = F.cross_entropy(logits, labels.astype(np.int64), ignore_index=IGNORE_INDEX)
        return {"logits": logits, "mems": new_mems, "loss": loss}

    def _cache(self, h, mem) -> Tensor:
        """The memory for the next segment: [mem ∘ h], its last mem_len steps, no gradient."""
        both = h.data if mem is None else np.concatenate([mem.data, h.data], axis=1)
        L = self.config.mem_len
        return Tensor(both if not L else both[:, -L:])

    def extra_repr(self):
        c = self.config
        return f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, vocab_size={c.vocab_size}"


def _check_mems(mems, B: int, config: XLNetReleasedConfig):
    if mems is None:
        return None
    mems = [m if isinstance(m, Tensor) else Tensor(np.asarray(m, dtype=np.float32)) for m in mems]
    shapes = {m.shape for m in mems}
    if len(mems) != config.n_layer or len(shapes) != 1 or next(iter(shapes))[::2] != (B, config.n_embd):
        raise ShapeError(f"XLNetReleased: mems of shapes {sorted(shapes)} for {len(mems)} layers; expected "
                         f"{config.n_layer} arrays (B={B}, M, C={config.n_embd})")
    return mems


def _as_mask(op: str, x, shape: tuple, name: str) -> np.ndarray:
    a = np.asarray(getattr(x, "data", x))
    if a.shape != shape:
        raise ShapeError(f"{op}: {name} of shape {a.shape}, expected {shape}")
    return a


def _contexts(B, H, T, M, attention_mask, perm_mask, token_type_ids, target_mapping) -> dict:
    """The masks of both streams (B, 1, T, K) True = hidden, the segment differences (B, 1, T, K)
    and the shift index, as transformers' ``XLNetModel.forward`` builds them (mems never hidden)."""
    op, K = "XLNetReleased", M + T
    hidden = np.zeros((B, T, K), dtype=bool)
    given = attention_mask is not None or perm_mask is not None
    if attention_mask is not None:
        hidden[:, :, M:] |= _as_mask(op, attention_mask, (B, T), "attention_mask")[:, None, :] == 0
    if perm_mask is not None:
        hidden[:, :, M:] |= _as_mask(op, perm_mask, (B, T, T), "perm_mask") > 0
    content = hidden.copy()
    content[:, np.arange(T), M + np.arange(T)] = False                  # a token sees itself
    seg = None
    if token_type_ids is not None:
        tt = _as_mask(op, token_type_ids, (B, T), "token_type_ids")
        keys = np.concatenate([np.zeros((B, M), dtype=tt.dtype), tt], axis=1)   # mems: segment 0
        seg = (tt[:, :, None] != keys[:, None, :]).astype(np.float32)[:, None]
    index = _relative_index(B, H, T, K)
    ctx = {"h": {"mask": content[:, None] if given else None, "seg_diff": seg, "index": index},
           "g": {"mask": hidden[:, None] if given else None, "seg_diff": seg, "index": index},
           "target_mapping": None}
    if target_mapping is not None:
        tm = np.asarray(getattr(target_mapping, "data", target_mapping), dtype=np.float32)
        if tm.ndim != 3 or tm.shape[0] != B or tm.shape[2] != T:
            raise ShapeError(f"{op}: target_mapping of shape {tm.shape}, expected ({B}, P, {T})")
        ctx["target_mapping"] = Tensor(tm)
    return ctx
