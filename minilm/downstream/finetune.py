"""Pre-train, then fine-tune: BERT on the sentiment-with-negation task, beside a bag-of-words baseline.

The experiment of Devlin et al. 2019 §4 in miniature:

1. **Pre-train** a small BERT (MLM + NSP, ``BertForPreTraining``) on the synthetic corpus for a few
   hundred steps — or load one that ``minilm train bert`` saved (``checkpoint=``).
2. **Fine-tune** it with one new layer on h[CLS] (``BertForSequenceClassification``, Task 5.4) on
   labelled sentences: "the movie was not good ." → negative.
3. **Compare** with a bag-of-words logistic regression trained on the same sentences
   (``minilm.downstream.baselines``). Half of the test sentences are negated; on those a bag of words is near
   chance, because "good" and "not" are each as frequent in positive as in negative sentences —
   only their combination decides. A Transformer reads them together, so it should beat the
   baseline on the negated items. That comparison is the point of the experiment.

    from minilm.downstream.finetune import FinetuneConfig, run_finetune
    result = run_finetune(FinetuneConfig(seed=0))
    result["negation_accuracy"], result["bow_negation_accuracy"]

Letters: B batch, T time (tokens per sentence), N examples.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

from autograd import no_grad, optim
from autograd.errors import ConfigError, TrainingError
from minilm.downstream.baselines import BagOfWordsClassifier
from minilm.corruption import mask_tokens
from minilm.data import (create_nsp_instances, encode_documents, nsp_arrays, pad_batch, sentiment_dataset,
                         synthetic_corpus)
from minilm.models.bert import BertConfig, BertForPreTraining, BertForSequenceClassification
from minilm.tokenizers import WordPieceTokenizer

__all__ = ["FinetuneConfig", "run_finetune", "pretrain_bert", "finetune_classifier", "encode_texts",
           "classification_accuracy"]

FAMILIES = ("bert",)
POOLING = ("cls", "mean", "max")


@dataclass
class FinetuneConfig:
    family: str = "bert"          # the pre-trained encoder (only BERT so far)
    pool: str = "cls"             # the sentence vector: h[CLS] (BERT's), or mean / max over real tokens
    steps: int = 300              # fine-tuning steps
    pretrain_steps: int = 200     # pre-training steps (MLM + NSP); 0 = fine-tune a random encoder
    batch_size: int = 32          # sentences (fine-tuning) or pairs (pre-training) per step
    lr: float = 1e-3              # fine-tuning peak learning rate (AdamW, warm-up then linear decay)
    pretrain_lr: float = 2e-3     # pre-training peak learning rate
    n_docs: int = 300             # synthetic documents to pre-train on
    n_train: int = 2000           # labelled training sentences (half negated)
    n_test: int = 1000            # labelled test sentences
    vocab_size: int = 500         # WordPiece vocabulary (trained on the corpus and the training sentences)
    n_layer: int = 2              # encoder size: small enough for a laptop CPU in a few minutes
    n_head: int = 2
    n_embd: int = 64
    max_seq_length: int = 32      # tokens per NSP pair (and the longest sentence kept)
    dropout: float = 0.1          # BERT's dropout, in pre-training and fine-tuning
    seed: int = 0                 # everything random derives from this

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ConfigError(f"finetune: family={self.family!r}, expected one of {FAMILIES}")
        if self.pool not in POOLING:
            raise ConfigError(f"finetune: pool={self.pool!r}, expected one of {POOLING}")
        for name in ("steps", "batch_size", "n_train", "n_test", "n_docs"):
            if getattr(self, name) < 1:
                raise ConfigError(f"finetune: {name}={getattr(self, name)}, expected >= 1")
        if self.pretrain_steps < 0:
            raise ConfigError(f"finetune: pretrain_steps={self.pretrain_steps}, expected >= 0")


def _log(progress: bool, msg: str) -> None:
    if progress:
        print(msg, file=sys.stderr, flush=True)


def _train_loop(model, loss_fn, steps: int, lr: float, *, seed, name: str, progress: bool) -> list[float]:
    """AdamW (no decay on biases and LayerNorm gains), 10% linear warm-up then linear decay,
    gradient clipping at 1.0. ``loss_fn(rng)`` draws a batch and returns the loss Tensor."""
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    opt = optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=lr)
    warmup = max(1, steps // 10)
    schedule = optim.LambdaLR(opt, lambda s: optim.warmup_linear(min(s, steps), warmup, steps))
    model.train()
    losses, t0 = [], time.time()
    for step in range(steps):
        rng = np.random.default_rng([seed, step])
        for m in model.modules():  # dropout draws from a per-step generator: reproducible
            if isinstance(getattr(m, "rng", None), np.random.Generator):
                m.rng = np.random.default_rng([seed, step, 1])
        loss = loss_fn(rng)
        value = loss.item()
        if not math.isfinite(value):
            raise TrainingError(f"{name}: the loss became {value} at step {step}; try a lower learning rate")
        opt.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.step()
        losses.append(value)
        if progress and (step + 1) % max(1, steps // 5) == 0:
            _log(progress, f"  {name} step {step + 1}/{steps}: loss {np.mean(losses[-20:]):.3f} "
                           f"({time.time() - t0:.0f} s)")
    model.eval()
    return losses


def pretrain_bert(model: BertForPreTraining, tokenizer, documents, *, steps: int, batch_size: int, lr: float,
                  max_seq_length: int, seed, progress: bool = False) -> list[float]:
    """MLM + NSP on ``documents`` (lists of sentence strings); returns the training losses."""
    rng = np.random.default_rng([*np.atleast_1d(seed), 11])
    ids = encode_documents(documents, tokenizer.encode)
    instances = [inst for _ in range(3) for inst in create_nsp_instances(
        ids, max_seq_length=max_seq_length, rng=rng, cls_id=tokenizer.cls_id, sep_id=tokenizer.sep_id)]
    data = nsp_arrays(instances, max_seq_length=max_seq_length, pad_id=tokenizer.pad_id)
    special = tokenizer.special_ids
    _log(progress, f"pre-training BERT (MLM + NSP) on {len(instances)} sentence pairs for {steps} steps")

    def loss_fn(step_rng):
        idx = step_rng.integers(0, len(instances), size=batch_size)
        inputs, labels = mask_tokens(data["input_ids"][idx], mask_id=tokenizer.mask_id,
                                     vocab_size=tokenizer.vocab_size, special_ids=special, rng=step_rng)
        out = model(inputs, data["segment_ids"][idx], data["attention_mask"][idx],
                    mlm_labels=labels, nsp_labels=data["next_sentence_label"][idx])
        return out["loss"]

    return _train_loop(model, loss_fn, steps, lr, seed=[*np.atleast_1d(seed), 12], name="pre-training",
                       progress=progress)


def encode_texts(tokenizer, texts, max_len: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``[CLS] text [SEP]`` for every text, padded to the longest (at most ``max_len`` tokens, the
    rest cut off): ``ids (N, T)`` and ``attention_mask (N, T)``."""
    seqs = [tokenizer.encode(t, add_special_tokens=True) for t in texts]
    T = max(len(s) for s in seqs)
    if max_len is not None:
        T = min(T, max_len)
    return pad_batch(seqs, tokenizer.pad_id, T, truncate=True)


