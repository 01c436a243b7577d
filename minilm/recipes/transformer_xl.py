"""Transformer-XL on a long-range recall task: the answer lies further back than one segment.

Each example is a stream of 2·S tokens cut into two segments of S (``--segment-len``):

    segment 1:  noise … KEY … noise            one key token k ∈ {key_0 … key_{n−1}}, anywhere
    segment 2:  noise … noise  QUERY  k        the last token repeats the key

Only the last token is scored: L = −log p(k | stream). A model that reads segment 2 alone has no
way to know k (its best loss is log n_keys, accuracy 1/n_keys); Transformer-XL reads segment 1
through its memory (``mem_len`` = S by default), so it can copy k. The summary reports the held-out
accuracy of the same trained model with and without the memory, beside the chance baseline.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from minilm.models.transformer_xl import IGNORE_INDEX, TransformerXL, TransformerXLConfig
from minilm.recipes import recipe
from minilm.recipes.config import nested
from minilm.train import TrainConfig
from minilm.recipes.common import RecipeConfig


NO_CORPUS = ("It learns a synthetic recall task (a key token to copy from the previous segment), on streams drawn "
             "fresh at every step: it reads no text. 'minilm train gpt --corpus real' trains a left-to-right LM on "
             "the English text minilm ships, 'minilm train xlnet --corpus real' an XLNet.")


@dataclass
class TransformerXLRecipeConfig(RecipeConfig):
    """``minilm train transformer-xl``: one option per field."""
    segment_len: int = 12             # tokens per segment, S
    mem_len: Optional[int] = None     # memory steps per layer (default: S; 0 = none)
    n_keys: int = 8                   # distinct key tokens
    n_noise: int = 16                 # distinct noise tokens
    model: TransformerXLConfig = nested(TransformerXLConfig(n_layer=2, n_head=2, n_embd=32),
                                        set_by_recipe=("vocab_size", "mem_len", "seed"))
    batch_size: int = 32              # streams per step
    n_val: int = 256                  # held-out streams
    train: TrainConfig = nested(TrainConfig(steps=300, warmup=30, eval_every=50))


class RecallVocab:
    """Token ids: keys 0..n_keys−1, noise after them, then QUERY (``decode`` names them, for reading)."""

    def __init__(self, n_keys: int, n_noise: int):
        self.n_keys, self.n_noise = n_keys, n_noise
        self.query_id = n_keys + n_noise
        self.vocab_size = n_keys + n_noise + 1
        self.tokens = [f"key{i}" for i in range(n_keys)] + [f"w{i}" for i in range(n_noise)] + ["QUERY"]

    def decode(self, ids):
        return " ".join(self.tokens[int(i)] for i in ids)



def recall_batch(batch_size: int, segment_len: int, vocab: RecallVocab, *, rng: np.random.Generator):
    """``(ids, targets)``, both (B, 2·S) int64: a key somewhere in segment 1, noise elsewhere, QUERY
    then the key at the end of segment 2; ``targets`` is −100 except at the QUERY position (whose
    next token is the key)."""
    B, S = batch_size, segment_len
    if S < 2:
        raise ValueError(f"recall_batch: segment_len={S}, expected >= 2")
    ids = vocab.n_keys + rng.integers(0, vocab.n_noise, size=(B, 2 * S))   # noise everywhere
    keys = rng.integers(0, vocab.n_keys, size=B)
    where = rng.integers(0, S, size=B)                                      # anywhere in segment 1
    ids[np.arange(B), where] = keys
    ids[:, -2] = vocab.query_id
    ids[:, -1] = keys
    targets = np.full((B, 2 * S), IGNORE_INDEX, dtype=np.int64)
    targets[:, -2] = keys                                                    # predict the key after QUERY
    return ids.astype(np.int64), targets


@recipe("transformer-xl", config=TransformerXLRecipeConfig, chapter=12)
class TransformerXLRecipe:
    def __init__(self, cfg: TransformerXLRecipeConfig):
        self.segment_len, self.batch_size = cfg.segment_len, cfg.batch_size
        mem_len = cfg.segment_len if cfg.mem_len is None else cfg.mem_len
        self.vocab = RecallVocab(cfg.n_keys, cfg.n_noise)
        self.tokenizer = None                                # token ids only: nothing to save
        self.model_config = replace(cfg.model, vocab_size=self.vocab.vocab_size, mem_len=mem_len)
        self.model = TransformerXL(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.val = recall_batch(cfg.n_val, cfg.segment_len, self.vocab,
                                rng=np.random.default_rng([cfg.seed, 10**6]))

    def batch(self, rng):
        return recall_batch(self.batch_size, self.segment_len, self.vocab, rng=rng)

    def loss(self, model, batch):
        ids, targets = batch
        loss, _ = model.stream_loss(ids, targets, self.segment_len, use_memory=True)
        return loss, {"tokens": ids.size}

    def _score(self, model, use_memory):
        ids, targets = self.val
        loss, logits = model.stream_loss(ids, targets, self.segment_len, use_memory=use_memory)
        predicted = logits.data[:, -2].argmax(-1)
        return loss.item(), float((predicted == targets[:, -2]).mean())

    def evaluate(self, model):
        loss, acc = self._score(model, True)
        loss_nomem, acc_nomem = self._score(model, False)
        return {"loss": loss, "accuracy": acc, "loss_without_memory": loss_nomem,
                "accuracy_without_memory": acc_nomem}

    def baselines(self):
        n = self.vocab.n_keys
        return {"chance_accuracy": 1.0 / n, "chance_loss": math.log(n)}

    @staticmethod
    def describe(s) -> str:
        m, b = s["metrics"], s["baselines"]
        return (f"Transformer-XL recall: held-out answer loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} nats "
                f"after {s['steps']} steps, {s['parameters']:,} parameters\n"
                f"accuracy with memory {m['accuracy']:.1%}, the same model without memory "
                f"{m['accuracy_without_memory']:.1%} (loss {m['loss_without_memory']:.3f}); "
                f"chance {b['chance_accuracy']:.1%} (loss {b['chance_loss']:.3f})")

