"""Prefix LM or causal LM: one decoder-only stack on "input ; target" (Raffel et al. 2020 Fig. 4).

Each toy pair ("reverse: d a c", "c a d") becomes one sequence  reverse : d a c [SEP] c a d [SEP].
--arch prefixlm lets every position see the whole input (a fully visible prefix, like an encoder)
and keeps the target causal; --arch causal reads everything left to right (a plain LM). Same
parameters, same data, same loss (on the target tokens only); only the attention mask differs.
The summary reports the held-out loss per target token and exact-match accuracy of greedy
decoding, against copying the input and a unigram model of the answers. Run both --arch values
with the same --seed to compare the architectures, and `minilm train t5 --task reverse` for the
encoder–decoder (T5 Table 2 compares the three at scale). With the defaults (seed 0, 600 steps,
inputs of 3–10 letters) our runs gave exact match ≈ 0.56 (prefix LM) and ≈ 0.55 (causal LM) with
4 blocks, against ≈ 0.97 for T5 with 2 + 2 blocks.

--task span is T5's own comparison (its Table 2 pre-trains every architecture with the denoising
objective): the pairs are T5's span corruption of windows of the corpus (the synthetic one, or
--corpus), built as ``minilm train t5`` builds them; the sequence is the corrupted window, then
the spans after their sentinels. The summary then compares the held-out loss per target token with
a unigram model of the targets, as T5's does.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from minilm.data import pad_batch
from minilm.models.prefixlm import lm_labels, PrefixLM, PrefixLMConfig
from autograd.errors import ConfigError
from minilm.recipes import recipe
from minilm.recipes.config import nested
from minilm.train import TrainConfig
from minilm.recipes.seq2seq import exact_match, token_stats
from minilm.recipes.t5 import SPAN, TASK_CHOICES, SpanCorruptionConfig, SpanData, TaskData, task_tokenizer


@dataclass
class PrefixLMRecipeConfig(SpanCorruptionConfig):
    """``minilm train prefixlm``: one option per field; ``corpus``, ``docs`` and the span-corruption
    fields are read by --task span only."""
    task: Literal[TASK_CHOICES + (SPAN,)] = "reverse"  # the toy task, or span: span corruption of the corpus
    min_len: int = 3                                   # shortest input in letters
    max_len: int = 10                                  # longest input in letters
    model: PrefixLMConfig = nested(PrefixLMConfig(n_layer=4, n_head=4, n_embd=64, dropout=0.0),  # 4 blocks: as deep
                                   set_by_recipe=("vocab_size", "block_size", "pad_id", "seed"))  # as T5's 2 + 2
    batch_size: int = 32                               # pairs per step
    train: TrainConfig = nested(TrainConfig(steps=600))


@recipe("prefixlm", config=PrefixLMRecipeConfig, chapter=9,
        variants={"causal": {"arch": "causal"}, "span": {"task": SPAN}})
class PrefixLMRecipe:
    def __init__(self, cfg: PrefixLMRecipeConfig):
        self.cfg, self.batch_size = cfg, cfg.batch_size
        if cfg.task == SPAN:                                  # windows of the corpus, as T5's recipe cuts them
            self.data = SpanData(cfg)
            tok, self.eos_id = self.data.tok, self.data.eos_id
        else:
            if cfg.corpus is not None:
                raise ConfigError(f"minilm train prefixlm: --corpus {cfg.corpus} is the text of --task span (T5's "
                                  f"span corruption); --task {cfg.task} makes its own pairs. Add --task span")
            tok = task_tokenizer()
            self.eos_id = tok.sep_id
            self.data = TaskData(cfg.task, tok, eos_id=self.eos_id, seed=cfg.seed, min_len=cfg.min_len,
                                 max_len=cfg.max_len)
        self.tokenizer = tok
        longest = max(len(s) + len(t) for s, t in self.data.val) + 8
        self.model_config = replace(cfg.model, vocab_size=tok.vocab_size, block_size=longest, pad_id=tok.pad_id)
        self.model = PrefixLM(self.model_config, rng=np.random.default_rng(cfg.seed))

    def _arrays(self, pairs):
        """ids (B, T) = [source ; target ; pad], prefix lengths, attention mask, target-only labels."""
        ids, mask = pad_batch([[*s, *t] for s, t in pairs], self.tokenizer.pad_id)
        prefix = np.array([len(s) for s, _ in pairs])
        labels = lm_labels(ids, prefix, mask.sum(axis=1))
        return ids, prefix, mask, labels

    def batch(self, rng):
        return self._arrays(self.data.sample(self.batch_size, rng))

    def loss(self, model, batch):
        ids, prefix, mask, labels = batch
        out = model(ids, prefix, attention_mask=mask, labels=labels)
        return out["loss"], {"tokens": int(mask.sum())}

    def evaluate(self, model):
        total, correct, n = 0.0, 0, 0
        for i in range(0, len(self.data.val), 64):
            ids, prefix, mask, labels = self._arrays(self.data.val[i:i + 64])
            logits = model(ids, prefix, attention_mask=mask)["logits"]
            ce, ok, count = token_stats(logits, labels)
            total, correct, n = total + ce, correct + ok, n + count
        metrics = {"loss": total / n, "token_accuracy": correct / n}
        if self.cfg.task != SPAN:                             # a toy task's answer, decoded whole
            predicted = model.generate([s for s, _ in self.data.val], self.data.max_target_len(), eos_id=self.eos_id)
            metrics["exact_match"] = exact_match(predicted, [t for _, t in self.data.val])
        return metrics

    def baselines(self):
        return self.data.baselines(self.tokenizer.vocab_size)

    @staticmethod
    def describe(s) -> str:
        b, m = s["baselines"], s["metrics"]
        head = (f"decoder-only LM (--arch as chosen): held-out loss {s['initial_loss']:.3f} -> "
                f"{s['final_loss']:.3f} nats/target token after {s['steps']} steps, {s['parameters']:,} parameters\n")
        if "exact_match" in m:
            return head + (f"exact match (greedy decoding) {m['exact_match']:.1%}, token accuracy "
                           f"{m['token_accuracy']:.1%}; baselines: copying the input {b['copy_exact_match']:.1%}, "
                           f"unigram loss {b['unigram_loss']:.3f}")
        verdict = "beats" if s["final_loss"] < b["unigram_loss"] else "does NOT beat"
        return head + (f"token accuracy {m['token_accuracy']:.1%}; baseline: a unigram model of the targets, which "
                       f"does not read the input, {b['unigram_loss']:.3f} -> the LM {verdict} it")

