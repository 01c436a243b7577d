"""GPT: a causal language model, trained left to right with teacher forcing.

L = −(1/N) Σ_t log p(x_{t+1} | x_≤t) over windows of the token stream (the corpus's sentences
joined, with [SEP] between documents). The summary compares the held-out loss with a bigram model
fitted on the same training split: the Transformer should beat it by using more than one token of
context.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import Tensor, cat, tasks
from minilm.recipes.common import add_corpus_arguments, load_documents, texts, stream

causal_lm_loss = tasks.bind("task04_gpt.loss", "causal_lm_loss")  # Task 4.1: solutions/task04_gpt/loss.py

TRAIN_DEFAULTS = {"steps": 600, "lr": 3e-3, "warmup": 50, "eval_every": 100, "checkpoint_every": 100}


def add_arguments(p):
    add_corpus_arguments(p)
    p.add_argument("--block-size", type=int, default=48, help="context length in tokens (default 48)")
    p.add_argument("--n-layer", type=int, default=2, help="Transformer blocks (default 2)")
    p.add_argument("--n-head", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--n-embd", type=int, default=64, help="model width (default 64)")
    p.add_argument("--batch-size", type=int, default=16, help="windows per step (default 16)")
    p.add_argument("--vocab-size", type=int, default=400, help="WordPiece vocabulary size (default 400)")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout probability (default 0)")


class GPTRecipe:
    family = "gpt"

    def __init__(self, args):
        from minilm.downstream.baselines import NGramLM
        from minilm.data import lm_blocks
        from minilm.models.gpt import GPT, GPTConfig
        from minilm.tokenizers import WordPieceTokenizer
        train_docs, val_docs = load_documents(args)
        self.tokenizer = WordPieceTokenizer.train(texts(train_docs), args.vocab_size)
        self.train_ids = stream(train_docs, self.tokenizer)
        self.val_x, self.val_y = lm_blocks(stream(val_docs, self.tokenizer), args.block_size)
        self.block_size, self.batch_size = args.block_size, args.batch_size
        self.model_config = GPTConfig(vocab_size=self.tokenizer.vocab_size, block_size=args.block_size,
                                      n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd,
                                      dropout=args.dropout)
        self.model = GPT(self.model_config, rng=np.random.default_rng(args.seed))
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


def build(args):
    return GPTRecipe(args)


def describe(s) -> str:
    b = s["baselines"]
    verdict = "beats" if s["final_loss"] < b["bigram_loss"] else "does NOT beat"
    return (f"GPT: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} nats/token "
            f"(perplexity {np.exp(s['final_loss']):.1f}) after {s['steps']} steps, {s['parameters']:,} parameters\n"
            f"baselines on the same held-out tokens: bigram {b['bigram_loss']:.3f}, unigram {b['unigram_loss']:.3f}"
            f" -> the Transformer {verdict} the bigram model")
