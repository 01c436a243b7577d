"""XLNet: a permutation language model with two-stream attention (Yang et al. 2019, §2.2–2.3).

    objective   max_θ  E_z [ Σ_{t > c} log p_θ(x_{z_t} | x_{z<t}) ]      z a random factorisation order,
                                                                      only the last |z| − c predicted
    content     h⁰_i = E[x_i] + P[i]                                 word + position
    query       g⁰_p = w_mask + P[pos(p)]                            learned mask_emb + the position it predicts
    layer l     (hˡ, gˡ) = two_stream_layer(Blockₗ, hˡ⁻¹, gˡ⁻¹, content_mask, query_mask)     Task 8.2
                    hˡ ← Attn(Q = h, KV = h_{z≤t});   gˡ ← Attn(Q = g, KV = h_{z<t});   same weights
    logits      LN_f(g^L_p) · Eᵀ + b                                 tied embedding + an output bias
    loss        mean over the targets of −log softmax(logits)[x]     (labels −100 elsewhere)

The tokens stay in place; only the attention masks change with z. The masks (Task 8.1,
``minilm.corruption.xlnet_inputs``) use XLNet's convention, **True = may NOT attend**: the query
stream uses ``perm_mask`` (a target never sees itself or a later target), the content stream
``content_mask`` = ``perm_mask`` with the diagonal cleared (a token sees itself).

What this model keeps from XLNet (zihangdai/xlnet ``modeling.py``): two streams through
the same layers (attention, LayerNorms and GELU feed-forward shared), K and V from the content
stream for both, ``mask_emb`` as the query stream's start, one query row per target via
``target_mapping`` (or one per position when it is None, HF's layout), the tied output embedding
with a bias, the loss averaged over the targets.

**Simplification: absolute positions.** XLNet scores relative positions (Transformer-XL's
sinusoidal relative encoding with the r_w/r_r biases) and a relative segment term; here a learned
absolute position table is added to BOTH streams' inputs. The lesson survives intact: the query
stream gets P[pos] — it knows *where* it predicts — and never the token there, because the only
path to x_i is the content h_i, which ``perm_mask`` hides from g_i. Relative scores are Task 12.3
(Transformer-XL). Also left out: the memory of the previous segment, ``bi_data``, segments.

**Simplification: pre-LN.** XLNet's layers are post-LN (like BERT's); these are pre-LN with a final
``ln_f`` (like GPT-2's). On the synthetic corpus at laptop size (C = 64, 2 layers) the post-LN model
stays at the unigram loss for more than 1,200 steps, while the pre-LN one leaves it after ~400 and
reaches ~45% target accuracy by 1,200 (measured while writing this; same data, lr 2e-3). The two
streams, their masks and their shared weights do not depend on where the norms sit.

**Where this model departs from the released XLNet** (zihangdai/xlnet ``modeling.py``, transformers'
``XLNetLMHeadModel``; the faithful one, which loads real checkpoints, is ``minilm/models/xlnet_released.py``):

=====================  ==========================================  =============================================
                       this teaching model                         released XLNet (``xlnet_released.py``)
=====================  ==========================================  =============================================
positions              learned absolute P, added to h⁰ and g⁰      none in the inputs: relative sinusoidal
                                                                   scores (q + r_r)·W_r R_{M+i−j}, ``clamp_len``
query stream start     g⁰ = mask_emb + P[pos]                      g⁰ = mask_emb (where it predicts: through R)
content score          q·k (one term)                              (q + r_w)·k, a learned bias per head
segments               none                                        (q + r_s)·seg_embed[same / other segment],
                                                                   from ``token_type_ids``
layer norm             pre-LN, a final ``ln_f``                    post-LN, no final norm
projections            q, k, v, out with biases (``Block``)        q, k, v, o, r without bias, (C, H, D) each
feed-forward GELU      tanh form                                   exact erf form (``ff_activation="gelu"``)
no target_mapping      one query row per position, logits from g   no query stream: logits from h (B, T, V)
a row that sees none   zeros (``scaled_masked_softmax``)           score − 1e30: uniform over every key
memory                 none                                        ``mems`` of the previous segment
=====================  ==========================================  =============================================

Parameter names follow Hugging Face's ``XLNetLMHeadModel`` where they can: ``word_embedding``,
``mask_emb`` (HF stores it as (1, 1, C); here (C,)), ``layer.N`` (a pre-LN ``minilm.blocks.Block``:
``ln1``, ``attn.{q,k,v,out}_proj``, ``ln2``, ``mlp.fc1/fc2``), ``lm_bias`` (HF's
``lm_loss.bias``), plus ``position_embedding`` and ``ln_f`` (ours, see above). There is no
``lm_loss.weight``: the output layer *is* ``word_embedding``.

Letters: B batch, T positions, P query rows (targets), C channels (n_embd), H heads, V vocabulary.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import nn, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import Block, LearnedPositionEmbedding, check_token_ids

from .config_checks import check_model_args

__all__ = ["XLNetConfig", "XLNet", "query_rows", "IGNORE_INDEX"]

# Task 8.2: solutions/task08_xlnet/two_stream.py
two_stream_layer = tasks.bind("task08_xlnet.two_stream", "two_stream_layer")

IGNORE_INDEX = -100  # a label that adds nothing to the loss (PyTorch / Hugging Face)


@dataclass
class XLNetConfig:
    """The shape of an XLNet. Defaults: a laptop-sized model (XLNet-base is C=768, 12 layers)."""

    vocab_size: int = 256                 # V
    max_position_embeddings: int = 64     # longest input (learned absolute positions; XLNet: relative)
    n_layer: int = 2                      # two-stream layers (XLNet-base: 12)
    n_head: int = 4                       # attention heads (XLNet-base: 12)
    n_embd: int = 64                      # C, d_model (XLNet-base: 768)
    n_inner: int | None = None            # feed-forward width; None = 4·C (XLNet-base: 3072)
    dropout: float = 0.0                  # on both streams' inputs, attention and sublayers (XLNet: 0.1)
    layer_norm_eps: float = 1e-12         # XLNet's LayerNorm ε
    initializer_range: float = 0.02       # σ of the N(0, σ²) init, mask_emb included (XLNet: 0.02)

    def __post_init__(self):
        for name in ("vocab_size", "max_position_embeddings", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"XLNetConfig: {name}={value!r}, expected a positive integer")
        if self.n_embd % self.n_head:
            raise ConfigError(f"XLNetConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.n_inner is not None and self.n_inner < 1:
            raise ConfigError(f"XLNetConfig: n_inner={self.n_inner!r}, expected a positive integer or None")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"XLNetConfig: dropout={self.dropout}, expected 0 <= dropout < 1")
        if self.layer_norm_eps <= 0 or self.initializer_range <= 0:
            raise ConfigError(f"XLNetConfig: layer_norm_eps={self.layer_norm_eps} and initializer_range="
                              f"{self.initializer_range} must be > 0")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _bool_masks(op: str, mask, B: int, T: int, name: str) -> np.ndarray:
    """``mask`` (T, T) or (B, T, T) as a new (B, T, T) bool array."""
    m = np.asarray(getattr(mask, "data", mask))
    if m.dtype != bool:
        raise ShapeError(f"{op}: {name} has dtype {m.dtype}: expected bool (True = may NOT attend, "
                         "XLNet's convention)")
    if m.shape == (T, T):
        m = np.broadcast_to(m, (B, T, T))
    if m.shape != (B, T, T):
        raise ShapeError(f"{op}: {name} has shape {m.shape}: expected ({B}, {T}, {T}) or ({T}, {T})")
    return np.array(m, dtype=bool)


def query_rows(perm_mask: np.ndarray, target_mapping=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the query stream's rows sit: ``(positions (B, P), query_mask (B, P, T), real (B, P))``.

    ``target_mapping`` (B, P, T) has a one-hot row per target (XLNet's layout; zero rows pad up to
    ``num_predict``). Row p predicts position ``positions[b, p]`` and sees what that position's
    row of ``perm_mask`` allows. ``None``: one row per position (P = T, HF's identity layout).
    """
    B, T, _ = perm_mask.shape
    if target_mapping is None:
        positions = np.broadcast_to(np.arange(T), (B, T)).copy()
        return positions, perm_mask.copy(), np.ones((B, T), dtype=bool)
    tm = np.asarray(getattr(target_mapping, "data", target_mapping))
    if tm.ndim != 3 or tm.shape[0] != B or tm.shape[2] != T:
        raise ShapeError(f"XLNet: target_mapping has shape {tm.shape}: expected ({B}, P, {T}), one-hot rows")
    sums = tm.sum(axis=-1)
    if not (np.isin(tm, (0, 1)).all() and np.isin(sums, (0, 1)).all()):
        raise ShapeError("XLNet: target_mapping rows must be one-hot (a target) or all zero (padding)")
    positions = tm.argmax(axis=-1).astype(np.int64)                    # (B, P); padding rows → 0
    query_mask = np.take_along_axis(perm_mask, positions[:, :, None], axis=1)  # (B, P, T)
    return positions, query_mask, sums == 1