def finetune_classifier(model: BertForSequenceClassification, ids, mask, labels, *, steps: int,
                        batch_size: int, lr: float, seed, progress: bool = False) -> list[float]:
    """Train every parameter on the labelled sentences (mean CE of the logits); returns the losses."""
    labels = np.asarray(labels)
    _log(progress, f"fine-tuning on {len(labels)} sentences for {steps} steps (pool={model.pool})")

    def loss_fn(step_rng):
        idx = step_rng.integers(0, len(labels), size=batch_size)
        T = int(mask[idx].sum(axis=1).max())  # cut the batch to its longest sentence
        return model(ids[idx, :T], None, mask[idx, :T], labels=labels[idx])["loss"]

    return _train_loop(model, loss_fn, steps, lr, seed=seed, name="fine-tuning", progress=progress)


def classification_accuracy(model: BertForSequenceClassification, ids, mask, labels, batch_size: int = 256) -> np.ndarray:
    """A boolean array: was each example classified correctly?"""
    model.eval()
    preds = []
    with no_grad():
        for i in range(0, len(ids), batch_size):
            preds.append(model(ids[i:i + batch_size], None, mask[i:i + batch_size])["logits"].data.argmax(-1))
    return np.concatenate(preds) == np.asarray(labels)


def _load_pretrained(path):
    """(BertModel, tokenizer) from a ``minilm train bert`` checkpoint."""
    from minilm.checkpoint import load_model
    model, tokenizer, meta = load_model(path)
    bert = getattr(model, "bert", model)
    if type(bert).__name__ != "BertModel" or tokenizer is None:
        raise ConfigError(f"finetune: {path} holds a {type(model).__name__} (family {meta.get('family')!r}) "
                          "without a BERT encoder and tokenizer; pass a checkpoint of 'minilm train bert'")
    return bert, tokenizer


