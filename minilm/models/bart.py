"""BART: a denoising encoder–decoder (Lewis et al. 2020, "BART: Denoising Sequence-to-Sequence
Pre-training for Natural Language Generation, Translation, and Comprehension", §2).

    encoder   h = LN_emb(wte[noised] + wpe_enc[0..S-1]);  hₗ = Block_post(hₗ₋₁, M_enc)
    decoder   g = LN_emb(wte[dec] + wpe_dec[0..T-1]);     gₗ = Block_post(gₗ₋₁, M_dec, cross: h_L, M_cross)
    logits    = g_L · wteᵀ                                           tied input/output embedding
    loss      = CE(logits, clean target)                             plain CE, as in BART pre-training

BART is "a standard Transformer": a bidirectional encoder like BERT's over the *corrupted*
document and a left-to-right decoder like GPT's that writes the *clean* document (§2.1). Its
layout follows BERT/GPT rather than T5, and minilm keeps these choices (HF ``BartConfig`` for
bart-base/large):

* **learned absolute positions**, one table for the encoder and one for the decoder (fairseq's
  table has a 2-row offset, a quirk of its padding; left out);
* **post-LN** blocks (LayerNorm after each residual sum, as in BERT and the original
  Transformer) and a LayerNorm on the embeddings (``layernorm_embedding``), no final LayerNorm;
* **GELU** feed-forward of width 4·C, biases everywhere, scaled 1/√d attention;
* init N(0, σ²) of every weight and embedding. HF's ``init_std`` σ = 0.02 is bart-base's, at
  C = 768: a gain σ·√C ≈ 0.55 per Linear. minilm keeps that gain at any width,
  σ = 0.02·√(768/C) (0.069 at C = 64). A flat 0.02 at C = 64 (gain 0.16) trains a decoder that
  ignores its encoder: within ~20 Adam steps the encoder's feed-forward outputs grow into one large
  vector shared by every token, post-LN turns ``x + that vector`` into the same state for every
  token, and the gradient that could tell the tokens apart again is divided by that vector's size.
  The held-out loss is then the same with each example's own source as with another's
  (``tests/models/test_bart.py::test_decoder_reads_the_encoder``);
* the output layer **is** the shared embedding (no bias; HF's ``final_logits_bias`` is all zeros);
* the decoder input is the target with ``</s>`` moved to the front (``shift_right`` with
  ``start = </s>``): target ``<s> x₁ … </s>`` → decoder input ``</s> <s> x₁ …``.

The masks are Task 9.2's ``encoder_decoder_masks``; the noise is Task 9.3's (``bart_noise``).

Letters: B batch, S source length, T target length, C channels (n_embd), V vocabulary.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from autograd import nn
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import Block, LearnedPositionEmbedding

from .config_checks import check_dropout, check_heads, check_positive_ints
from .seq2seq import EncoderDecoder


@dataclass
class BartConfig:
    """The shape of a BART. Defaults: a laptop-sized model (bart-base: C=768, 6+6 layers, 12 heads)."""

    vocab_size: int = 256         # V
    n_embd: int = 64              # C, d_model
    n_head: int = 4               # attention heads
    n_layer: int = 2              # encoder blocks
    n_decoder_layer: int | None = None  # decoder blocks; None = n_layer
    n_inner: int | None = None    # feed-forward width; None = 4·C (bart-base: 3072)
    max_positions: int = 128      # learned positions of each stack (bart: 1024)
    dropout: float = 0.0          # bart: 0.1
    eps: float = 1e-5             # LayerNorm ε
    init_std: float | None = None  # σ of the N(0, σ²) init; None = 0.02·√(768/C) (HF: 0.02 at C=768)
    pad_id: int = 0               # <pad>
    bos_id: int = 2               # <s>   (minilm's WordPiece vocabulary: [CLS])
    eos_id: int = 3               # </s>  (minilm's WordPiece vocabulary: [SEP]); the decoder's start
    mask_id: int = 4              # <mask> (minilm's WordPiece vocabulary: [MASK])
    seed: int = 0                 # the init seed when Bart(config) gets no rng
    activation: str = "gelu"      # feed-forward: "gelu" (tanh form) or "gelu_exact" (HF bart's "gelu")
    position_offset: int = 0      # released BART: 2 (fairseq's table starts 2 rows in; it has max_positions + 2 rows)
    final_logits_bias: bool = False  # HF's (V,) bias added to the logits (a buffer there, zero in bart-base)

    def __post_init__(self):
        check_positive_ints(self, ("vocab_size", "n_embd", "n_head", "n_layer", "max_positions"))
        check_heads(self)
        check_dropout(self)
        if self.init_std is not None and not self.init_std > 0:
            raise ConfigError(f"BartConfig: init_std={self.init_std!r} must be positive (or None)")
        for name in ("pad_id", "bos_id", "eos_id", "mask_id"):
            if not 0 <= getattr(self, name) < self.vocab_size:
                raise ConfigError(f"BartConfig: {name}={getattr(self, name)} is outside [0, {self.vocab_size})")

    @property
    def initializer_std(self) -> float:
        """σ of the init: ``init_std``, or bart-base's 0.02 scaled to keep its gain σ·√C at this width."""
        return float(self.init_std) if self.init_std is not None else 0.02 * (768 / self.n_embd) ** 0.5

    @property
    def start_id(self) -> int:
        """The decoder's first input: ``</s>`` (fairseq moves it to the front of the target)."""
        return self.eos_id

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class BartStack(nn.Module):
    """Embeddings (token + learned position, then LayerNorm) and post-LN blocks."""

    def __init__(self, config: BartConfig, *, rng, decoder: bool):
        super().__init__()
        C = config.n_embd
        n_layer = config.n_layer if not decoder or config.n_decoder_layer is None else config.n_decoder_layer
        std = config.initializer_std
        self.position_offset = config.position_offset
        self.embed_positions = LearnedPositionEmbedding(config.max_positions + config.position_offset, C,
                                                        rng=rng, init_std=std)
        self.layernorm_embedding = nn.LayerNorm(C, eps=config.eps)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.blocks = nn.ModuleList([
            Block(C, config.n_head, config.n_inner, rng=rng, norm="post", activation=config.activation,
                  dropout=config.dropout, eps=config.eps, cross_attention=decoder, init_std=std)
            for _ in range(n_layer)])

    def forward(self, tok, mask, enc=None, enc_mask=None):
        """tok (B, T, C) token embeddings (the shared table, looked up by Bart) → (B, T, C)."""
        T = tok.shape[1]
        if T + self.position_offset > self.embed_positions.max_positions:
            raise ShapeError(f"Bart: sequence length {T} exceeds max_positions "
                             f"{self.embed_positions.max_positions - self.position_offset}")
        x = tok + self.embed_positions(np.arange(T) + self.position_offset)  # (B, T, C)
        x = self.drop(self.layernorm_embedding(x))
        for block in self.blocks:
            x = block(x, mask=mask, enc=enc, enc_mask=enc_mask)
        return x


