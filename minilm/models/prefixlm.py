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

The stack is GPT's (``minilm.models.gpt``): token + learned position embeddings, pre-LN GELU blocks,
a final LayerNorm, the output tied to the input embedding, init N(0, 0.02²).

Letters: B batch, T time, P prefix length, C channels (n_embd), V vocabulary.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import nn, no_grad, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import Block, LearnedPositionEmbedding, check_token_ids, padding_mask

# Task 9.2: solutions/task09_seq2seq/architectures.py
causal_lm_mask = tasks.bind("task09_seq2seq.architectures", "causal_lm_mask")
prefix_lm_mask = tasks.bind("task09_seq2seq.architectures", "prefix_lm_mask")
lm_labels = tasks.bind("task09_seq2seq.architectures", "lm_labels")

ARCHITECTURES = ("prefixlm", "causal")


@dataclass
class PrefixLMConfig:
    """A decoder-only model over ``[input ; target]``; ``arch`` picks the mask."""

    vocab_size: int = 256
    block_size: int = 64          # longest input + target (learned positions)
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    n_inner: int | None = None    # MLP width; None = 4·n_embd
    dropout: float = 0.0
    eps: float = 1e-5
    init_std: float = 0.02
    arch: str = "prefixlm"        # "prefixlm" (fully visible input) or "causal" (a plain LM)
    pad_id: int = 0
    seed: int = 0

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ConfigError(f"PrefixLMConfig: {name}={value!r} must be a positive integer")
        if self.n_embd % self.n_head:
            raise ConfigError(f"PrefixLMConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.arch not in ARCHITECTURES:
            raise ConfigError(f"PrefixLMConfig: arch={self.arch!r}, expected one of {ARCHITECTURES}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"PrefixLMConfig: dropout={self.dropout} must be in [0, 1)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class PrefixLM(nn.Module):
    """``model(ids, prefix_len, attention_mask=None, labels=None)`` → ``{"logits", "loss"}``.

    ids (B, T): ``[input ; target ; pad]``; prefix_len (B,) the input length P_b of each row;
    attention_mask (B, T) default ``ids != pad_id``; labels (B, T) next-token labels (from
    :func:`lm_labels`), -100 where nothing is predicted — already shifted: the logits at t are
    scored against ``labels[t]``.
    """

    def __init__(self, config: PrefixLMConfig, *, rng: np.random.Generator | None = None):
        super().__init__()
        if not isinstance(config, PrefixLMConfig):
            raise ConfigError(f"PrefixLM: config must be a PrefixLMConfig, got {type(config).__name__}")
        self.config = config
        rng = np.random.default_rng(config.seed) if rng is None else rng
        C, std = config.n_embd, config.init_std
        self.wte = nn.Embedding(config.vocab_size, C, rng=rng, init_std=std)
        self.wpe = LearnedPositionEmbedding(config.block_size, C, rng=rng, init_std=std)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.blocks = nn.ModuleList([
            Block(C, config.n_head, config.n_inner, rng=rng, norm="pre", activation="gelu",
                  dropout=config.dropout, eps=config.eps, init_std=std)
            for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(C, eps=config.eps)
        residual_std = std / math.sqrt(2 * config.n_layer)     # GPT-2's scaled residual init
        for name, p in self.named_parameters():
            if name.endswith(("attn.out_proj.weight", "mlp.fc2.weight")):
                p.data[...] = rng.normal(0.0, residual_std, size=p.shape)

    def attention_mask(self, T: int, prefix_len, attention_mask) -> np.ndarray:
        """The (B, 1, T, T) mask of this architecture: causal, or causal with the prefix visible,
        and never a padded key."""
        if self.config.arch == "causal":
            mask = causal_lm_mask(T)[None, None]                               # (1, 1, T, T)
        else:
            mask = np.stack([prefix_lm_mask(T, int(p)) for p in prefix_len])[:, None]  # (B, 1, T, T)
        return mask & padding_mask(attention_mask)                             # (B, 1, T, T)

    def forward(self, ids, prefix_len, attention_mask=None, labels=None) -> dict:
        cfg = self.config
        ids = check_token_ids("PrefixLM", ids, cfg.vocab_size)                 # (B, T)
        B, T = ids.shape
        if T > cfg.block_size:
            raise ShapeError(f"PrefixLM: sequence length {T} exceeds block_size {cfg.block_size}")
        prefix_len = np.broadcast_to(np.asarray(prefix_len, dtype=np.int64), (B,))
        if ((prefix_len < 0) | (prefix_len > T)).any():
            raise ShapeError(f"PrefixLM: prefix_len {prefix_len.tolist()} must be within [0, T={T}]")
        if attention_mask is None:
            attention_mask = ids != cfg.pad_id
        mask = self.attention_mask(T, prefix_len, np.asarray(attention_mask).astype(bool))
        x = self.drop(self.wte(ids) + self.wpe(T))                            # (B, T, C)
        for block in self.blocks:
            x = block(x, mask=mask)
        logits = self.ln_f(x) @ self.wte.weight.T                              # (B, T, V), tied
        loss = None if labels is None else F.cross_entropy(logits, np.asarray(labels), ignore_index=-100)
        return {"logits": logits, "loss": loss}

    def generate(self, prefixes, max_new_tokens: int, *, eos_id: int | None = None) -> list[list[int]]:
        """Greedy continuation of each 1-D prefix (a list of id sequences); returns the generated
        ids of each (EOS included when produced). Prefixes of equal length run as one batch; each
        step re-runs the stack on the whole sequence (the prefix stays fully visible for
        ``arch="prefixlm"``)."""
        prefixes = [np.asarray(p, dtype=np.int64).reshape(-1) for p in prefixes]
        out: list = [None] * len(prefixes)
        was_training = self.training
        self.eval()
        try:
            with no_grad():
                for P in sorted({len(p) for p in prefixes}):
                    rows = [i for i, p in enumerate(prefixes) if len(p) == P]
                    ids = np.stack([prefixes[i] for i in rows])                # (b, P)
                    done = np.zeros(len(rows), dtype=bool)
                    for _ in range(min(max_new_tokens, self.config.block_size - P)):
                        logits = self(ids, np.full(len(rows), P), np.ones(ids.shape, bool))["logits"]
                        nxt = logits.data[:, -1, :].argmax(axis=-1)              # (b,)
                        ids = np.concatenate([ids, nxt[:, None]], axis=1)
                        if eos_id is not None:
                            done |= nxt == eos_id
                            if done.all():
                                break
                    for k, i in enumerate(rows):
                        gen = ids[k, P:].tolist()
                        out[i] = gen[:gen.index(eos_id) + 1] if eos_id in gen else gen
        finally:
            self.train(was_training)
        return out

    def extra_repr(self):
        c = self.config
        return f"arch={c.arch!r}, n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}"
