"""T5: span-corruption pre-training, or a text-to-text task with a prefix ("reverse: d a c" → "c a d").

Default: T5's unsupervised objective (Raffel et al. 2020 §3.1.4; ``span_corruption`` in
google-research/text-to-text-transfer-transformer, t5/data/preprocessors.py) on windows of the corpus.
15% of the tokens, in spans of mean length 3, are cut out of the encoder input, each span replaced
by one sentinel; the decoder writes the spans back, each after its sentinel. The sentinels are
the top ids of the vocabulary, counting down (<extra_id_0> = V-1), as in T5. [SEP] plays </s>,
[PAD] (id 0) is both padding and the decoder's start token. The summary compares the held-out
loss per target token with a unigram model of the targets (which knows how often each sentinel
and token occurs, but not the input).

With --task reverse|sort|copy|count|mixed: train on the prefixed toy tasks of
minilm.data.seq2seq_tasks and report exact-match accuracy of greedy decoding on held-out
examples, against copying the input (right only where the answer equals the input) and a unigram
model of the answers. --init CHECKPOINT fine-tunes a pre-trained T5 (its tokenizer is kept).
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd.errors import ConfigError
from minilm.recipes.common import add_corpus_arguments, load_documents, texts

TRAIN_DEFAULTS = {"steps": 600, "lr": 3e-3, "warmup": 50, "eval_every": 100, "checkpoint_every": 100}
TASK_CHOICES = ("copy", "reverse", "sort", "count", "mixed")


def add_arguments(p):
    add_corpus_arguments(p)
    p.add_argument("--task", choices=TASK_CHOICES, default=None,
                   help="train on a prefixed seq2seq task instead of span corruption")
    p.add_argument("--init", default=None, help="with --task: fine-tune the T5 of this checkpoint")
    p.add_argument("--input-length", type=int, default=32,
                   help="span corruption: encoder input tokens per example (default 32)")
    p.add_argument("--noise-density", type=float, default=0.15, help="span corruption rate (default 0.15)")
    p.add_argument("--mean-span-length", type=float, default=3.0, help="mean noise span length (default 3)")
    p.add_argument("--n-sentinels", type=int, default=16, help="sentinel ids at the top of the vocabulary (default 16)")
    p.add_argument("--min-len", type=int, default=3, help="--task: shortest input in letters (default 3)")
    p.add_argument("--max-len", type=int, default=10, help="--task: longest input in letters (default 10)")
    p.add_argument("--n-layer", type=int, default=2, help="encoder and decoder blocks each (default 2)")
    p.add_argument("--n-head", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--n-embd", type=int, default=64, help="model width (default 64)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="examples per step (default 16 for span corruption, 32 with --task)")
    p.add_argument("--vocab-size", type=int, default=400, help="WordPiece vocabulary size (default 400)")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout probability (default 0)")


# ---- shared with the prefix-LM recipe: the prefixed toy tasks as ids ----------------------------

def task_tokenizer(vocab_size: int = 64):
    """A WordPiece vocabulary for the toy tasks: the task names, ':', the letters, the digits."""
    from minilm.data import seq2seq_dataset
    from minilm.tokenizers import WordPieceTokenizer
    pairs = seq2seq_dataset("mixed", 2000, rng=np.random.default_rng(0), min_len=1, max_len=12)
    return WordPieceTokenizer.train([s for pair in pairs for s in pair], vocab_size)


class TaskData:
    """(source ids + EOS, target ids + EOS) pairs of one toy task; fresh pairs for every batch
    (the tasks are generated, so there is no end to the training data) and a fixed held-out set."""

    def __init__(self, task, tokenizer, *, eos_id, seed, min_len=3, max_len=10, n_val=200):
        self.task, self.tok, self.eos_id = task, tokenizer, eos_id
        self.min_len, self.max_len = min_len, max_len
        self.val_text = self.texts(n_val, np.random.default_rng([seed, 4242]))
        self.val = self.encode(self.val_text)
        self.train_sample = self.encode(self.texts(2000, np.random.default_rng([seed, 4343])))

    def texts(self, n, rng):
        from minilm.data import seq2seq_dataset
        return seq2seq_dataset(self.task, n, rng=rng, min_len=self.min_len, max_len=self.max_len)

    def encode(self, pairs):
        return [(self.tok.encode(s) + [self.eos_id], self.tok.encode(t) + [self.eos_id]) for s, t in pairs]

    def sample(self, n, rng):
        return self.encode(self.texts(n, rng))

    def max_target_len(self) -> int:
        return max(len(t) for _, t in self.val) + 2

    def baselines(self, vocab_size) -> dict:
        from minilm.downstream.baselines import NGramLM
        copy = np.mean([s.split(":", 1)[1].strip() == t for s, t in self.val_text])
        unigram = NGramLM(order=1).fit([np.array(t) for _, t in self.train_sample], vocab_size)
        y = np.concatenate([t for _, t in self.val])
        return {"copy_exact_match": float(copy), "unigram_loss": unigram.loss(y, y)}


def exact_match(predicted: list, targets: list) -> float:
    """Share of rows whose prediction (up to and including EOS) equals the target exactly."""
    return float(np.mean([list(p) == list(t) for p, t in zip(predicted, targets)]))


def token_stats(logits, labels) -> tuple[float, float, int]:
    """(summed CE, correct argmax count, number of counted positions) over labels != -100."""
    labels = np.asarray(labels)
    valid = labels != -100
    ce = F.cross_entropy(logits, labels, reduction="sum").item()
    correct = int(((logits.data.argmax(-1) == labels) & valid).sum())
    return ce, correct, int(valid.sum())


# ---- the recipe ---------------------------------------------------------------------------------

class T5Recipe:
    family = "t5"

    def __init__(self, args):
        from minilm.corruption import random_spans_helper, t5_sentinel_ids
        from minilm.models.t5 import T5, T5Config
        self.args = args
        self.batch_size = args.batch_size or (16 if args.task is None else 32)
        if args.init is not None and args.task is None:
            raise ConfigError("minilm train t5: --init fine-tunes on a --task; name the task")
        if args.task is not None:
            self._task_setup(args)
            return
        train_docs, val_docs = load_documents(args)
        self.tokenizer = self._tokenizer_with_sentinels(texts(train_docs), args.vocab_size, args.n_sentinels)
        V = self.tokenizer.vocab_size
        self.sentinels = t5_sentinel_ids(V, args.n_sentinels)                   # [V-1, V-2, ...]
        self.eos_id = self.tokenizer.sep_id
        self.raw_length, self.target_length = random_spans_helper(
            args.input_length, args.noise_density, args.mean_span_length)
        self.train_ids = self._stream(train_docs)
        self.val = self._corrupt_windows(self._stream(val_docs), 128, np.random.default_rng([args.seed, 99]))
        self.model_config = T5Config(vocab_size=V, n_embd=args.n_embd, n_head=args.n_head, n_layer=args.n_layer,
                                     dropout=args.dropout, pad_id=self.tokenizer.pad_id, eos_id=self.eos_id)
        self.model = T5(self.model_config, rng=np.random.default_rng(args.seed))

    # span corruption ---------------------------------------------------------------------------
    @staticmethod
    def _tokenizer_with_sentinels(corpus_texts, vocab_size, n_sentinels):
        """WordPiece on the corpus, then ``<extra_id_{n-1}> … <extra_id_0>`` appended, so that
        ``<extra_id_0>`` is the last id (T5's convention)."""
        from minilm.tokenizers import WordPieceTokenizer
        base = WordPieceTokenizer.train(corpus_texts, vocab_size)
        vocab = [base.id_to_token(i) for i in range(base.vocab_size)]
        sentinels = [f"<extra_id_{k}>" for k in reversed(range(n_sentinels))]
        return WordPieceTokenizer(vocab + sentinels, additional_special_tokens=sentinels)

    def _stream(self, docs) -> np.ndarray:
        return np.asarray([i for d in docs for s in d for i in self.tokenizer.encode(s)], dtype=np.int64)

    def _corrupt_windows(self, stream, n, rng):
        from minilm.corruption import span_corruption
        if len(stream) <= self.raw_length:
            raise ConfigError(f"minilm train t5: the text has {len(stream)} tokens, fewer than one window of "
                              f"{self.raw_length}; use a bigger corpus or a smaller --input-length")
        starts = rng.integers(0, len(stream) - self.raw_length, size=n)
        return [span_corruption(stream[s:s + self.raw_length], sentinel_ids=self.sentinels, eos_id=self.eos_id,
                                rng=rng, noise_density=self.args.noise_density,
                                mean_span_length=self.args.mean_span_length) for s in starts]

    # seq2seq tasks -----------------------------------------------------------------------------
    def _task_setup(self, args):
        from minilm.models.t5 import T5, T5Config
        if args.init is not None:
            from minilm.checkpoint import load_model
            self.model, self.tokenizer, _ = load_model(args.init)
            if not isinstance(self.model, T5):
                raise ConfigError(f"minilm train t5 --init: {args.init} holds a {type(self.model).__name__}, not a T5")
            self.model.train()
            self.model_config = self.model.config
        else:
            self.tokenizer = task_tokenizer()
            self.model_config = T5Config(vocab_size=self.tokenizer.vocab_size, n_embd=args.n_embd,
                                         n_head=args.n_head, n_layer=args.n_layer, dropout=args.dropout,
                                         pad_id=self.tokenizer.pad_id, eos_id=self.tokenizer.sep_id)
            self.model = T5(self.model_config, rng=np.random.default_rng(args.seed))
        self.eos_id = self.model_config.eos_id
        self.data = TaskData(args.task, self.tokenizer, eos_id=self.eos_id, seed=args.seed,
                             min_len=args.min_len, max_len=args.max_len)
        self.val = self.data.val

    # the recipe protocol -----------------------------------------------------------------------
    def _arrays(self, pairs):
        from minilm.data import pad_batch
        src, src_mask = pad_batch([s for s, _ in pairs], self.tokenizer.pad_id)
        labels, _ = pad_batch([t for _, t in pairs], -100)
        return src, src_mask, labels

    def batch(self, rng):
        if self.args.task is not None:
            return self._arrays(self.data.sample(self.batch_size, rng))
        return self._arrays(self._corrupt_windows(self.train_ids, self.batch_size, rng))

    def loss(self, model, batch):
        src, src_mask, labels = batch
        out = model(src, attention_mask=src_mask, labels=labels)
        return out["loss"], {"tokens": int(src_mask.sum() + (labels != -100).sum())}

    def evaluate(self, model):
        total, correct, n = 0.0, 0, 0
        for i in range(0, len(self.val), 64):
            src, src_mask, labels = self._arrays(self.val[i:i + 64])
            logits = model(src, attention_mask=src_mask, labels=labels)["logits"]
            ce, ok, count = token_stats(logits, labels)
            total, correct, n = total + ce, correct + ok, n + count
        metrics = {"loss": total / n, "token_accuracy": correct / n}
        if self.args.task is not None:
            from minilm.models.seq2seq import strip_after_eos
            predicted = []
            for i in range(0, len(self.val), 100):
                src, src_mask, _ = self._arrays(self.val[i:i + 100])
                out = model.generate(src, self.data.max_target_len(), attention_mask=src_mask)
                predicted += strip_after_eos(out, self.eos_id)
            metrics["exact_match"] = exact_match(predicted, [t for _, t in self.val])
        return metrics

    def baselines(self):
        from minilm.downstream.baselines import NGramLM
        V = self.tokenizer.vocab_size
        if self.args.task is not None:
            return self.data.baselines(V)
        rng = np.random.default_rng([self.args.seed, 98])
        train_targets = [t for _, t in self._corrupt_windows(self.train_ids, 1000, rng)]
        unigram = NGramLM(order=1).fit(train_targets, V)
        y = np.concatenate([t for _, t in self.val])
        return {"unigram_loss": unigram.loss(y, y)}


def build(args):
    return T5Recipe(args)


def describe(s) -> str:
    b, m = s["baselines"], s["metrics"]
    head = (f"T5: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} nats/target token after "
            f"{s['steps']} steps, {s['parameters']:,} parameters; token accuracy {m['token_accuracy']:.1%}\n")
    if "exact_match" in m:
        return head + (f"exact match (greedy decoding) {m['exact_match']:.1%}; baselines: copying the input "
                       f"{b['copy_exact_match']:.1%}, unigram loss {b['unigram_loss']:.3f}")
    verdict = "beats" if s["final_loss"] < b["unigram_loss"] else "does NOT beat"
    return head + (f"baseline: a unigram model of the targets {b['unigram_loss']:.3f} -> T5 {verdict} it "
                   "(it reads the corrupted input to fill the spans)")
