"""ELECTRA: a small generator fills in masked tokens; the model learns to spot the replacements.

Clark et al. 2020, "ELECTRA: Pre-training Text Encoders as Discriminators Rather Than Generators",
§2 and Figure 2; google-research/electra ``run_pretraining.py``, ``pretrain/pretrain_helpers.py``.
Two Transformer encoders share one embedding table:

* the **generator** G, a small BERT masked LM (hidden size ``generator_hidden_fraction``·H, FFN 4×
  unless ``generator_inner`` says otherwise,
  heads max(1, hidden // d_head)), reads x with ~15% of the tokens masked and predicts them;
* the **discriminator** D, the model we keep, reads x̂: x with G's *samples* written into the masked
  positions, and says for every token whether it is original or replaced.

    x̂_t = sample_t ~ p_G(· | x^masked)   if t ∈ m,   x_t otherwise         (no gradient through sampling)
    y_t = 1[x̂_t ≠ x_t]                                                     (a correct sample is "original")
    L   = L_MLM(x, θ_G) + λ·L_Disc(x, θ_D),                                  λ = 50
    L_Disc = Σ_t a_t · [−y_t log σ(D_t) − (1 − y_t) log(1 − σ(D_t))] / Σ_t a_t

with a_t = 1 on every real (non-pad) token, [CLS] and [SEP] included. ``Electra.forward`` runs
these steps in this order and calls a task slot for each piece a student writes: Task 7.1 the data
side (masking, sampling, labels; ``minilm.corruption.electra``), Task 7.2 L_Disc, the joint loss L
and the shared embeddings (``solutions/task07_electra/loss.py``), Task 7.3 the paper's ablations
(§3.2, Table 5: ``objective="electra15" | "replace_mlm" | "all_tokens_mlm"``: their targets and the
copy-mechanism loss; ``solutions/task07_electra/variants.py``).

Shapes: the shared embeddings are E wide (``embedding_size``, ELECTRA-Small: 128); when a network's
hidden size differs, its own ``embeddings_project`` (E → hidden) follows them, and the generator's
MLM head maps back to E before the tied decoder (dense(H_G → E) → GELU → LayerNorm → ·Eᵀ + b).
The discriminator head is dense(H) → GELU → dense(1). The replaced-token head's activation is the
encoders' ``activation``; the MLM heads' is ``head_activation``, else ``activation`` (transformers'
ElectraDiscriminatorPredictions uses ``hidden_act``, its ElectraGeneratorPredictions the exact GELU).

Tiny models: ELECTRA's rule gives a generator of round(0.25·H) units, which is 16 for H = 64. We
never go below ``min_generator_hidden`` (8) units — fewer leaves one head of a few dimensions, which
learns next to nothing — nor above H. Heads: max(1, hidden // d_head) with d_head = H / n_head, the
discriminator's head size (64 in every ELECTRA model, where this is ELECTRA's max(1, hidden // 64)),
lowered until it divides the hidden size.

Letters: B batch, T time, E embedding size, H discriminator hidden, G generator hidden, V vocabulary.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

import autograd.functional as F
from autograd import Tensor, nn, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import padding_mask
from minilm.blocks.feedforward import ACTIVATIONS, activate
from minilm.corruption import electra_corrupt, electra_mask, replaced_token_labels, sample_from_logits  # Task 7.1
from minilm.models.bert import BertConfig, BertEmbeddings, BertEncoder
from minilm.models.bert_heads import TiedDecoder

__all__ = ["ElectraConfig", "ElectraGenerator", "ElectraDiscriminator", "Electra", "OBJECTIVES",
           "generator_parameters"]

# Task 7.2: solutions/task07_electra/loss.py
discriminator_loss = tasks.bind("task07_electra.loss", "discriminator_loss")
electra_loss = tasks.bind("task07_electra.loss", "electra_loss")  # the loss line of every objective
tie_embeddings = tasks.bind("task07_electra.loss", "tie_embeddings")
# Task 7.3: solutions/task07_electra/variants.py
variant_targets = tasks.bind("task07_electra.variants", "variant_targets")
copy_mlm_loss = tasks.bind("task07_electra.variants", "copy_mlm_loss")

OBJECTIVES = ("electra", "electra15", "replace_mlm", "all_tokens_mlm")


@dataclass
class ElectraConfig:
    vocab_size: int                         # V (ELECTRA uses BERT's 30522 WordPiece vocabulary)
    max_position_embeddings: int = 128      # longest input (ELECTRA: max_seq_length 128 for Small)
    n_layer: int = 2                        # discriminator blocks (Small: 12)
    n_head: int = 4                         # discriminator heads (Small: 4)
    n_embd: int = 64                        # discriminator hidden size H (Small: 256)
    n_inner: int | None = None              # discriminator FFN width; None = 4·H
    embedding_size: int | None = None       # E of the shared table; None = H (Small: 128)
    type_vocab_size: int = 2                # segment rows, shared too
    dropout: float = 0.1                    # BERT's dropout (ELECTRA: 0.1)
    layer_norm_eps: float = 1e-12           # BERT's LayerNorm ε
    initializer_range: float = 0.02         # σ of the N(0, σ²) init
    activation: str = "gelu"                # encoders: "gelu" (tanh form), "gelu_exact" (HF's "gelu") or "relu"
    head_activation: str | None = None      # MLM heads' dense → act; None = activation (generator checkpoints:
                                            # "gelu_exact", transformers' ElectraGeneratorPredictions whatever hidden_act)
    generator_hidden_fraction: float = 0.25 # G = round(fraction·H) (E1 generator_hidden_size; Small release: 1.0)
    generator_inner: int | None = None      # generator FFN width; None = 4·G (a loaded generator: its intermediate_size)
    generator_layers_fraction: float = 1.0  # generator blocks = round(fraction·n_layer), at least 1
    min_generator_hidden: int = 8           # floor for tiny models (module docstring)
    objective: Literal[OBJECTIVES] = "electra"  # or an ablation: electra15, replace_mlm, all_tokens_mlm (§3.2)
    mask_prob: float = 0.15                 # share of tokens masked (large model: 0.25)
    gen_weight: float = 1.0                 # weight of the generator's MLM loss
    disc_weight: float = 50.0               # λ, weight of the discriminator loss
    temperature: float = 1.0                # sampling temperature of the generator
    disallow_correct: bool = False          # forbid sampling the original token (E1 default: off)
    pad_id: int = 0                         # minilm's WordPiece layout: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4
    mask_id: int = 4
    special_ids: tuple = (2, 3)             # never masked: [CLS], [SEP]

    def __post_init__(self):
        self.special_ids = tuple(int(i) for i in self.special_ids)  # a JSON round trip gives a list
        optional = ("generator_inner",) if self.generator_inner is not None else ()   # None: 4·G
        for name in ("vocab_size", "max_position_embeddings", "n_layer", "n_head", "n_embd",
                     "type_vocab_size", "min_generator_hidden") + optional:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"ElectraConfig: {name}={value!r}, expected a positive integer")
        if self.n_embd % self.n_head:
            raise ConfigError(f"ElectraConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.head_activation is not None and self.head_activation not in ACTIVATIONS:
            raise ConfigError(f"ElectraConfig: head_activation={self.head_activation!r}, expected None (= activation) "
                              f"or one of {', '.join(map(repr, ACTIVATIONS))}")
        if self.embedding_size is not None and self.embedding_size < 1:
            raise ConfigError(f"ElectraConfig: embedding_size={self.embedding_size!r}, expected >= 1 or None")
        if not 0 < self.generator_hidden_fraction <= 1 or not 0 < self.generator_layers_fraction <= 1:
            raise ConfigError(f"ElectraConfig: generator_hidden_fraction={self.generator_hidden_fraction} and "
                              f"generator_layers_fraction={self.generator_layers_fraction} must be in (0, 1]")
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"ElectraConfig: objective={self.objective!r}, expected one of {OBJECTIVES}")
        if not 0 < self.mask_prob < 1 or self.temperature <= 0 or self.disc_weight < 0 or self.gen_weight < 0:
            raise ConfigError(f"ElectraConfig: mask_prob={self.mask_prob} must be in (0, 1), temperature="
                              f"{self.temperature} > 0, and the loss weights >= 0")
        named = [("pad_id", self.pad_id), ("mask_id", self.mask_id),
                 *((f"special_ids[{i}]", s) for i, s in enumerate(self.special_ids))]
        for name, value in named:
            if not 0 <= value < self.vocab_size:
                raise ConfigError(f"ElectraConfig: {name}={value} is outside the vocabulary [0, {self.vocab_size})")

    # ---- the sizes the two networks get --------------------------------------------------------
    @property
    def embedding_dim(self) -> int:
        return self.embedding_size or self.n_embd

    @property
    def generator_hidden(self) -> int:
        want = round(self.generator_hidden_fraction * self.n_embd)  # half to even, as ELECTRA's round
        return min(self.n_embd, max(self.min_generator_hidden, want))

    @property
    def generator_heads(self) -> int:
        G, d_head = self.generator_hidden, self.n_embd // self.n_head
        heads = max(1, G // d_head)
        while G % heads:
            heads -= 1
        return heads

    @property
    def generator_layers(self) -> int:
        return max(1, round(self.generator_layers_fraction * self.n_layer))

    def bert_config(self, part: str) -> BertConfig:
        """The BertConfig of one part: ``"embeddings"`` (E wide), ``"generator"`` or ``"discriminator"``."""
        common = dict(vocab_size=self.vocab_size, max_position_embeddings=self.max_position_embeddings,
                      type_vocab_size=self.type_vocab_size, dropout=self.dropout,
                      layer_norm_eps=self.layer_norm_eps, initializer_range=self.initializer_range,
                      activation=self.activation)
        if part == "embeddings":
            return BertConfig(n_embd=self.embedding_dim, n_head=1, n_layer=1, **common)
        if part == "generator":
            G = self.generator_hidden
            return BertConfig(n_embd=G, n_head=self.generator_heads, n_layer=self.generator_layers,
                              n_inner=self.generator_inner or 4 * G, **common)
        if part == "discriminator":
            return BertConfig(n_embd=self.n_embd, n_head=self.n_head, n_layer=self.n_layer,
                              n_inner=self.n_inner, **common)
        raise ConfigError(f"ElectraConfig.bert_config: part={part!r}, expected embeddings, generator or discriminator")


def _check_inputs(config: ElectraConfig, op: str, input_ids, attention_mask):
    """``(ids int64 (B, T), key mask (B, 1, 1, T) or None)``, or an error naming the problem."""
    ids = np.asarray(getattr(input_ids, "data", input_ids))
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ShapeError(f"{op}: input_ids of shape {ids.shape} and dtype {ids.dtype}, expected (B, T) integers")
    if ids.shape[1] > config.max_position_embeddings:
        raise ShapeError(f"{op}: {ids.shape[1]} tokens, more than max_position_embeddings="
                         f"{config.max_position_embeddings}")
    if ids.size and (ids.min() < 0 or ids.max() >= config.vocab_size):
        raise ShapeError(f"{op}: input ids must lie in [0, {config.vocab_size}), got [{ids.min()}, {ids.max()}]")
    if attention_mask is None:
        return ids.astype(np.int64), None
    am = np.asarray(attention_mask)
    if am.shape != ids.shape:
        raise ShapeError(f"{op}: attention_mask of shape {am.shape}, expected {ids.shape} (1 = token, 0 = pad)")
    return ids.astype(np.int64), padding_mask(am)


class ElectraMLMHead(nn.Module):
    """dense(hidden → E) → GELU (``head_activation``, else ``activation``) → LayerNorm(E) → h·Eᵀ + bias:
    BERT's MLM head, ending in E wide so that the tied decoder can read it (E4 ``get_masked_lm_output``)."""

    def __init__(self, hidden: int, config: ElectraConfig, word_embeddings: nn.Parameter, *, rng):
        super().__init__()
        E = config.embedding_dim
        self.dense = nn.Linear(hidden, E, rng=rng, init_std=config.initializer_range)
        self.LayerNorm = nn.LayerNorm(E, eps=config.layer_norm_eps)
        self.decoder = TiedDecoder(word_embeddings)  # the shared (V, E) table itself
        self.bias = nn.Parameter(np.zeros(config.vocab_size), dtype=word_embeddings.dtype)
        self.activation = config.head_activation or config.activation

    def forward(self, h: Tensor) -> Tensor:
        h = activate(self.dense(h), self.activation)
        return self.decoder(self.LayerNorm(h)) + self.bias  # (B, T, V)


