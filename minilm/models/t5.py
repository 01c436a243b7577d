"""T5: the encoder–decoder of Raffel et al. (2020), "Exploring the Limits of Transfer Learning with
a Unified Text-to-Text Transformer" (§2.1, §3.2).

    encoder   h = wte[src];  hₗ = Block_pre(hₗ₋₁, M_enc, bias_enc);  enc = RMSNorm(h_L)
    decoder   g = wte[dec];  gₗ = Block_pre(gₗ₋₁, M_dec, bias_dec, cross: enc, M_cross);  g = RMSNorm(g_L)
    logits    = (g · C^-½) · wteᵀ                                     tied input/output embedding
    loss      = CE(logits, labels), -100 and pad ignored               (teacher forcing)

The masks are Task 9.2's ``encoder_decoder_masks`` (fully visible encoder, causal decoder,
cross-attention to every real source token). T5's own choices, each kept here:

* **Relative position bias instead of position embeddings.** Every attention score gets
  ``table[bucket(key − query), head]`` added (Task 3.3's buckets: 32 of them, max distance 128;
  bidirectional in the encoder, unidirectional in the decoder). There is **one** learned
  (32, H) table per stack, computed once per forward and passed to every layer (HF computes it in
  layer 0 and hands it on). Cross-attention has no position bias.
* **No 1/√d** in the attention scores (``scale=False``): the initialisation absorbs it — the query
  projection is drawn with σ = (C·d)^-½ instead of C^-½ (HF ``T5PreTrainedModel._init_weights``,
  reproduced in :meth:`T5._init_t5_weights`).
* **Pre-LN blocks with RMSNorm** (no mean subtraction, no bias; ``seq2seq.RMSNorm``), a final
  RMSNorm after each stack, **ReLU** feed-forward of width 4·C, and **no biases** anywhere.
* **Tied embeddings, scaled**: the decoder output is multiplied by C^-½ before the product with
  ``wteᵀ`` (Mesh TF and HF T5 v1.0, where ``tie_word_embeddings=True``); the embedding is
  initialised N(0, 1), so logits start with unit scale. (T5 v1.1 / FLAN-T5 unties them instead,
  with no C^-½; its feed-forward is gated GELU and its heads may be narrower than C/H: the config's
  ``tie_word_embeddings``, ``ffn`` and ``d_kv``, which ``minilm.pretrained`` sets from a checkpoint.)
* The decoder starts from pad (id 0 in T5's vocabulary); ``shift_right`` builds its input.

Not reproduced: T5's z-loss (1e-4·log²Z; tensorflow/mesh, mesh_tensorflow/transformer/transformer.py) and Adafactor; minilm trains with AdamW.

Letters: B batch, S source length, T target length, C channels (n_embd), H heads, d = C/H, V vocabulary.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from autograd import nn, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import Block, MultiHeadAttention, RelativePositionBias, check_token_ids
from minilm.blocks.feedforward import GatedFeedForward

from .seq2seq import RMSNorm, default_attention_mask, generate, seq2seq_loss, shift_right

FFNS = ("relu", "gated-gelu")

# Task 9.2: solutions/task09_seq2seq/architectures.py
encoder_decoder_masks = tasks.bind("task09_seq2seq.architectures", "encoder_decoder_masks")


@dataclass
class T5Config:
    """The shape of a T5. Defaults: a laptop-sized model (T5-small is C=512, 6+6 layers, 8 heads)."""

    vocab_size: int = 256         # V (T5: 32100, the top 100 ids are the sentinels)
    n_embd: int = 64              # C, d_model
    n_head: int = 4               # H (d = C / H)
    n_layer: int = 2              # encoder blocks
    n_decoder_layer: int | None = None  # decoder blocks; None = n_layer
    n_inner: int | None = None    # feed-forward width d_ff; None = 4·C (T5-small: 2048 = 4·512)
    num_buckets: int = 32         # relative position buckets (Raffel et al. 2020, §2.1)
    max_distance: int = 128       # distances ≥ this share the last bucket
    dropout: float = 0.0          # T5 pre-training: 0.1
    eps: float = 1e-6             # RMSNorm ε (T5)
    pad_id: int = 0               # padding; also the decoder's start token (T5)
    eos_id: int = 1               # </s> (T5: 1); ends every target
    decoder_start_id: int | None = None  # None = pad_id
    seed: int = 0                 # the init seed when T5(config) gets no rng
    ffn: str = "relu"             # feed-forward: "relu" (v1.0) or "gated-gelu" (v1.1, FLAN-T5: GELU(x W₀) ⊙ x W₁)
    d_kv: int | None = None       # width of one head; None = C / H (flan-t5-small: C = 512, H = 6, d_kv = 64)
    tie_word_embeddings: bool = True  # v1.0: logits = (g·C^-½)·wteᵀ; False (v1.1): an own lm_head, no C^-½

    def __post_init__(self):
        for name in ("vocab_size", "n_embd", "n_head", "n_layer", "num_buckets", "max_distance"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ConfigError(f"T5Config: {name}={value!r} must be a positive integer")
        if self.d_kv is None and self.n_embd % self.n_head:
            raise ConfigError(f"T5Config: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.d_kv is not None and (isinstance(self.d_kv, bool) or self.d_kv < 1):
            raise ConfigError(f"T5Config: d_kv={self.d_kv!r} must be a positive integer or None")
        if self.ffn not in FFNS:
            raise ConfigError(f"T5Config: ffn={self.ffn!r}, expected one of {FFNS}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"T5Config: dropout={self.dropout} must be in [0, 1)")
        for name in ("pad_id", "eos_id", "decoder_start_id"):
            value = getattr(self, name)
            if value is not None and not 0 <= value < self.vocab_size:
                raise ConfigError(f"T5Config: {name}={value} is outside [0, {self.vocab_size})")

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head if self.d_kv is None else self.d_kv

    @property
    def start_id(self) -> int:
        return self.pad_id if self.decoder_start_id is None else self.decoder_start_id

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class T5Stack(nn.Module):
    """The encoder (``decoder=False``) or the decoder (``decoder=True``, with cross-attention).

    ``relative_bias`` is the stack's single RelativePositionBias; ``blocks`` are pre-LN Blocks whose
    three layer norms are RMSNorms; ``ln_f`` the final RMSNorm."""

    def __init__(self, config: T5Config, *, rng, decoder: bool):
        super().__init__()
        C, H = config.n_embd, config.n_head
        n_layer = config.n_layer if not decoder or config.n_decoder_layer is None else config.n_decoder_layer
        self.is_decoder = decoder
        self.relative_bias = RelativePositionBias(H, rng=rng, bidirectional=not decoder,
                                                  num_buckets=config.num_buckets,
                                                  max_distance=config.max_distance, init_std=C ** -0.5)
        self.blocks = nn.ModuleList()
        for _ in range(n_layer):
            block = Block(C, H, config.n_inner, rng=rng, norm="pre", activation="relu",
                          dropout=config.dropout, cross_attention=decoder, bias=False, scale=False)
            block.ln1 = RMSNorm(C, config.eps)            # replace the LayerNorms by T5's RMSNorm
            block.ln2 = RMSNorm(C, config.eps)
            if decoder:
                block.ln_cross = RMSNorm(C, config.eps)
            if config.d_kv is not None:                  # heads of their own width: C → H·d_kv projections
                args = dict(rng=rng, dropout=config.dropout, bias=False, scale=False, head_dim=config.d_kv)
                block.attn = MultiHeadAttention(C, H, **args)
                if decoder:
                    block.cross_attn = MultiHeadAttention(C, H, **args)
            if config.ffn == "gated-gelu":               # v1.1: HF's "gated-gelu" is the tanh form (gelu_new)
                block.mlp = GatedFeedForward(C, config.n_inner or 4 * C, rng=rng, activation="gelu",
                                             dropout=config.dropout, bias=False)
            self.blocks.append(block)
        self.ln_f = RMSNorm(C, config.eps)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)

    def forward(self, x, mask, enc=None, enc_mask=None):
        """x (B, T, C) embedded tokens → (B, T, C)."""
        T = x.shape[1]
        bias = self.relative_bias(T, T)                   # (1, H, T, T): once, shared by every layer
        x = self.drop(x)
        for block in self.blocks:
            x = block(x, mask=mask, enc=enc, enc_mask=enc_mask, bias=bias)
        return self.drop(self.ln_f(x))


class T5(nn.Module):
    """``model(input_ids, decoder_input_ids=None, attention_mask=None, labels=None)``
    → ``{"logits": (B, T, V), "loss": scalar Tensor or None}``.

    ``attention_mask`` (B, S): 1/True on real source tokens; default ``input_ids != pad_id``.
    ``decoder_input_ids`` default: ``shift_right(labels, start, pad)``. ``labels`` (B, T): the
    target ids, -100 (or pad) where nothing is predicted.
    """

    def __init__(self, config: T5Config, *, rng: np.random.Generator | None = None):
        super().__init__()
        if not isinstance(config, T5Config):
            raise ConfigError(f"T5: config must be a T5Config, got {type(config).__name__}")
        self.config = config
        rng = np.random.default_rng(config.seed) if rng is None else rng
        self.shared = nn.Embedding(config.vocab_size, config.n_embd, rng=rng, init_std=1.0)
        self.encoder = T5Stack(config, rng=rng, decoder=False)
        self.decoder = T5Stack(config, rng=rng, decoder=True)
        if not config.tie_word_embeddings:
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False, rng=rng, init_std=1.0)
        self._init_t5_weights(rng)

    def _init_t5_weights(self, rng):
        """HF T5's init (factor 1): q ~ N(0, 1/(C·d)), k, v ~ N(0, 1/C), o ~ N(0, 1/(H·d)),
        fc1 ~ N(0, 1/C), fc2 ~ N(0, 1/d_ff). The small σ of q is what replaces the missing 1/√d."""
        C, d, H = self.config.n_embd, self.config.head_dim, self.config.n_head
        for name, p in self.named_parameters():
            std = None
            if name.endswith("q_proj.weight"):
                std = (C * d) ** -0.5
            elif name.endswith(("k_proj.weight", "v_proj.weight", "fc1.weight", "fc_lin.weight")):
                std = C ** -0.5
            elif name.endswith("out_proj.weight"):
                std = (H * d) ** -0.5
            elif name.endswith("fc2.weight"):
                std = p.shape[1] ** -0.5                       # d_ff
            if std is not None:
                p.data[...] = rng.normal(0.0, std, size=p.shape)

    # ---- the two halves ----------------------------------------------------------------------
    def _masks(self, src_mask, T):
        B, S = src_mask.shape
        return encoder_decoder_masks(S, T, ~src_mask, np.zeros((B, T), dtype=bool))

    def encode(self, input_ids, attention_mask=None):
        """(B, S) source ids → (B, S, C) encoder states."""
        cfg = self.config
        ids = check_token_ids("T5.encode", input_ids, cfg.vocab_size)
        src_mask = default_attention_mask(ids, attention_mask, cfg.pad_id)      # (B, S) bool
        enc_mask, _, _ = self._masks(src_mask, 0)
        return self.encoder(self.shared(ids), enc_mask)                          # (B, S, C)

    def decode(self, decoder_input_ids, enc, attention_mask):
        """(B, T) decoder ids, encoder states (B, S, C), source mask (B, S) → logits (B, T, V)."""
        cfg = self.config
        ids = check_token_ids("T5.decode", decoder_input_ids, cfg.vocab_size)
        src_mask = np.asarray(attention_mask).astype(bool)
        if src_mask.shape != enc.shape[:2] or ids.shape[0] != enc.shape[0]:
            raise ShapeError(f"T5.decode: decoder ids {ids.shape}, encoder states {enc.shape}, source "
                             f"mask {src_mask.shape}: batch and source lengths must agree")
        _, dec_mask, cross_mask = self._masks(src_mask, ids.shape[1])
        g = self.decoder(self.shared(ids), dec_mask, enc=enc, enc_mask=cross_mask)  # (B, T, C)
        if not cfg.tie_word_embeddings:
            return self.lm_head(g)                                              # (B, T, V), v1.1
        return (g * cfg.n_embd ** -0.5) @ self.shared.weight.T                  # (B, T, V), tied

    def forward(self, input_ids, decoder_input_ids=None, attention_mask=None, labels=None) -> dict:
        cfg = self.config
        if decoder_input_ids is None:
            if labels is None:
                raise ShapeError("T5: pass decoder_input_ids or labels (the decoder input is built from them)")
            decoder_input_ids = shift_right(labels, cfg.start_id, cfg.pad_id)
        src_mask = default_attention_mask(input_ids, attention_mask, cfg.pad_id)
        enc = self.encode(input_ids, src_mask)
        logits = self.decode(decoder_input_ids, enc, src_mask)
        loss = None if labels is None else seq2seq_loss(logits, labels, cfg.pad_id)
        return {"logits": logits, "loss": loss}

    def generate(self, input_ids, max_new_tokens: int = 20, *, num_beams: int = 1, attention_mask=None,
                 length_penalty: float = 1.0, eos_id: int | None = None) -> np.ndarray:
        """Greedy (``num_beams=1``) or beam search (Task 4.3) from the source ``input_ids`` (B, S);
        returns the generated ids (B, n) after the start token, EOS kept, then pad."""
        cfg = self.config
        return generate(self, input_ids, max_new_tokens, start_id=cfg.start_id,
                        eos_id=cfg.eos_id if eos_id is None else eos_id, pad_id=cfg.pad_id,
                        attention_mask=attention_mask, num_beams=num_beams, length_penalty=length_penalty)

    def extra_repr(self):
        c = self.config
        return f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, vocab_size={c.vocab_size}"