def run_finetune(cfg: FinetuneConfig, *, checkpoint=None, progress: bool = True) -> dict:
    """The whole experiment; returns the numbers ``minilm finetune --json`` prints."""
    t0 = time.time()
    data_rng = np.random.default_rng([cfg.seed, 1])
    train = sentiment_dataset(cfg.n_train, rng=data_rng)
    test = sentiment_dataset(cfg.n_test, rng=data_rng)
    train_texts, test_texts = [e.text for e in train], [e.text for e in test]
    y_train = np.array([e.label for e in train])
    y_test = np.array([e.label for e in test])
    negated = np.array([e.negated for e in test])

    if checkpoint is not None:
        bert, tokenizer = _load_pretrained(checkpoint)
        config, pretrain_losses = bert.config, []
        _log(progress, f"loaded a pre-trained BERT from {checkpoint}")
    else:
        docs = synthetic_corpus(cfg.n_docs, rng=np.random.default_rng([cfg.seed, 2]))
        corpus_texts = [s for d in docs for s in d]
        tokenizer = WordPieceTokenizer.train(corpus_texts + train_texts, cfg.vocab_size)
        config = BertConfig(vocab_size=tokenizer.vocab_size, max_position_embeddings=cfg.max_seq_length,
                            n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd, dropout=cfg.dropout)
        pre = BertForPreTraining(config, rng=np.random.default_rng([cfg.seed, 3]))
        pretrain_losses = []
        if cfg.pretrain_steps:
            pretrain_losses = pretrain_bert(pre, tokenizer, docs, steps=cfg.pretrain_steps,
                                            batch_size=cfg.batch_size, lr=cfg.pretrain_lr,
                                            max_seq_length=cfg.max_seq_length, seed=cfg.seed, progress=progress)
        bert = pre.bert

    clf = BertForSequenceClassification(config, 2, rng=np.random.default_rng([cfg.seed, 4]), pool=cfg.pool)
    clf.bert.load_state_dict(bert.state_dict())  # the pre-trained encoder; only `classifier` is new
    max_len = config.max_position_embeddings
    ids_train, mask_train = encode_texts(tokenizer, train_texts, max_len)
    ids_test, mask_test = encode_texts(tokenizer, test_texts, max_len)
    losses = finetune_classifier(clf, ids_train, mask_train, y_train, steps=cfg.steps, batch_size=cfg.batch_size,
                                 lr=cfg.lr, seed=[cfg.seed, 5], progress=progress)
    correct = classification_accuracy(clf, ids_test, mask_test, y_test)

    bow = BagOfWordsClassifier().fit(train_texts, y_train)
    bow_correct = bow.predict(test_texts) == y_test
    result = {
        "family": cfg.family, "pool": cfg.pool,
        "accuracy": float(correct.mean()),
        "negation_accuracy": float(correct[negated].mean()),
        "plain_accuracy": float(correct[~negated].mean()),
        "bow_accuracy": float(bow_correct.mean()),
        "bow_negation_accuracy": float(bow_correct[negated].mean()),
        "bow_plain_accuracy": float(bow_correct[~negated].mean()),
        "n_train": cfg.n_train, "n_test": cfg.n_test, "n_test_negated": int(negated.sum()),
        "pretrain_steps": 0 if checkpoint is not None else cfg.pretrain_steps,
        "pretrain_loss_first": pretrain_losses[0] if pretrain_losses else None,
        "pretrain_loss_last": float(np.mean(pretrain_losses[-20:])) if pretrain_losses else None,
        "steps": cfg.steps,
        "finetune_loss_first": losses[0], "finetune_loss_last": float(np.mean(losses[-20:])),
        "checkpoint": None if checkpoint is None else str(checkpoint),
        "config": asdict(cfg),
        "seconds": round(time.time() - t0, 1),
    }
    return result