class ElectraDiscriminatorHead(nn.Module):
    """dense(H) → GELU (``activation``) → dense(1): one logit per token, > 0 means "replaced" (E3)."""

    def __init__(self, config: ElectraConfig, *, rng):
        super().__init__()
        H, std = config.n_embd, config.initializer_range
        self.dense = nn.Linear(H, H, rng=rng, init_std=std)
        self.dense_prediction = nn.Linear(H, 1, rng=rng, init_std=std)
        self.activation = config.activation   # the encoders' (transformers: hidden_act), never head_activation

    def forward(self, h: Tensor) -> Tensor:
        B, T, H = h.shape
        h = activate(self.dense(h), self.activation)
        return self.dense_prediction(h).reshape(B, T)  # (B, T)


class _ElectraEncoder(nn.Module):
    """Embeddings (E) → ``embeddings_project`` (E → hidden, only if they differ) → post-LN blocks."""

    def __init__(self, config: ElectraConfig, part: str, *, rng):
        super().__init__()
        nn.check_rng(type(self).__name__, rng)
        self.config = config
        inner = config.bert_config(part)
        self.hidden_size = inner.n_embd
        self.embeddings = BertEmbeddings(config.bert_config("embeddings"), rng=rng)
        self.embeddings_project = None
        if config.embedding_dim != inner.n_embd:
            self.embeddings_project = nn.Linear(config.embedding_dim, inner.n_embd, rng=rng,
                                                init_std=config.initializer_range)
        self.encoder = BertEncoder(inner, rng=rng)

    def hidden(self, input_ids, attention_mask=None) -> Tensor:
        ids, mask = _check_inputs(self.config, type(self).__name__, input_ids, attention_mask)
        x = self.embeddings(ids, np.zeros_like(ids))    # (B, T, E): one segment
        if self.embeddings_project is not None:
            x = self.embeddings_project(x)              # (B, T, hidden)
        return self.encoder(x, mask=mask)[-1]           # (B, T, hidden)


