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
  reproduced in :func:`init_t5_weights`).
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

from autograd import nn
from autograd.errors import ConfigError
from minilm.blocks import Block, RelativePositionBias
from minilm.blocks.feedforward import GatedFeedForward

from .config_checks import check_dropout, check_positive_ints
from .seq2seq import EncoderDecoder, RMSNorm, encoder_decoder_masks  # noqa: F401 (Task 9.2's masks, by name)

FFNS = ("relu", "gated-gelu")


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
        check_positive_ints(self, ("vocab_size", "n_embd", "n_head", "n_layer", "num_buckets", "max_distance"))
        if self.d_kv is None and self.n_embd % self.n_head:
            raise ConfigError(f"T5Config: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.d_kv is not None and (isinstance(self.d_kv, bool) or self.d_kv < 1):
            raise ConfigError(f"T5Config: d_kv={self.d_kv!r} must be a positive integer or None")
        if self.ffn not in FFNS:
            raise ConfigError(f"T5Config: ffn={self.ffn!r}, expected one of {FFNS}")
        check_dropout(self)
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


def init_t5_weights(model: nn.Module, config: T5Config, rng) -> None:
    """HF T5's init (factor 1) of ``model``'s parameters, by name: q ~ N(0, 1/(C·d)), k, v ~ N(0, 1/C),
    o ~ N(0, 1/(H·d)), fc1 ~ N(0, 1/C), fc2 ~ N(0, 1/d_ff). The small σ of q is what replaces the
    missing 1/√d. Used by T5 and by ``minilm.models.prefixlm.T5DecoderOnly``."""
    C, d, H = config.n_embd, config.head_dim, config.n_head
    for name, p in model.named_parameters():
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
            # d_kv: heads of their own width (C → H·d_kv projections; flan-t5-small: 6 × 64 from 512)
            block = Block(C, H, config.n_inner, rng=rng, norm="pre", activation="relu", head_dim=config.d_kv,
                          dropout=config.dropout, cross_attention=decoder, bias=False, scale=False)
            block.ln1 = RMSNorm(C, config.eps)            # replace the LayerNorms by T5's RMSNorm
            block.ln2 = RMSNorm(C, config.eps)
            if decoder:
                block.ln_cross = RMSNorm(C, config.eps)
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


class T5(EncoderDecoder):
    """``model(input_ids, decoder_input_ids=None, attention_mask=None, labels=None)``
    → ``{"logits": (B, T, V), "loss": scalar Tensor or None}`` (``seq2seq.EncoderDecoder``:
    ``encode``, ``decode``, ``generate``). The decoder starts from ``config.start_id``: pad, unless
    ``decoder_start_id`` says otherwise.
    """

    config_class = T5Config

    def __init__(self, config: T5Config, *, rng: np.random.Generator | None = None):
        super().__init__(config)
        rng = np.random.default_rng(config.seed) if rng is None else rng
        self.shared = nn.Embedding(config.vocab_size, config.n_embd, rng=rng, init_std=1.0)
        self.encoder = T5Stack(config, rng=rng, decoder=False)
        self.decoder = T5Stack(config, rng=rng, decoder=True)
        if not config.tie_word_embeddings:
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False, rng=rng, init_std=1.0)
        init_t5_weights(self, config, rng)

    def output_logits(self, g):
        """(B, T, C) → (B, T, V): the tied table after C^-½ (v1.0), or v1.1's own ``lm_head``."""
        if not self.config.tie_word_embeddings:
            return self.lm_head(g)                                              # (B, T, V), v1.1
        return (g * self.config.n_embd ** -0.5) @ self.shared.weight.T          # (B, T, V), tied
