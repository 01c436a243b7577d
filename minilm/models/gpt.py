"""GPT: a decoder-only Transformer trained to predict the next token (Radford et al. 2018, 2019).

    h₀ = wte[x] + wpe[0..T-1]                              token + learned position (Task 3.3)
    hₗ = Block_pre-LN(hₗ₋₁, causal mask),  l = 1..L       x += Attn(LN₁ x); x += MLP(LN₂ x) (Task 3.4)
    logits = LN_f(h_L) · wteᵀ                              tied output, no bias (Task 4.1)
    loss = mean_t CE(logits_t, x_{t+1}), t < T             teacher forcing (Task 4.1)

GPT-2's choices (Radford et al. 2019, §2.3; openai/gpt-2, src/model.py): pre-LN blocks with a final
``ln_f``, LayerNorm ε = 1e-5,
GELU (tanh form), MLP width 4·C, init N(0, 0.02²), and the residual projections (attention
``out_proj`` and MLP ``fc2``, the layers that write into the residual stream) scaled by
1/√(2·n_layer) — there are two of them per block, so the stream's variance at init stays the same
whatever the depth.

Parameter names: ``wte.weight`` (V, C), ``wpe.weight`` (block_size, C), ``blocks.{i}.ln1``,
``blocks.{i}.attn.{q,k,v,out}_proj``, ``blocks.{i}.ln2``, ``blocks.{i}.mlp.fc1/fc2``,
``ln_f`` — and no ``lm_head``: the output layer *is* ``wte``.

Letters: B batch, T time, C channels (n_embd), V vocabulary, L layers.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from autograd import nn, no_grad, tasks
from autograd.errors import ConfigError, ShapeError
from minilm import decoding
from minilm.blocks import Block, LearnedPositionEmbedding, causal_mask, check_token_ids, embed_inputs, \
    padding_mask

from .config_checks import check_config, check_dropout, check_heads, check_positive_ints

# Task 4.1: solutions/task04_gpt/loss.py
causal_lm_loss = tasks.bind("task04_gpt.loss", "causal_lm_loss")
tied_lm_logits = tasks.bind("task04_gpt.loss", "tied_lm_logits")



@dataclass
class GPTConfig:
    """The shape of a GPT. Defaults: ``minilm bench``'s GPT-mini (docs/performance.md)."""

    vocab_size: int = 256       # V: token ids are 0 .. V-1
    block_size: int = 64        # the context length: learned positions 0 .. block_size-1
    n_layer: int = 4            # L: Transformer blocks
    n_head: int = 4             # attention heads per block (n_embd must be a multiple)
    n_embd: int = 128           # C: the width of the residual stream
    dropout: float = 0.0        # on embeddings, attention weights and residual branches (GPT-2: 0.1)
    n_inner: int | None = None  # MLP width; None = 4·n_embd (GPT-2)
    activation: str = "gelu"    # "gelu" (tanh form, GPT-2) or "relu"
    eps: float = 1e-5           # LayerNorm ε (GPT-2)
    init_std: float = 0.02      # σ of the N(0, σ²) init of every weight matrix and embedding (GPT-2)
    seed: int = 0               # the init seed when GPT(config) gets no rng

    def __post_init__(self):
        check_positive_ints(self, ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"))
        check_heads(self)
        check_dropout(self)
        if self.n_inner is not None and self.n_inner <= 0:
            raise ConfigError(f"GPTConfig: n_inner={self.n_inner} must be positive (or None for 4·n_embd)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GPTConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError(f"GPTConfig: unknown fields {unknown}; expected some of {sorted(known)}")
        return cls(**d)


class GPTStack(nn.Module):
    """GPT-2's layers, shared by :class:`GPT` and ``minilm.models.prefixlm.PrefixLM`` (the same
    stack under another mask): ``wte`` (V, C), ``wpe`` (block_size, C), ``drop``, ``blocks`` (pre-LN)
    and ``ln_f``; every weight N(0, σ²), the residual projections σ/√(2L).

    A subclass names its ``config_class`` (with vocab_size, block_size, n_layer, n_head, n_embd,
    n_inner, dropout, eps, init_std, seed) and writes the forward: embed, :meth:`run_blocks` under
    its mask, the tied output. ``activation`` None = ``config.activation``."""

    config_class: type = object

    def __init__(self, config, *, rng: np.random.Generator | None, activation: str | None = None):
        super().__init__()
        check_config(type(self).__name__, config, self.config_class)
        self.config = config
        activation = config.activation if activation is None else activation
        rng = np.random.default_rng(config.seed) if rng is None else rng
        C, std = config.n_embd, config.init_std
        self.wte = nn.Embedding(config.vocab_size, C, rng=rng, init_std=std)
        self.wpe = LearnedPositionEmbedding(config.block_size, C, rng=rng, init_std=std)
        self.drop = nn.Dropout(config.dropout, rng=rng if config.dropout > 0 else None)
        self.blocks = nn.ModuleList([
            Block(C, config.n_head, config.n_inner, rng=rng, norm="pre", activation=activation,
                  dropout=config.dropout, eps=config.eps, init_std=std)
            for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(C, eps=config.eps)
        # GPT-2: the two projections per block that write into the residual stream get σ/√(2L)
        residual_std = std / math.sqrt(2 * config.n_layer)
        for name, p in self.named_parameters():
            if name.endswith(("attn.out_proj.weight", "mlp.fc2.weight")):
                p.data[...] = rng.normal(0.0, residual_std, size=p.shape)

    def check_length(self, T: int) -> None:
        if T > self.config.block_size:
            raise ShapeError(f"{type(self).__name__}: sequence length {T} exceeds block_size "
                             f"{self.config.block_size} (the model's context length)")

    def run_blocks(self, x, mask):
        """Embedded inputs (B, T, C) → dropout → the blocks under ``mask`` → ``ln_f``: (B, T, C)."""
        x = self.drop(x)
        for block in self.blocks:
            x = block(x, mask=mask)                             # (B, T, C)
        return self.ln_f(x)


class GPT(GPTStack):
    """``model(idx, labels=None) -> (logits (B, T, V), loss or None)``.

    ``labels`` (B, T) are **aligned with** ``idx`` (transformers' convention: usually ``labels =
    idx``, with -100 wherever nothing should be predicted): Task 4.1's ``causal_lm_loss`` scores
    ``logits[:, t]`` against ``labels[:, t + 1]``, so a window of T tokens gives T − 1 predictions.
    The model, ``minilm train gpt``, the benchmark and the experiments all take this one path.
    """

    config_class = GPTConfig

    def __init__(self, config: GPTConfig, *, rng: np.random.Generator | None = None):
        super().__init__(config, rng=rng)

    def forward(self, idx, labels=None, attention_mask=None):
        """idx (B, T) ids; labels (B, T) aligned with idx, or None; attention_mask (B, T) 1/0 or
        None: with it a padded key is hidden from every query too (transformers' GPT2LMHeadModel)."""
        cfg = self.config
        idx = check_token_ids("GPT", idx, cfg.vocab_size)    # (B, T) ints in [0, V)
        B, T = idx.shape
        self.check_length(T)
        x = embed_inputs(idx, self.wte.weight, self.wpe.weight)  # (B, T, C)         Task 3.3
        mask = causal_mask(T)                                   # (T, T): no peeking ahead
        if attention_mask is not None:
            if np.shape(attention_mask) != (B, T):
                raise ShapeError(f"GPT: attention_mask of shape {np.shape(attention_mask)}, expected {(B, T)}")
            mask = mask & padding_mask(attention_mask)          # (B, 1, T, T)
        x = self.run_blocks(x, mask)                            # (B, T, C)          Task 3.4
        logits = tied_lm_logits(x, self.wte.weight)             # (B, T, V)          Task 4.1
        loss = None if labels is None else causal_lm_loss(logits, np.asarray(labels))  # Task 4.1: the shift
        return logits, loss

    def lm_loss(self, ids):
        """The teacher-forced loss of whole sequences ``ids`` (B, T): ``model(ids, labels=ids)``'s."""
        return self(ids, labels=ids)[1]

    # ---- decoding ----------------------------------------------------------------------------
    def _next_logits(self, ids: np.ndarray) -> np.ndarray:
        with no_grad():
            logits, _ = self(ids)
        return logits.data[:, -1, :]                            # (B, V)

    def _check_prompt(self, op: str, idx) -> np.ndarray:
        idx = np.asarray(idx)
        if idx.shape[-1] > self.config.block_size:
            raise ShapeError(f"{op}: the prompt has {idx.shape[-1]} tokens but the context "
                             f"(block_size) is {self.config.block_size}; shorten the prompt")
        if idx.shape[-1] == 0:
            raise ShapeError(f"{op}: the prompt is empty; give at least one token")
        return idx

    def generate(self, idx, max_new_tokens: int, *, rng=None, temperature: float = 1.0, top_k=None,
                 top_p=None, greedy: bool = False, eos_id=None) -> np.ndarray:
        """Continue ``idx`` ((T,) or (B, T) ids) by ``max_new_tokens`` tokens; returns the ids with
        the continuation, in the shape of ``idx`` (one longer axis).

        Sampling (temperature → top-k → top-p, ``minilm.decoding``) needs ``rng``; ``greedy=True``
        takes the argmax. A prompt longer than ``block_size`` raises; once the text grows beyond
        it, the model sees only the last ``block_size`` tokens. Runs without gradients and in eval
        mode (no dropout); the previous mode is restored."""
        idx = self._check_prompt("GPT.generate", idx)
        one_row = idx.ndim == 1
        was_training = self.training
        self.eval()
        try:
            out = decoding.generate_tokens(self._next_logits, idx[None] if one_row else idx, max_new_tokens,
                                           rng=rng, temperature=temperature, top_k=top_k, top_p=top_p,
                                           greedy=greedy, eos_id=eos_id, context=self.config.block_size)
        finally:
            self.train(was_training)
        return out[0] if one_row else out

    def beam_search(self, prompt, *, num_beams: int = 4, max_new_tokens: int = 20, eos_id=None,
                    length_penalty: float = 1.0) -> list:
        """Beam search (Task 4.3) from the 1-D ``prompt``: a list of ``(score, ids)``, best first."""
        prompt = self._check_prompt("GPT.beam_search", np.asarray(prompt).reshape(-1))
        block = self.config.block_size
        was_training = self.training
        self.eval()
        try:
            return decoding.beam_search(lambda ids: decoding.log_probs(self._next_logits(ids[:, -block:])),
                                        prompt, num_beams=num_beams, max_new_tokens=max_new_tokens,
                                        eos_id=eos_id, length_penalty=length_penalty)
        finally:
            self.train(was_training)

    def extra_repr(self):
        c = self.config
        return f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, block_size={c.block_size}"