class ElectraGenerator(_ElectraEncoder):
    """The generator: a small BERT masked LM. ``forward(ids, attention_mask)`` → logits (B, T, V)."""

    def __init__(self, config: ElectraConfig, *, rng):
        super().__init__(config, "generator", rng=rng)
        self.lm_head = ElectraMLMHead(self.hidden_size, config, self.embeddings.word_embeddings.weight, rng=rng)

    def forward(self, input_ids, attention_mask=None) -> Tensor:
        return self.lm_head(self.hidden(input_ids, attention_mask))  # (B, T, V)


class ElectraDiscriminator(_ElectraEncoder):
    """The discriminator: a BERT encoder with ``head`` (one logit per token) — and, for the MLM
    ablations, ``lm_head`` (a masked-LM head on the shared table). ``forward(ids, attention_mask)``
    → the replaced-token logits (B, T)."""

    def __init__(self, config: ElectraConfig, *, rng):
        super().__init__(config, "discriminator", rng=rng)
        self.head = None
        self.lm_head = None
        if config.objective != "replace_mlm":  # all_tokens_mlm: the copy probability D_t
            self.head = ElectraDiscriminatorHead(config, rng=rng)
        if config.objective in ("replace_mlm", "all_tokens_mlm"):
            self.lm_head = ElectraMLMHead(self.hidden_size, config, self.embeddings.word_embeddings.weight, rng=rng)

    def forward(self, input_ids, attention_mask=None) -> Tensor:
        if self.head is None:
            raise ConfigError("ElectraDiscriminator: objective 'replace_mlm' has no replaced-token head")
        return self.head(self.hidden(input_ids, attention_mask))  # (B, T)


