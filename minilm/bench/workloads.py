"""The benchmark's training steps: GPT-mini and BERT-mini, one AdamW step each.

GPT-mini is the reference workload (DESIGN "Performance"): vocabulary 256, context 64, batch 32,
n_embd 128, 4 layers, 4 heads, float32, AdamW, no dropout. BERT-mini is the same size as an
encoder with the MLM (15% of positions) and NSP heads. A step is what ``minilm train`` does per
batch: ``zero_grad``, forward with the loss, ``backward``, ``step`` (without the clipping and the
schedule, which cost little and which the PyTorch twin would have to copy).

Each builder returns a :class:`Workload`: ``step()`` runs one training step on a fixed batch and
returns the loss; ``tokens`` is the number of tokens it processes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from autograd import optim
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.models.gpt import GPT, GPTConfig


@dataclass
class Sizes:
    """The shape of a benchmark model and its batch (defaults: GPT-mini / BERT-mini)."""

    vocab_size: int = 256
    block_size: int = 64    # T: tokens per sequence
    batch_size: int = 32    # B
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    lr: float = 1e-3

    @property
    def tokens(self) -> int:
        return self.batch_size * self.block_size

    def describe(self) -> str:
        return (f"V={self.vocab_size}, T={self.block_size}, B={self.batch_size}, C={self.n_embd}, "
                f"{self.n_layer} layers, {self.n_head} heads, float32, AdamW")


TINY = Sizes(vocab_size=32, block_size=8, batch_size=2, n_layer=1, n_head=2, n_embd=16)  # for tests


@dataclass
class Workload:
    name: str
    step: Callable[[], float]
    tokens: int
    describe: str
    model: object = None
    extra: dict = field(default_factory=dict)


def gpt_batch(sizes: Sizes, seed: int) -> tuple:
    """A fixed batch of random token ids (B, T): the input and, aligned with it, the labels."""
    return np.random.default_rng(seed).integers(0, sizes.vocab_size, size=(sizes.batch_size, sizes.block_size))


def gpt_mini(sizes: Sizes = Sizes(), *, seed: int = 0) -> Workload:
    config = GPTConfig(vocab_size=sizes.vocab_size, block_size=sizes.block_size, n_layer=sizes.n_layer,
                       n_head=sizes.n_head, n_embd=sizes.n_embd, dropout=0.0)
    model = GPT(config, rng=np.random.default_rng(seed))
    opt = optim.AdamW(model.parameters(), lr=sizes.lr)
    ids = gpt_batch(sizes, seed + 1)

    def step() -> float:
        opt.zero_grad()
        _, loss = model(ids, labels=ids)
        loss.backward()
        opt.step()
        return float(loss.item())

    n_params = sum(p.size for p in model.parameters())
    return Workload("gpt_mini", step, sizes.tokens, sizes.describe(), model, {"parameters": int(n_params)})


def bert_batch(sizes: Sizes, seed: int) -> dict:
    """Token ids, two segments, an attention mask with some padding, 15% MLM labels, NSP labels."""
    rng = np.random.default_rng(seed)
    B, T, V = sizes.batch_size, sizes.block_size, sizes.vocab_size
    ids = rng.integers(5, V, size=(B, T))
    segments = (np.arange(T)[None, :] >= T // 2).astype(np.int64).repeat(B, axis=0)
    lengths = rng.integers(max(1, 3 * T // 4), T + 1, size=B)
    attention_mask = (np.arange(T)[None, :] < lengths[:, None]).astype(np.int64)
    chosen = (rng.random((B, T)) < 0.15) & (attention_mask == 1)
    mlm_labels = np.where(chosen, ids, -100)
    return {"input_ids": ids, "segment_ids": segments, "attention_mask": attention_mask,
            "mlm_labels": mlm_labels, "nsp_labels": rng.integers(0, 2, size=B)}


def bert_mini(sizes: Sizes = Sizes(), *, seed: int = 0) -> Workload:
    config = BertConfig(vocab_size=sizes.vocab_size, max_position_embeddings=sizes.block_size,
                        n_layer=sizes.n_layer, n_head=sizes.n_head, n_embd=sizes.n_embd, dropout=0.0)
    model = BertForPreTraining(config, rng=np.random.default_rng(seed))
    opt = optim.AdamW(model.parameters(), lr=sizes.lr)
    batch = bert_batch(sizes, seed + 1)

    def step() -> float:
        opt.zero_grad()
        loss = model(**batch)["loss"]
        loss.backward()
        opt.step()
        return float(loss.item())

    n_params = sum(p.size for p in model.parameters())
    return Workload("bert_mini", step, sizes.tokens, sizes.describe() + ", MLM 15% + NSP", model,
                    {"parameters": int(n_params)})


WORKLOADS = {"gpt_mini": gpt_mini, "bert_mini": bert_mini}
