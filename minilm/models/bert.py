"""BERT: a bidirectional Transformer encoder pre-trained by masked LM and next-sentence prediction.

Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers for Language
Understanding", §3 and Figure 2; google-research/bert ``modeling.py`` and ``run_pretraining.py``.

    x₀   = LayerNorm(E_tok[ids] + E_pos[t] + E_seg[segment])      the input embedding (Fig. 2)
    xₗ   = Block_post-LN(xₗ₋₁, padding mask)                        l = 1 … n_layer
    pooled = tanh(W_p · x_L[CLS] + b_p)                             the pooler (NSP only)

    MLM:  h' = LayerNorm(GELU(W·x_L + b));  logits = h'·E_tokᵀ + b_out   (tied decoder, b_out = 0 at init)
    NSP:  logits = pooled·W_nspᵀ + b          2 classes, label 1 = NotNext, 0 = IsNext
    L     = L_MLM + L_NSP                       either term may be left out (RoBERTa: MLM only)

Post-LN (google-research/bert, ``modeling.py``): each block is x = LN(x + Attn(x));
x = LN(x + FFN(x)), unlike GPT-2's pre-LN.
Padding: the attention mask hides padded *keys* (a masked score becomes a large negative, −10000 in
BERT), so padding changes nothing at the real positions.

Parameter names follow Hugging Face's ``BertModel`` where the blocks allow it, so a table maps a
checkpoint onto this model (left: minilm, right: Hugging Face, N = layer index)::

    embeddings.word_embeddings.weight          = embeddings.word_embeddings.weight
    embeddings.position_embeddings.weight      = embeddings.position_embeddings.weight
    embeddings.token_type_embeddings.weight    = embeddings.token_type_embeddings.weight
    embeddings.LayerNorm.{weight,bias}         = embeddings.LayerNorm.{weight,bias}
    encoder.layer.N.attn.{q,k,v}_proj.*        = encoder.layer.N.attention.self.{query,key,value}.*
    encoder.layer.N.attn.out_proj.*            = encoder.layer.N.attention.output.dense.*
    encoder.layer.N.ln1.*                      = encoder.layer.N.attention.output.LayerNorm.*
    encoder.layer.N.mlp.fc1.*                  = encoder.layer.N.intermediate.dense.*
    encoder.layer.N.mlp.fc2.*                  = encoder.layer.N.output.dense.*
    encoder.layer.N.ln2.*                      = encoder.layer.N.output.LayerNorm.*
    pooler.dense.*                             = pooler.dense.*
    (BertForPreTraining adds bert. in front, and the heads below under cls.)
    cls.predictions.transform.dense.*          = cls.predictions.transform.dense.*
    cls.predictions.transform.LayerNorm.*      = cls.predictions.transform.LayerNorm.*
    cls.predictions.decoder.weight             = cls.predictions.decoder.weight (tied to the word embeddings)
    cls.predictions.bias                       = cls.predictions.bias
    cls.seq_relationship.*                     = cls.seq_relationship.*

The heads (MLM, NSP, sequence classification) are in ``bert_heads.py``.

Letters: B batch, T time, C channels (n_embd), H heads, V vocabulary, L layers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd import Tensor, nn
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import Block, LearnedPositionEmbedding, SegmentEmbedding, padding_mask
from minilm.blocks.embeddings import embed_inputs
from minilm.blocks.feedforward import ACTIVATIONS

__all__ = ["BertConfig", "BertEmbeddings", "BertEncoder", "BertPooler", "BertModel"]  # heads: bert_heads.py


@dataclass
class BertConfig:
    vocab_size: int                       # V: the WordPiece vocabulary (BERT-base: 30522)
    max_position_embeddings: int = 128    # longest input in tokens; learned positions (BERT: 512)
    n_layer: int = 2                      # Transformer blocks (BERT-base: 12, BERT-large: 24)
    n_head: int = 2                       # attention heads per block (BERT-base: 12)
    n_embd: int = 64                      # hidden size C (BERT-base: 768)
    n_inner: int | None = None            # feed-forward width; None = 4·n_embd (BERT-base: 3072)
    type_vocab_size: int = 2              # segments: 0 = sentence A, 1 = sentence B
    dropout: float = 0.1                  # on embeddings, attention weights and sublayer outputs (BERT: 0.1)
    layer_norm_eps: float = 1e-12         # BERT's LayerNorm ε (GPT-2 uses 1e-5)
    initializer_range: float = 0.02       # σ of the N(0, σ²) init of every weight matrix and table
    activation: str = "gelu"              # feed-forward: "gelu" (tanh form), "gelu_exact" (erf: HF's "gelu"), "relu"
    head_activation: str | None = None    # the MLM head's dense → act → LayerNorm; None = activation (RoBERTa
                                          # checkpoints: "gelu_exact", transformers' RobertaLMHead whatever hidden_act)
    position_offset: int = 0              # RoBERTa: padding_idx + 1 = 2; real tokens read rows offset, offset+1, …
    pad_token_id: int = 0                 # with position_offset > 0 a pad token reads row pad_token_id (RoBERTa: 1)

    def __post_init__(self):
        for name in ("vocab_size", "max_position_embeddings", "n_layer", "n_head", "n_embd", "type_vocab_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"BertConfig: {name}={value!r}, expected a positive integer")
        if self.position_offset < 0 or (self.position_offset and not 0 <= self.pad_token_id < self.position_offset):
            raise ConfigError(f"BertConfig: position_offset={self.position_offset}, pad_token_id={self.pad_token_id}: "
                              "expected 0, or an offset above the pad id (RoBERTa: 2 and 1)")
        if self.n_embd % self.n_head:
            raise ConfigError(f"BertConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.n_inner is not None and self.n_inner < 1:
            raise ConfigError(f"BertConfig: n_inner={self.n_inner!r}, expected a positive integer or None")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"BertConfig: dropout={self.dropout}, expected 0 <= dropout < 1")
        if self.head_activation is not None and self.head_activation not in ACTIVATIONS:
            raise ConfigError(f"BertConfig: head_activation={self.head_activation!r}, expected None (= activation) "
                              f"or one of {', '.join(map(repr, ACTIVATIONS))}")
        if self.layer_norm_eps <= 0 or self.initializer_range <= 0:
            raise ConfigError(f"BertConfig: layer_norm_eps={self.layer_norm_eps} and initializer_range="
                              f"{self.initializer_range} must be > 0")


class BertEmbeddings(nn.Module):
    """x₀ = Dropout(LayerNorm(word[ids] + position[t] + token_type[segment]))   (B, T, C)."""

    def __init__(self, config: BertConfig, *, rng):
        super().__init__()
        C, std = config.n_embd, config.initializer_range
        self.word_embeddings = nn.Embedding(config.vocab_size, C, rng=rng, init_std=std)
        self.position_embeddings = LearnedPositionEmbedding(config.max_position_embeddings, C, rng=rng, init_std=std)
        self.token_type_embeddings = SegmentEmbedding(config.type_vocab_size, C, rng=rng, init_std=std)
        self.LayerNorm = nn.LayerNorm(C, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.config = config

    def forward(self, input_ids: np.ndarray, segment_ids: np.ndarray) -> Tensor:
        x = embed_inputs(input_ids, self.word_embeddings.weight, self.position_embeddings.weight,
                         segment_ids, self.token_type_embeddings.weight)  # (B, T, C)
        offset = self.config.position_offset
        if offset:
            # RoBERTa (fairseq ``make_positions``): the t-th real token reads row offset + t, a pad
            # token row pad_token_id; replace the row t that embed_inputs added by that row
            ids = np.asarray(input_ids)
            real = ids != self.config.pad_token_id
            positions = np.where(real, np.cumsum(real, axis=1) - 1 + offset, self.config.pad_token_id)  # (B, T)
            table = self.position_embeddings.weight
            x = x - table[np.arange(ids.shape[1])] + table[positions]            # (B, T, C)
        return self.dropout(self.LayerNorm(x))


class BertEncoder(nn.Module):
    """``layer``: n_layer post-LN Blocks (GELU feed-forward, BERT's ε)."""

    def __init__(self, config: BertConfig, *, rng):
        super().__init__()
        self.layer = nn.ModuleList([
            Block(config.n_embd, config.n_head, config.n_inner, rng=rng, norm="post", activation=config.activation,
                  dropout=config.dropout, eps=config.layer_norm_eps, init_std=config.initializer_range)
            for _ in range(config.n_layer)])

    def forward(self, x: Tensor, mask=None) -> list[Tensor]:
        """Returns every hidden state: [x₀ (the input), x₁, …, x_L], each (B, T, C)."""
        states = [x]
        for block in self.layer:
            x = block(x, mask=mask)
            states.append(x)
        return states


class BertPooler(nn.Module):
    """pooled = tanh(W_p · h[CLS] + b_p), (B, T, C) → (B, C). Trained only through NSP."""

    def __init__(self, config: BertConfig, *, rng):
        super().__init__()
        self.dense = nn.Linear(config.n_embd, config.n_embd, rng=rng, init_std=config.initializer_range)

    def forward(self, hidden: Tensor) -> Tensor:
        return self.dense(hidden[:, 0]).tanh()  # (B, C)


class BertModel(nn.Module):
    """The BERT encoder: embeddings → n_layer post-LN blocks → pooler.

    ``forward(input_ids, segment_ids=None, attention_mask=None, output_hidden_states=False)``:

    * ``input_ids`` (B, T) ints in [0, vocab_size), T ≤ max_position_embeddings;
    * ``segment_ids`` (B, T) ints in [0, type_vocab_size); None = all 0 (one sentence);
    * ``attention_mask`` (B, T), 1/True on real tokens and 0/False on padding; None = no padding.

    Returns ``{"last_hidden_state": (B, T, C), "pooler_output": (B, C)}`` and, when asked,
    ``"hidden_states"``: the n_layer + 1 states [embeddings, layer 1, …, layer L].
    """

    def __init__(self, config: BertConfig, *, rng):
        super().__init__()
        nn.check_rng("BertModel", rng)
        self.config = config
        self.embeddings = BertEmbeddings(config, rng=rng)
        self.encoder = BertEncoder(config, rng=rng)
        self.pooler = BertPooler(config, rng=rng)

    def check_inputs(self, input_ids, segment_ids=None, attention_mask=None):
        """The inputs as int64 / bool arrays, with an error naming the problem if they do not fit."""
        cfg = self.config
        ids = np.asarray(getattr(input_ids, "data", input_ids))
        if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
            raise ShapeError(f"BertModel: input_ids of shape {ids.shape} and dtype {ids.dtype}, expected "
                             "(B, T) integers" + (" — add a batch axis with ids[None]" if ids.ndim == 1 else ""))
        B, T = ids.shape
        if T + cfg.position_offset > cfg.max_position_embeddings:
            off = f" - position_offset {cfg.position_offset}" if cfg.position_offset else ""
            raise ShapeError(f"BertModel: a sequence of {T} tokens is longer than max_position_embeddings="
                             f"{cfg.max_position_embeddings}{off}: truncate it or build a model with more positions")
        if ids.size and (ids.min() < 0 or ids.max() >= cfg.vocab_size):
            bad = ids[(ids < 0) | (ids >= cfg.vocab_size)].flat[0]
            raise ShapeError(f"BertModel: input id {int(bad)} is outside the vocabulary [0, {cfg.vocab_size})")
        if segment_ids is None:
            seg = np.zeros((B, T), dtype=np.int64)
        else:
            seg = np.asarray(getattr(segment_ids, "data", segment_ids))
            if seg.shape != (B, T) or not np.issubdtype(seg.dtype, np.integer):
                raise ShapeError(f"BertModel: segment_ids of shape {seg.shape} and dtype {seg.dtype}, "
                                 f"expected integers of the input_ids' shape {(B, T)}")
            if seg.size and (seg.min() < 0 or seg.max() >= cfg.type_vocab_size):
                bad = seg[(seg < 0) | (seg >= cfg.type_vocab_size)].flat[0]
                raise ShapeError(f"BertModel: segment id {int(bad)} is outside [0, {cfg.type_vocab_size}) "
                                 "(0 = sentence A, 1 = sentence B)")
        mask = None
        if attention_mask is not None:
            am = np.asarray(getattr(attention_mask, "data", attention_mask))
            if am.shape != (B, T):
                raise ShapeError(f"BertModel: attention_mask of shape {am.shape}, expected {(B, T)} "
                                 "(1 on real tokens, 0 on padding)")
            mask = padding_mask(am)  # (B, 1, 1, T): no query looks at a padded key
        return ids.astype(np.int64), seg.astype(np.int64), mask

    def forward(self, input_ids, segment_ids=None, attention_mask=None, output_hidden_states=False) -> dict:
        ids, seg, mask = self.check_inputs(input_ids, segment_ids, attention_mask)
        x = self.embeddings(ids, seg)                    # (B, T, C)
        states = self.encoder(x, mask=mask)              # n_layer + 1 × (B, T, C)
        h = states[-1]
        out = {"last_hidden_state": h, "pooler_output": self.pooler(h)}  # (B, T, C), (B, C)
        if output_hidden_states:
            out["hidden_states"] = states
        return out