class Electra(nn.Module):
    """ELECTRA pre-training: ``discriminator`` and ``generator``, one shared embedding table.

    ``forward(input_ids, attention_mask=None, *, rng)`` masks, samples and scores one batch of
    clean ids (B, T) (``attention_mask`` None = every non-``pad_id`` token) and returns a dict:

    * ``loss`` = gen_weight·``mlm_loss`` + weight·``disc_loss`` (weight = λ for the replaced-token
      objectives, 1 for the MLM ablations, whose main loss is a cross-entropy like the generator's);
    * ``mlm_logits`` (B, T, V), ``mlm_labels`` (-100 where unmasked), ``generator_inputs``, ``masked``;
    * ``disc_inputs`` (B, T) ids with the samples written in, ``disc_labels`` (B, T) 1 = replaced;
    * ``disc_logits`` (B, T) replaced-token logits (``all_tokens_mlm``: the copy logits; ``replace_mlm``: None);
    * for the MLM ablations also ``main_logits`` (B, T, V), ``main_labels`` and ``main_weights``.

    ``encode(ids, attention_mask)`` is the discriminator's last hidden state (what is fine-tuned).
    """

    def __init__(self, config: ElectraConfig, *, rng):
        super().__init__()
        nn.check_rng("Electra", rng)
        self.config = config
        self.discriminator = ElectraDiscriminator(config, rng=rng)
        self.generator = ElectraGenerator(config, rng=rng)
        tie_embeddings(self.generator, self.discriminator)  # Task 7.2: one table for both

    @property
    def embeddings(self) -> BertEmbeddings:
        return self.discriminator.embeddings

    def encode(self, input_ids, attention_mask=None) -> Tensor:
        return self.discriminator.hidden(input_ids, attention_mask)  # (B, T, H)

    def forward(self, input_ids, attention_mask=None, *, rng) -> dict:
        """One pre-training step on clean ids x (B, T), as in Figure 2 of the paper (module docstring)."""
        nn.check_rng("Electra.forward", rng)
        cfg = self.config
        x = np.asarray(getattr(input_ids, "data", input_ids), dtype=np.int64)        # (B, T) clean ids
        if attention_mask is None:
            attention_mask = x != cfg.pad_id
        # 1. mask ~15% of the tokens: 85% of them become [MASK], 15% keep theirs (Task 7.1)
        gen_inputs, masked, mlm_labels = electra_mask(x, mask_id=cfg.mask_id, special_ids=cfg.special_ids,
                                                      pad_id=cfg.pad_id, rng=rng, mask_prob=cfg.mask_prob)
        # 2. the generator, a small masked LM, predicts the masked tokens
        mlm_logits = self.generator(gen_inputs, attention_mask)                       # (B, T, V)
        # 3. sample a replacement at every masked position (Task 7.1) from the NumPy logits: x̂ is plain
        #    ids, so no gradient path leads from the discriminator back to the generator (§2: "we do
        #    not back-propagate the discriminator loss through the generator")
        disallow = x[masked] if cfg.disallow_correct else None
        samples = sample_from_logits(mlm_logits.data[masked], rng=rng, temperature=cfg.temperature,
                                     disallow_ids=disallow)                           # (n,) ids
        disc_inputs = electra_corrupt(x, masked, samples)                             # (B, T) x̂
        # 4. y_t = 1[x̂_t ≠ x_t]: a sample equal to the original is "original" (Task 7.1)
        disc_labels = replaced_token_labels(x, disc_inputs, masked)                   # (B, T)
        out = {"mlm_logits": mlm_logits, "generator_inputs": gen_inputs, "masked": masked,
               "mlm_labels": mlm_labels, "disc_inputs": disc_inputs, "disc_labels": disc_labels}
        # 5. the discriminator reads x̂; its loss L_Disc over every real token (Task 7.2), or the
        #    loss of the ablation the config names (Task 7.3)
        h = self.discriminator.hidden(disc_inputs, attention_mask)                    # (B, T, H)
        out.update(self.main_loss(h, x, out, attention_mask))
        # 6. L = gen_weight·L_MLM + λ·L_Disc (Task 7.2); an MLM ablation's main loss is a
        #    cross-entropy like L_MLM, weighted 1
        weight = cfg.disc_weight if cfg.objective in ("electra", "electra15") else 1.0
        out["loss"], out["mlm_loss"] = electra_loss(mlm_logits, mlm_labels, out["disc_loss"],
                                                    gen_weight=cfg.gen_weight, disc_weight=weight)
        return out

    def main_loss(self, h: Tensor, input_ids, step: dict, attention_mask) -> dict:
        """The discriminator's head and loss for the configured objective (§3.2, Table 5).

        ``h`` (B, T, H) is the discriminator's last hidden state on x̂; ``step`` holds the arrays of
        steps 1-4 of ``forward``. Returns ``disc_logits`` (B, T) (``all_tokens_mlm``: the copy
        logits; ``replace_mlm``: None) and ``disc_loss``, and for the MLM ablations ``main_logits``
        (B, T, V), ``main_labels`` and ``main_weights``.
        """
        objective, disc = self.config.objective, self.discriminator
        out = {"disc_logits": None if disc.head is None else disc.head(h)}           # (B, T)
        if objective == "electra":      # ELECTRA: Task 7.1's labels, every real token counts
            labels, weights = step["disc_labels"], attention_mask
        else:                           # an ablation: Task 7.3 says what is predicted, and where
            labels, weights = variant_targets(objective, input_ids, step["disc_inputs"], step["masked"],
                                              attention_mask)
        if objective in ("electra", "electra15"):
            out["disc_loss"] = discriminator_loss(out["disc_logits"], labels, weights)   # Task 7.2
            return out
        main_logits = disc.lm_head(h)                                                 # (B, T, V)
        if objective == "replace_mlm":
            out["disc_loss"] = F.cross_entropy(main_logits, labels)
        else:
            out["disc_loss"] = copy_mlm_loss(main_logits, out["disc_logits"], step["disc_inputs"], labels)
        return {**out, "main_logits": main_logits, "main_labels": labels, "main_weights": weights}


def generator_parameters(model: Electra) -> list:
    """The parameters only the generator uses (its encoder, projection and MLM head, not the
    shared embeddings): the ones no discriminator loss may ever reach."""
    shared = {id(p) for p in model.discriminator.parameters()}
    return [p for p in model.generator.parameters() if id(p) not in shared]