class Bart(EncoderDecoder):
    """``model(input_ids, decoder_input_ids=None, attention_mask=None, labels=None)``
    → ``{"logits": (B, T, V), "loss": scalar Tensor or None}`` (``seq2seq.EncoderDecoder``:
    ``encode``, ``decode``, ``generate``).

    ``input_ids`` (B, S): the noised document; ``labels`` (B, T): the clean one (``<s> … </s>``,
    pad or -100 after it); ``decoder_input_ids`` default ``shift_right(labels, </s>, pad)``.
    ``generate`` returns the ids after the ``</s>`` start token (normally ``<s> … </s>``), then pad.
    """

    config_class = BartConfig
    default_max_new_tokens = 40

    def __init__(self, config: BartConfig, *, rng: np.random.Generator | None = None):
        super().__init__(config)
        rng = np.random.default_rng(config.seed) if rng is None else rng
        self.shared = nn.Embedding(config.vocab_size, config.n_embd, rng=rng, init_std=config.initializer_std)
        self.encoder = BartStack(config, rng=rng, decoder=False)
        self.decoder = BartStack(config, rng=rng, decoder=True)
        if config.final_logits_bias:
            self.final_logits_bias = nn.Parameter(np.zeros(config.vocab_size), dtype=self.shared.weight.dtype)

    def output_logits(self, g):
        """(B, T, C) → (B, T, V): the shared table itself (tied), plus HF's ``final_logits_bias`` if kept."""
        logits = g @ self.shared.weight.T                                     # (B, T, V), tied
        if self.config.final_logits_bias:
            logits = logits + self.final_logits_bias
        return logits
