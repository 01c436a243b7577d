"""GPT: a causal language model, trained left to right with teacher forcing.

L = −(1/N) Σ_t log p(x_{t+1} | x_≤t) over windows of ``block_size`` tokens of the token stream (the
corpus's sentences joined, with [SEP] between documents): T − 1 predictions per window. The summary
compares the held-out loss with a bigram model fitted on the same training split: the Transformer
should beat it by using more than one token of context.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from minilm.models.gpt import GPTConfig
from minilm.recipes import recipe
from minilm.recipes.common import CorpusConfig, load_documents, texts, stream
from minilm.recipes.config import nested
from minilm.train import TrainConfig


@dataclass
class GPTRecipeConfig(CorpusConfig):
    """``minilm train gpt``: one option per field, the model's and the schedule's included."""
    model: GPTConfig = nested(GPTConfig(block_size=48, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
                              set_by_recipe=("vocab_size", "seed"))
    batch_size: int = 16            # windows per step
    vocab_size: int = 400           # WordPiece vocabulary size
    train: TrainConfig = nested(TrainConfig(steps=600))


@recipe("gpt", config=GPTRecipeConfig, chapter=4)
class GPTRecipe:
    def __init__(self, cfg: GPTRecipeConfig):
        from minilm.downstream.baselines import NGramLM
        from minilm.data import lm_blocks
        from minilm.models.gpt import GPT
        from minilm.tokenizers import WordPieceTokenizer
        train_docs, val_docs = load_documents(cfg)
        self.tokenizer = WordPieceTokenizer.train(texts(train_docs), cfg.vocab_size)
        self.train_ids = stream(train_docs, self.tokenizer)
        self.model_config = replace(cfg.model, vocab_size=self.tokenizer.vocab_size)
        self.block_size, self.batch_size = self.model_config.block_size, cfg.batch_size
        self.val_windows, _ = lm_blocks(stream(val_docs, self.tokenizer), self.block_size)  # (N, T)
        self.model = GPT(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.bigram = NGramLM(order=2).fit(self.train_ids, self.tokenizer.vocab_size)

    def batch(self, rng):
        """(B, T) random windows of the training stream (nanoGPT's ``get_batch``)."""
        from minilm.data import sample_lm_batch
        windows, _ = sample_lm_batch(self.train_ids, self.block_size, self.batch_size, rng=rng)
        return windows

    def loss(self, model, ids):
        """The model's loss with ``labels = ids``: Task 4.1's ``causal_lm_loss`` (T − 1 predictions a window)."""
        _, loss = model(ids, labels=ids)
        return loss, {"tokens": ids.size}

    def evaluate(self, model):
        """The held-out loss per predicted token, over every window of the held-out stream."""
        total, n = 0.0, 0
        for i in range(0, len(self.val_windows), 32):
            ids = self.val_windows[i:i + 32]                          # (b, T)
            _, loss = model(ids, labels=ids)                          # mean over b·(T − 1) predictions
            count = ids.shape[0] * (ids.shape[1] - 1)
            total, n = total + loss.item() * count, n + count
        return {"loss": total / n}

    def baselines(self):
        """Bigram and unigram models of the training stream, scored on the same held-out predictions."""
        from minilm.downstream.baselines import NGramLM
        x, y = self.val_windows[:, :-1], self.val_windows[:, 1:]      # the T − 1 pairs of each window
        unigram = NGramLM(order=1).fit(self.train_ids, self.tokenizer.vocab_size)
        return {"bigram_loss": self.bigram.loss(x, y), "unigram_loss": unigram.loss(x, y)}

    @staticmethod
    def describe(s) -> str:
        b = s["baselines"]
        verdict = "beats" if s["final_loss"] < b["bigram_loss"] else "does NOT beat"
        return (f"GPT: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} nats/token "
                f"(perplexity {np.exp(s['final_loss']):.1f}) after {s['steps']} steps, {s['parameters']:,} "
                f"parameters\nbaselines on the same held-out tokens: bigram {b['bigram_loss']:.3f}, unigram "
                f"{b['unigram_loss']:.3f} -> the Transformer {verdict} the bigram model")

