"""GPT: a causal language model, trained left to right with teacher forcing.

L = −(1/N) Σ_t log p(x_{t+1} | x_≤t) over windows of the token stream (the corpus's sentences
joined, with [SEP] between documents). The summary compares the held-out loss with a bigram model
fitted on the same training split: the Transformer should beat it by using more than one token of
context.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import Tensor, cat, tasks
from minilm.recipes.common import CorpusConfig, load_documents, texts, stream

causal_lm_loss = tasks.bind("task04_gpt.loss", "causal_lm_loss")  # Task 4.1: solutions/task04_gpt/loss.py


@dataclass
class GPTRecipeConfig(CorpusConfig):
    """``minilm train gpt``: one option per field."""
    block_size: int = 48            # context length in tokens
    n_layer: int = 2                # Transformer blocks
    n_head: int = 4                 # attention heads
    n_embd: int = 64                # model width
    batch_size: int = 16            # windows per step
    vocab_size: int = 400           # WordPiece vocabulary size
    dropout: float = 0.0            # dropout probability
    # the schedule: TrainConfig's fields (their help is written there), this recipe's values
    steps: int = 600


class GPTRecipe:
    family = "gpt"

    def __init__(self, cfg: GPTRecipeConfig):
        from minilm.downstream.baselines import NGramLM
        from minilm.data import lm_blocks
        from minilm.models.gpt import GPT, GPTConfig
        from minilm.tokenizers import WordPieceTokenizer
        train_docs, val_docs = load_documents(cfg)
        self.tokenizer = WordPieceTokenizer.train(texts(train_docs), cfg.vocab_size)
        self.train_ids = stream(train_docs, self.tokenizer)
        self.val_x, self.val_y = lm_blocks(stream(val_docs, self.tokenizer), cfg.block_size)
        self.block_size, self.batch_size = cfg.block_size, cfg.batch_size
        self.model_config = GPTConfig(vocab_size=self.tokenizer.vocab_size, block_size=cfg.block_size,
                                      n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd,
                                      dropout=cfg.dropout)
        self.model = GPT(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.bigram = NGramLM(order=2).fit(self.train_ids, self.tokenizer.vocab_size)

    def batch(self, rng):
        from minilm.data import sample_lm_batch
        return sample_lm_batch(self.train_ids, self.block_size, self.batch_size, rng=rng)

    def loss(self, model, batch):
        """Task 4.1's ``causal_lm_loss`` on the window x followed by its next token: targets aligned
        with the inputs, ``ids = [x, y[:, -1]]`` (B, T+1). The model reads x (T tokens, its context);
        the slot scores logits[:, t] against ids[:, t+1] and drops the prediction after the last
        token, so that position gets a zero row nothing scores."""
        x, y = batch                                                  # (B, T) each, y[:, t] = x[:, t+1]
        logits, _ = model(x)                                          # (B, T, V)
        B, T, V = logits.shape
        ids = np.concatenate([x, y[:, -1:]], axis=1)                  # (B, T+1)
        unscored = Tensor(np.zeros((B, 1, V), dtype=logits.dtype))    # the prediction after ids[:, -1]
        loss = causal_lm_loss(cat([logits, unscored], axis=1), ids)   # mean over the B·T next tokens
        return loss, {"tokens": x.size}

    def evaluate(self, model):
        total, n = 0.0, 0
        for i in range(0, len(self.val_x), 32):
            x, y = self.val_x[i:i + 32], self.val_y[i:i + 32]
            logits, _ = model(x)
            total += F.cross_entropy(logits, y, reduction="sum").item()
            n += y.size
        return {"loss": total / n}

    def baselines(self):
        from minilm.downstream.baselines import NGramLM
        unigram = NGramLM(order=1).fit(self.train_ids, self.tokenizer.vocab_size)
        return {"bigram_loss": self.bigram.loss(self.val_x, self.val_y),
                "unigram_loss": unigram.loss(self.val_x, self.val_y)}

    @staticmethod
    def describe(s) -> str:
        b = s["baselines"]
        verdict = "beats" if s["final_loss"] < b["bigram_loss"] else "does NOT beat"
        return (f"GPT: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} nats/token "
                f"(perplexity {np.exp(s['final_loss']):.1f}) after {s['steps']} steps, {s['parameters']:,} "
                f"parameters\nbaselines on the same held-out tokens: bigram {b['bigram_loss']:.3f}, unigram "
                f"{b['unigram_loss']:.3f} -> the Transformer {verdict} the bigram model")


CONFIG = GPTRecipeConfig
describe = GPTRecipe.describe


def build(cfg: GPTRecipeConfig) -> GPTRecipe:
    return GPTRecipe(cfg)
