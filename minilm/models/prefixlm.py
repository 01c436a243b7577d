"""One decoder-only stack, two of T5's architectures: the causal LM and the prefix LM
(Raffel et al. 2020, §3.2.1 and Figs. 3–4).

A text-to-text pair (input x, target y) becomes one sequence ``[x₁ … x_P ; y₁ … y_m </s>]``
(the input already ends with a separator, so P counts it). The *same* parameters and the *same*
forward run on it; only the attention mask differs:

    arch="causal"     M[i, j] = j ≤ i               the input is read left to right, like the target
    arch="prefixlm"   M[i, j] = j ≤ i  or  j < P    the input is fully visible (encoder-like),
                                                    the target stays causal

and both are trained with the loss on the target part only (Task 9.2's ``lm_labels``): the
first target token is predicted at the last input position. The masks and the labels are the
Task 9.2 slots (``solutions/task09_seq2seq/architectures.py``). The third architecture of
Fig. 4, the encoder–decoder, has two stacks: ``minilm.models.t5``.

:class:`PrefixLM`'s stack is GPT's (``minilm.models.gpt.GPTStack``): token + learned position
embeddings, pre-LN GELU blocks, a final LayerNorm, the output tied to the input embedding, init
N(0, 0.02²). :class:`T5DecoderOnly` is the same call over T5's parts instead (one ``T5Stack``
without cross-attention: RMSNorm, ReLU, relative position bias, the scaled tied output), the
decoder-only rows of ``minilm experiment architectures``. Both get their forward, masks and greedy
``generate`` from :class:`PrefixLMBase`, and differ only in :meth:`PrefixLMBase.logits`.

Letters: B batch, T time, P prefix length, C channels (n_embd), V vocabulary.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import numpy as np

import autograd.functional as F
from autograd import nn, no_grad, tasks
from autograd.errors import ConfigError, ShapeError
from minilm import decoding
from minilm.blocks import check_token_ids, padding_mask

from .config_checks import check_config, check_dropout, check_heads, check_positive_ints
from .gpt import GPTStack
from .t5 import T5Config, T5Stack, init_t5_weights

# Task 9.2: solutions/task09_seq2seq/architectures.py
causal_lm_mask = tasks.bind("task09_seq2seq.architectures", "causal_lm_mask")
prefix_lm_mask = tasks.bind("task09_seq2seq.architectures", "prefix_lm_mask")
lm_labels = tasks.bind("task09_seq2seq.architectures", "lm_labels")

ARCHITECTURES = ("prefixlm", "causal")


def _check_arch(config) -> None:
    if config.arch not in ARCHITECTURES:
        raise ConfigError(f"{type(config).__name__}: arch={config.arch!r}, expected one of {ARCHITECTURES}")


@dataclass
class PrefixLMConfig:
    """A decoder-only model over ``[input ; target]``; ``arch`` picks the mask."""

    vocab_size: int = 256         # token ids
    block_size: int = 64          # longest input + target (learned positions)
    n_layer: int = 2              # Transformer blocks
    n_head: int = 4               # attention heads
    n_embd: int = 64              # model width
    n_inner: int | None = None    # MLP width (default: 4·n_embd)
    dropout: float = 0.0          # dropout probability
    eps: float = 1e-5             # LayerNorm epsilon
    init_std: float = 0.02        # std of the normal initial weights
    arch: Literal["prefixlm", "causal"] = "prefixlm"  # prefixlm: the input is fully visible; causal: a plain
                                                      # left-to-right LM
    pad_id: int = 0               # the padding id
    seed: int = 0                 # the init seed when PrefixLM(config) gets no rng

    def __post_init__(self):
        check_positive_ints(self, ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"))
        check_heads(self)
        _check_arch(self)
        check_dropout(self)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class DecoderOnlyConfig(T5Config):
    """A T5Config for :class:`T5DecoderOnly`: one stack of ``n_layer`` blocks over ``[input ; target]``."""
    arch: str = "prefixlm"   # "prefixlm" (the input fully visible) or "causal"

    def __post_init__(self):
        super().__post_init__()
        _check_arch(self)


class PrefixLMBase(nn.Module):
    """``model(ids, prefix_len, attention_mask=None, labels=None)`` → ``{"logits", "loss"}``.

    ids (B, T): ``[input ; target ; pad]``; prefix_len (B,) the input length P_b of each row;
    attention_mask (B, T) default ``ids != pad_id``; labels (B, T) next-token labels (from
    :func:`lm_labels`), -100 where nothing is predicted — already shifted: the logits at t are
    scored against ``labels[t]``.

    A subclass has ``config`` (``vocab_size``, ``pad_id``, ``arch``) and defines :meth:`logits`;
    ``max_length`` is the longest sequence it can read (None: any).
    """

    max_length: int | None = None

    def logits(self, ids, mask):
        """ids (B, T) and the attention mask (B|1, 1, T, T) → logits (B, T, V)."""
        raise NotImplementedError(f"{type(self).__name__}.logits")

    def attention_mask(self, T: int, prefix_len, attention_mask) -> np.ndarray:
        """The (B, 1, T, T) mask of this architecture: causal, or causal with the prefix visible,
        and never a padded key."""
        if self.config.arch == "causal":
            mask = causal_lm_mask(T)[None, None]                               # (1, 1, T, T)
        else:
            mask = np.stack([prefix_lm_mask(T, int(p)) for p in prefix_len])[:, None]  # (B, 1, T, T)
        return mask & padding_mask(attention_mask)                             # (B, 1, T, T)

    def forward(self, ids, prefix_len, attention_mask=None, labels=None) -> dict:
        cfg, op = self.config, type(self).__name__
        ids = check_token_ids(op, ids, cfg.vocab_size)                         # (B, T)
        B, T = ids.shape
        if self.max_length is not None and T > self.max_length:
            raise ShapeError(f"{op}: sequence length {T} exceeds block_size {self.max_length}")
        prefix_len = np.broadcast_to(np.asarray(prefix_len, dtype=np.int64), (B,))
        if ((prefix_len < 0) | (prefix_len > T)).any():
            raise ShapeError(f"{op}: prefix_len {prefix_len.tolist()} must be within [0, T={T}]")
        if attention_mask is None:
            attention_mask = ids != cfg.pad_id
        mask = self.attention_mask(T, prefix_len, np.asarray(attention_mask).astype(bool))
        logits = self.logits(ids, mask)                                        # (B, T, V)
        loss = None if labels is None else F.cross_entropy(logits, np.asarray(labels), ignore_index=-100)
        return {"logits": logits, "loss": loss}

    def generate(self, prefixes, max_new_tokens: int, *, eos_id: int | None = None) -> list[list[int]]:
        """Greedy continuation of each 1-D prefix (a list of id sequences) by
        :func:`minilm.decoding.generate_tokens`; returns the generated ids of each (EOS included
        when produced). Prefixes of equal length run as one batch; each step re-runs the stack on
        the whole sequence, every generated token a real (unpadded) key, the prefix fully visible
        for ``arch="prefixlm"``. A model with a ``max_length`` stops there."""
        prefixes = [np.asarray(p, dtype=np.int64).reshape(-1) for p in prefixes]
        out: list = [None] * len(prefixes)
        was_training = self.training
        self.eval()
        try:
            with no_grad():
                for P in sorted({len(p) for p in prefixes}):
                    rows = [i for i, p in enumerate(prefixes) if len(p) == P]
                    n = max_new_tokens if self.max_length is None else \
                        max(0, min(max_new_tokens, self.max_length - P))      # room left in the context
                    full = decoding.generate_tokens(
                        lambda t: self(t, P, np.ones(t.shape, bool))["logits"].data[:, -1, :],
                        np.stack([prefixes[i] for i in rows]), n, greedy=True, eos_id=eos_id)  # (b, P + n)
                    for k, i in enumerate(rows):
                        gen = full[k, P:].tolist()
                        out[i] = gen[:gen.index(eos_id) + 1] if eos_id in gen else gen
        finally:
            self.train(was_training)
        return out

    def extra_repr(self):
        c = self.config
        return f"arch={c.arch!r}, n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}"


class PrefixLM(PrefixLMBase, GPTStack):
    """The prefix LM (or causal LM) on GPT's stack: ``wte``, ``wpe``, ``blocks``, ``ln_f`` as in
    ``minilm.models.gpt`` (GELU blocks), learned positions up to ``block_size``."""

    config_class = PrefixLMConfig

    def __init__(self, config: PrefixLMConfig, *, rng: np.random.Generator | None = None):
        super().__init__(config, rng=rng, activation="gelu")

    @property
    def max_length(self) -> int:
        return self.config.block_size

    def logits(self, ids, mask):
        x = self.wte(ids) + self.wpe(ids.shape[1])                            # (B, T, C)
        return self.run_blocks(x, mask) @ self.wte.weight.T                   # (B, T, V), tied


class T5DecoderOnly(PrefixLMBase):
    """The prefix LM (or causal LM) on T5's parts: ``shared`` (V, C) and ``stack``, T5's encoder
    stack (``T5Stack(decoder=False)``: blocks without cross-attention, bidirectional relative
    buckets), T5's init, the output tied as in T5 (C^-½ before ``sharedᵀ``). Relative positions:
    no ``max_length``."""

    def __init__(self, config: DecoderOnlyConfig, *, rng: np.random.Generator | None = None):
        super().__init__()
        check_config("T5DecoderOnly", config, DecoderOnlyConfig)
        self.config = config
        rng = np.random.default_rng(config.seed) if rng is None else rng
        self.shared = nn.Embedding(config.vocab_size, config.n_embd, rng=rng, init_std=1.0)
        self.stack = T5Stack(config, rng=rng, decoder=False)
        init_t5_weights(self, config, rng)

    def logits(self, ids, mask):
        h = self.stack(self.shared(ids), mask)                                # (B, T, C)
        return (h * self.config.n_embd ** -0.5) @ self.shared.weight.T       # (B, T, V), tied as in T5