class XLNet(nn.Module):
    """``model(input_ids, perm_mask, target_mapping=None, labels=None, attention_mask=None,
    content_mask=None) -> {"loss", "logits"}``.

    * ``input_ids`` (B, T): the real tokens (nothing is replaced by [MASK]: perm_mask hides them);
    * ``perm_mask`` (B, T, T) or (T, T) bool, True = row i may NOT attend to j (query stream);
    * ``content_mask``: the content stream's mask; None = ``perm_mask`` with the diagonal cleared;
    * ``target_mapping`` (B, P, T) one-hot rows (``xlnet_inputs``'s layout): the query stream has
      one row per target and ``logits`` are (B, P, V). None: one row per position, (B, T, V);
    * ``labels``: (B, P) per query row, or (B, T) per position (picked through ``target_mapping``),
      −100 where nothing is predicted; the loss is the mean over the rest (None: no loss);
    * ``attention_mask`` (B, T) 1 = token, 0 = padding: no stream attends to a pad key.
    """

    def __init__(self, config: XLNetConfig, *, rng: np.random.Generator):
        super().__init__()
        self.config = check_model_args("XLNet", config, XLNetConfig, rng)
        C, std = config.n_embd, config.initializer_range
        self.word_embedding = nn.Embedding(config.vocab_size, C, rng=rng, init_std=std)
        self.position_embedding = LearnedPositionEmbedding(config.max_position_embeddings, C, rng=rng,
                                                           init_std=std)
        self.mask_emb = nn.Parameter(rng.normal(0.0, std, size=C), dtype=np.float32)  # (C,) g's start
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.layer = nn.ModuleList([
            Block(C, config.n_head, config.n_inner, rng=rng, norm="pre", activation="gelu",
                  dropout=config.dropout, eps=config.layer_norm_eps, init_std=std)
            for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(C, eps=config.layer_norm_eps)  # pre-LN needs a final norm (GPT-2)
        self.lm_bias = nn.Parameter(np.zeros(config.vocab_size), dtype=np.float32)  # (V,) zero at init

    def masks(self, input_ids, perm_mask, content_mask=None, attention_mask=None):
        """Checked ``(ids (B, T), perm_mask (B, T, T), content_mask (B, T, T))``, padding keys hidden."""
        op = "XLNet"
        ids = check_token_ids(op, input_ids, self.config.vocab_size).astype(np.int64)  # (B, T)
        B, T = ids.shape
        if T > self.config.max_position_embeddings:
            raise ShapeError(f"{op}: a sequence of {T} tokens is longer than max_position_embeddings="
                             f"{self.config.max_position_embeddings}")
        perm = _bool_masks(op, perm_mask, B, T, "perm_mask")
        if content_mask is None:
            content = perm & ~np.eye(T, dtype=bool)                     # a token sees itself
        else:
            content = _bool_masks(op, content_mask, B, T, "content_mask")
        if attention_mask is not None:
            am = np.asarray(getattr(attention_mask, "data", attention_mask))
            if am.shape != (B, T):
                raise ShapeError(f"{op}: attention_mask has shape {am.shape}: expected ({B}, {T})")
            pad_key = ~am.astype(bool)[:, None, :]                      # (B, 1, T)
            perm, content = perm | pad_key, content | pad_key
        return ids, perm, content

    def forward(self, input_ids, perm_mask, target_mapping=None, labels=None, attention_mask=None,
                content_mask=None) -> dict:
        ids, perm, content = self.masks(input_ids, perm_mask, content_mask, attention_mask)
        B, T = ids.shape
        positions, query_mask, real = query_rows(perm, target_mapping)   # (B, P), (B, P, T), (B, P)
        pos = self.position_embedding
        # 1. the two streams' inputs: h knows the token and its position, g only the position
        h = self.drop(self.word_embedding(ids) + pos(T))                # (B, T, C)
        g = self.drop(self.mask_emb + pos(positions))                   # (B, P, C)
        # 2. the layers: both streams, the same weights, K and V from h (Task 8.2)
        for block in self.layer:
            h, g = two_stream_layer(block, h, g, content, query_mask)
        # 3. the tied output layer on the final query stream
        logits = self.ln_f(g) @ self.word_embedding.weight.T + self.lm_bias  # (B, P, V)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits, self._row_labels(labels, positions, real,
                                                   target_mapping is not None, T),
                                   ignore_index=IGNORE_INDEX)
        return {"loss": loss, "logits": logits}

    def _row_labels(self, labels, positions, real, mapped: bool, T: int) -> np.ndarray:
        """``labels`` as (B, P), one per query row; −100 on padding rows. (B, P) labels are read per
        row; with a ``target_mapping``, (B, T) labels are read at each row's position."""
        labels = np.asarray(getattr(labels, "data", labels))
        if not np.issubdtype(labels.dtype, np.integer):
            raise ShapeError(f"XLNet: labels have dtype {labels.dtype}: expected integer token ids (−100 = none)")
        B, P = positions.shape
        if labels.shape != (B, P) and mapped and labels.shape == (B, T):
            labels = np.take_along_axis(labels, positions, axis=1)      # (B, T) → (B, P)
        if labels.shape != (B, P):
            raise ShapeError(f"XLNet: labels have shape {labels.shape}: expected ({B}, {P}) per query row"
                             + (f" or ({B}, {T}) per position" if mapped else ""))
        return np.where(real, labels, IGNORE_INDEX).astype(np.int64)

    def extra_repr(self):
        c = self.config
        return f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, vocab_size={c.vocab_size}"
