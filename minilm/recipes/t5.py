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

from dataclasses import dataclass, replace
from typing import Literal, Optional

import numpy as np

from autograd.errors import ConfigError
from minilm.corruption import random_spans_helper, span_corruption, t5_sentinel_ids
from minilm.data import seq2seq_dataset
from minilm.downstream.baselines import NGramLM
from minilm.models.t5 import T5, T5Config
from minilm.recipes.common import CorpusConfig, load_documents, texts
from minilm.recipes.seq2seq import Seq2SeqRecipe
from minilm.recipes import recipe
from minilm.recipes.config import nested
from minilm.train import TrainConfig
from minilm.tokenizers import WordPieceTokenizer

TASK_CHOICES = ("copy", "reverse", "sort", "count", "mixed")
SPAN = "span"   # the prefix LM's task that reads text: T5's span corruption of the corpus (SpanData)


@dataclass
class SpanCorruptionConfig(CorpusConfig):
    """The text and the noise of span corruption (:class:`SpanData`): T5's recipe, and the prefix LM's
    with ``--task span``."""
    input_length: int = 32                         # span corruption: encoder input tokens per example
    noise_density: float = 0.15                    # span corruption rate
    mean_span_length: float = 3.0                  # mean noise span length
    n_sentinels: int = 16                          # sentinel ids at the top of the vocabulary
    vocab_size: int = 400                          # WordPiece vocabulary size


@dataclass
class T5RecipeConfig(SpanCorruptionConfig):
    """``minilm train t5``: one option per field."""
    task: Optional[Literal[TASK_CHOICES]] = None   # train on a prefixed seq2seq task instead of span corruption
    init: Optional[str] = None                     # with --task: fine-tune the T5 of this checkpoint
    min_len: int = 3                               # --task: shortest input in letters
    max_len: int = 10                              # --task: longest input in letters
    model: T5Config = nested(T5Config(n_layer=2, n_head=4, n_embd=64, dropout=0.0),
                             set_by_recipe=("vocab_size", "pad_id", "eos_id", "decoder_start_id", "seed"))
    batch_size: Optional[int] = None               # examples per step (default 16 for span corruption,
                                                   # 32 with --task)
    train: TrainConfig = nested(TrainConfig(steps=600))


# ---- shared with the prefix-LM recipe: the prefixed toy tasks as ids ----------------------------

def task_tokenizer(vocab_size: int = 64):
    """A WordPiece vocabulary for the toy tasks: the task names, ':', the letters, the digits."""
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
        return seq2seq_dataset(self.task, n, rng=rng, min_len=self.min_len, max_len=self.max_len)

    def encode(self, pairs):
        return [(self.tok.encode(s) + [self.eos_id], self.tok.encode(t) + [self.eos_id]) for s, t in pairs]

    def sample(self, n, rng):
        return self.encode(self.texts(n, rng))

    def max_target_len(self) -> int:
        return max(len(t) for _, t in self.val) + 2

    def baselines(self, vocab_size) -> dict:
        copy = np.mean([s.split(":", 1)[1].strip() == t for s, t in self.val_text])
        unigram = NGramLM(order=1).fit([np.array(t) for _, t in self.train_sample], vocab_size)
        y = np.concatenate([t for _, t in self.val])
        return {"copy_exact_match": float(copy), "unigram_loss": unigram.loss(y, y)}


class SpanData:
    """T5's span corruption of a corpus as (input ids, target ids) pairs, with :class:`TaskData`'s
    interface (``val``, ``sample``, ``baselines``): a WordPiece vocabulary trained on the training
    documents with ``n_sentinels`` sentinels appended, windows of ``raw_length`` tokens of their
    stream, fresh for every batch, and 128 fixed windows of the held-out documents."""

    def __init__(self, cfg: SpanCorruptionConfig):
        self.cfg = cfg
        train_docs, val_docs = load_documents(cfg)
        self.tok = tokenizer_with_sentinels(texts(train_docs), cfg.vocab_size, cfg.n_sentinels)
        self.sentinels = t5_sentinel_ids(self.tok.vocab_size, cfg.n_sentinels)    # [V-1, V-2, ...]
        self.eos_id = self.tok.sep_id
        self.raw_length, self.target_length = random_spans_helper(
            cfg.input_length, cfg.noise_density, cfg.mean_span_length)
        self.train_ids = self._stream(train_docs)
        self.val = self.windows(self._stream(val_docs), 128, np.random.default_rng([cfg.seed, 99]))

    def _stream(self, docs) -> np.ndarray:
        return np.asarray([i for d in docs for s in d for i in self.tok.encode(s)], dtype=np.int64)

    def windows(self, stream, n, rng) -> list:
        """``n`` windows of ``stream`` at random starts, each through ``span_corruption``."""
        if len(stream) <= self.raw_length:
            raise ConfigError(f"span corruption: the text has {len(stream)} tokens, fewer than one window of "
                              f"{self.raw_length}; use a bigger corpus or a smaller --input-length")
        starts = rng.integers(0, len(stream) - self.raw_length, size=n)
        return [span_corruption(stream[s:s + self.raw_length], sentinel_ids=self.sentinels, eos_id=self.eos_id,
                                rng=rng, noise_density=self.cfg.noise_density,
                                mean_span_length=self.cfg.mean_span_length) for s in starts]

    def sample(self, n, rng) -> list:
        return self.windows(self.train_ids, n, rng)

    def max_target_len(self) -> int:
        return self.target_length + 2

    def baselines(self, vocab_size) -> dict:
        """A unigram model of the targets (it knows how often each sentinel and token occurs, not the input)."""
        train_targets = [t for _, t in self.windows(self.train_ids, 1000, np.random.default_rng([self.cfg.seed, 98]))]
        unigram = NGramLM(order=1).fit(train_targets, vocab_size)
        y = np.concatenate([t for _, t in self.val])
        return {"unigram_loss": unigram.loss(y, y)}


def tokenizer_with_sentinels(corpus_texts, vocab_size, n_sentinels):
    """WordPiece on the corpus, then ``<extra_id_{n-1}> … <extra_id_0>`` appended, so that
    ``<extra_id_0>`` is the last id (T5's convention)."""
    base = WordPieceTokenizer.train(corpus_texts, vocab_size)
    vocab = [base.id_to_token(i) for i in range(base.vocab_size)]
    sentinels = [f"<extra_id_{k}>" for k in reversed(range(n_sentinels))]
    return WordPieceTokenizer(vocab + sentinels, additional_special_tokens=sentinels)


# ---- the recipe ---------------------------------------------------------------------------------

@recipe("t5", config=T5RecipeConfig, chapter=9)
class T5Recipe(Seq2SeqRecipe):
    def __init__(self, cfg: T5RecipeConfig):
        self.cfg = cfg
        self.batch_size = cfg.batch_size or (16 if cfg.task is None else 32)
        if cfg.init is not None and cfg.task is None:
            raise ConfigError("minilm train t5: --init fine-tunes on a --task; name the task")
        if cfg.corpus is not None and cfg.task is not None:
            raise ConfigError(f"minilm train t5: --corpus {cfg.corpus} is span corruption's text, but --task "
                              f"{cfg.task} trains on the task's pairs alone; pre-train with --corpus, then fine-tune "
                              "that checkpoint with --task and --init")
        if cfg.task is not None:
            self._task_setup(cfg)
            return
        self.data = SpanData(cfg)                                               # span corruption of the corpus
        self.tokenizer, self.sentinels, self.eos_id = self.data.tok, self.data.sentinels, self.data.eos_id
        self.val = self.data.val
        self.model_config = replace(cfg.model, vocab_size=self.tokenizer.vocab_size, pad_id=self.tokenizer.pad_id,
                                    eos_id=self.eos_id)
        self.model = T5(self.model_config, rng=np.random.default_rng(cfg.seed))

    # seq2seq tasks -----------------------------------------------------------------------------
    def _task_setup(self, cfg):
        if cfg.init is not None:
            from minilm.checkpoint import load_model
            self.model, self.tokenizer, _ = load_model(cfg.init)
            if not isinstance(self.model, T5):
                raise ConfigError(f"minilm train t5 --init: {cfg.init} holds a {type(self.model).__name__}, not a T5")
            self.model.train()
            self.model_config = self.model.config
        else:
            self.tokenizer = task_tokenizer()
            self.model_config = replace(cfg.model, vocab_size=self.tokenizer.vocab_size,
                                        pad_id=self.tokenizer.pad_id, eos_id=self.tokenizer.sep_id)
            self.model = T5(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.eos_id = self.model_config.eos_id
        self.data = TaskData(cfg.task, self.tokenizer, eos_id=self.eos_id, seed=cfg.seed,
                             min_len=cfg.min_len, max_len=cfg.max_len)
        self.val = self.data.val

    # the recipe protocol (the arrays and the loss: Seq2SeqRecipe) ------------------------------
    def batch(self, rng):
        return self._arrays(self.data.sample(self.batch_size, rng))

    def evaluate(self, model):
        metrics = self.token_metrics(model, self.val)
        if self.cfg.task is not None:
            metrics["exact_match"] = self.greedy_exact_match(model, self.val, self.data.max_target_len(), self.eos_id)
        return metrics

    def baselines(self):
        return self.data.baselines(self.tokenizer.vocab_size)

    @staticmethod
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

