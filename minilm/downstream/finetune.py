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

Any other pre-trained encoder with an ``encode(ids, attention_mask)`` method (RoBERTa, ELECTRA's
discriminator) is fine-tuned the same way by :func:`finetune_sentiment` (``EncoderClassifier``: a
new layer on h[CLS]). Every loop here is ``minilm.train.fit`` with ``short_run``'s schedule.

Letters: B batch, T time (tokens per sentence), N examples.
"""
from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

import autograd.functional as F
from autograd import enable_grad, nn, no_grad
from autograd.errors import ConfigError
from minilm.downstream.baselines import text_baselines
from minilm.corruption import mask_tokens
from minilm.data import (create_nsp_instances, encode_documents, nsp_arrays, pad_batch, sentiment_dataset,
                         synthetic_corpus)
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining, BertForSequenceClassification
from minilm.models.bert_heads import sentence_logits
from minilm.tokenizers import WordPieceTokenizer
from minilm.train import fit, short_run

__all__ = ["FinetuneConfig", "run_finetune", "pretrain_bert", "mlm_nsp_batches", "finetune_classifier", "encode_texts",
           "classification_accuracy", "sentiment_split", "finetune_and_score", "pretrain_encoder",
           "bert_classifier", "EncoderClassifier", "finetune_sentiment"]

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


def mlm_nsp_batches(tokenizer, documents, *, batch_size: int, max_seq_length: int, seed):
    """``(batch, n_pairs)``: ``batch(step_rng)`` draws ``batch_size`` of BERT's sentence pairs from
    ``documents`` (lists of sentence strings; three passes of ``create_nsp_instances``) and masks them
    (Task 4.1's 80/10/10): a dict of ``input_ids``, ``segment_ids``, ``attention_mask`` (B, T),
    ``mlm_labels`` (B, T; -100 where nothing is predicted) and ``nsp_labels`` (B,)."""
    rng = np.random.default_rng([*np.atleast_1d(seed), 11])
    ids = encode_documents(documents, tokenizer.encode)
    instances = [inst for _ in range(3) for inst in create_nsp_instances(
        ids, max_seq_length=max_seq_length, rng=rng, cls_id=tokenizer.cls_id, sep_id=tokenizer.sep_id)]
    data = nsp_arrays(instances, max_seq_length=max_seq_length, pad_id=tokenizer.pad_id)
    special = tokenizer.special_ids

    def batch(step_rng) -> dict:
        idx = step_rng.integers(0, len(instances), size=batch_size)
        inputs, labels = mask_tokens(data["input_ids"][idx], mask_id=tokenizer.mask_id,
                                     vocab_size=tokenizer.vocab_size, special_ids=special, rng=step_rng)
        return {"input_ids": inputs, "segment_ids": data["segment_ids"][idx],
                "attention_mask": data["attention_mask"][idx], "mlm_labels": labels,
                "nsp_labels": data["next_sentence_label"][idx]}

    return batch, len(instances)


def pretrain_bert(model: BertForPreTraining, tokenizer, documents, *, steps: int, batch_size: int, lr: float,
                  max_seq_length: int, seed, progress: bool = False) -> list[float]:
    """MLM + NSP on ``documents`` (lists of sentence strings); returns the training losses."""
    batch, n_pairs = mlm_nsp_batches(tokenizer, documents, batch_size=batch_size, max_seq_length=max_seq_length,
                                     seed=seed)
    _log(progress, f"pre-training BERT (MLM + NSP) on {n_pairs} sentence pairs for {steps} steps")

    def loss_fn(step_rng):
        b = batch(step_rng)
        out = model(b["input_ids"], b["segment_ids"], b["attention_mask"], mlm_labels=b["mlm_labels"],
                    nsp_labels=b["nsp_labels"])
        return out["loss"]

    return fit(model, loss_fn, short_run(steps, lr, [*np.atleast_1d(seed), 12]), name="pre-training",
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
                        batch_size: int, lr: float, seed, progress: bool = False, segment_ids=None) -> list[float]:
    """Train every parameter on the labelled sentences (mean CE of the logits); returns the losses.
    ``segment_ids`` (N, T): sentence A / B of a pair, as in pre-training (None: all A)."""
    labels = np.asarray(labels)
    _log(progress, f"fine-tuning on {len(labels)} sentences for {steps} steps (pool={model.pool})")

    def loss_fn(step_rng):
        idx = step_rng.integers(0, len(labels), size=batch_size)
        T = int(mask[idx].sum(axis=1).max())  # cut the batch to its longest sentence
        segs = None if segment_ids is None else segment_ids[idx, :T]
        return model(ids[idx, :T], segs, mask[idx, :T], labels=labels[idx])["loss"]

    return fit(model, loss_fn, short_run(steps, lr, seed), name="fine-tuning", progress=progress)


def classification_accuracy(model: BertForSequenceClassification, ids, mask, labels, batch_size: int = 256,
                            segment_ids=None) -> np.ndarray:
    """A boolean array: was each example classified correctly?"""
    model.eval()
    preds = []
    with no_grad():
        for i in range(0, len(ids), batch_size):
            segs = None if segment_ids is None else segment_ids[i:i + batch_size]
            preds.append(model(ids[i:i + batch_size], segs, mask[i:i + batch_size])["logits"].data.argmax(-1))
    return np.concatenate(preds) == np.asarray(labels)


def finetune_at_best_rate(make_classifier: Callable, train, dev, test, *, lrs, steps: int, seed,
                          batch_size: int = 32) -> tuple[float, float]:
    """Fine-tuning with the learning rate chosen on a development split, as BERT chooses it (Devlin
    et al. 2019, §4.1: the best of 5e-5, 4e-5, 3e-5 and 2e-5 on the dev set, per task).

    For each rate in ``lrs``, ``make_classifier()`` returns a classifier whose encoder starts from
    the pre-trained weights (the caller decides how: a copy, or the weights reloaded in place); every
    weight is trained ``steps`` steps of ``batch_size`` examples on ``train``, and the rate whose
    classifier is most accurate on ``dev`` (the first on a tie) is scored on ``test``. Each split is
    ``(ids (N, T), mask (N, T), labels (N,))``. A classifier is scored on ``test`` as soon as it is the
    best on ``dev`` so far, before the next rate's (which may share its encoder) is made; only the
    best one's score is returned. Returns ``(test accuracy, that rate)``; restoring the encoder's
    pre-trained weights afterwards is the caller's job."""
    if not lrs:
        raise ValueError("finetune_at_best_rate: no learning rate given (lrs is empty)")
    best_dev, best = -1.0, None
    with enable_grad():                                    # also when called inside an evaluation
        for lr in lrs:
            clf = make_classifier()
            finetune_classifier(clf, *train, steps=steps, batch_size=batch_size, lr=lr, seed=[seed, 5])
            dev_accuracy = float(classification_accuracy(clf, *dev).mean())
            if dev_accuracy > best_dev:
                best_dev, best = dev_accuracy, (float(classification_accuracy(clf, *test).mean()), lr)
    return best


def _load_pretrained(path):
    """(BertModel, tokenizer) from a ``minilm train bert`` checkpoint."""
    from minilm.checkpoint import load_model
    model, tokenizer, meta = load_model(path)
    bert = getattr(model, "bert", model)
    if type(bert).__name__ != "BertModel" or tokenizer is None:
        raise ConfigError(f"finetune: {path} holds a {type(model).__name__} (family {meta.get('family')!r}) "
                          "without a BERT encoder and tokenizer; pass a checkpoint of 'minilm train bert'")
    return bert, tokenizer


def sentiment_split(seed: int, n_train: int, n_test: int) -> tuple[list, list]:
    """The labelled sentences of one seed: ``(train, test)`` examples (``text``, ``label``,
    ``negated``), both drawn from ``default_rng([seed, 1])``, train first."""
    data_rng = np.random.default_rng([seed, 1])
    return sentiment_dataset(n_train, rng=data_rng), sentiment_dataset(n_test, rng=data_rng)


def finetune_and_score(clf, tokenizer, train, test, max_len: int, *, steps: int, batch_size: int, lr: float,
                       seed, progress: bool = False) -> tuple[dict, list[float]]:
    """Fine-tune ``clf`` on the ``train`` examples, score it and a bag of words on ``test``:
    ``(scores, training losses)``; scores are the accuracy overall, on the negated and on the plain
    sentences, for the model and for ``BagOfWordsClassifier``, and ``n_test_negated``."""
    y_train, y_test = np.array([e.label for e in train]), np.array([e.label for e in test])
    negated = np.array([e.negated for e in test])
    ids_train, mask_train = encode_texts(tokenizer, [e.text for e in train], max_len)
    ids_test, mask_test = encode_texts(tokenizer, [e.text for e in test], max_len)
    losses = finetune_classifier(clf, ids_train, mask_train, y_train, steps=steps, batch_size=batch_size,
                                 lr=lr, seed=seed, progress=progress)
    correct = classification_accuracy(clf, ids_test, mask_test, y_test)
    bow = text_baselines([e.text for e in train], y_train, [e.text for e in test], y_test, negated)
    return {"accuracy": float(correct.mean()), "negation_accuracy": float(correct[negated].mean()),
            "plain_accuracy": float(correct[~negated].mean()),
            **{k: bow[k] for k in ("bow_accuracy", "bow_negation_accuracy", "bow_plain_accuracy")},
            "n_test_negated": int(negated.sum())}, losses


def pretrain_encoder(cfg: FinetuneConfig, texts, *, docs=None, progress: bool = False, heads: bool = False):
    """``(BertModel, tokenizer, pre-training losses)``: a WordPiece tokenizer of ``cfg.vocab_size``
    trained on ``cfg.n_docs`` synthetic documents (or ``docs``, lists of sentences such as
    ``read_corpus`` gives) and ``texts`` (the task's training sentences, so that their words have
    tokens), and a BERT of ``cfg``'s size pre-trained on the documents (MLM + NSP) for
    ``cfg.pretrain_steps`` steps (0 = a random encoder). ``heads=True``: the whole
    ``BertForPreTraining`` instead of its encoder (a distillation teacher needs its MLM head)."""
    if docs is None:
        docs = synthetic_corpus(cfg.n_docs, rng=np.random.default_rng([cfg.seed, 2]))
    tokenizer = WordPieceTokenizer.train([s for d in docs for s in d] + list(texts), cfg.vocab_size)
    config = BertConfig(vocab_size=tokenizer.vocab_size, max_position_embeddings=cfg.max_seq_length,
                        n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd, dropout=cfg.dropout)
    pre = BertForPreTraining(config, rng=np.random.default_rng([cfg.seed, 3]))
    losses = []
    if cfg.pretrain_steps:
        losses = pretrain_bert(pre, tokenizer, docs, steps=cfg.pretrain_steps, batch_size=cfg.batch_size,
                               lr=cfg.pretrain_lr, max_seq_length=cfg.max_seq_length, seed=cfg.seed, progress=progress)
    return (pre if heads else pre.bert), tokenizer, losses


def bert_classifier(bert, num_labels: int = 2, *, seed, pool: str = "cls") -> BertForSequenceClassification:
    """A ``BertForSequenceClassification`` holding a copy of the pre-trained encoder ``bert``; only
    its ``classifier`` is new (drawn from ``default_rng([seed, 4])``)."""
    clf = BertForSequenceClassification(bert.config, num_labels, rng=np.random.default_rng([seed, 4]), pool=pool)
    clf.bert.load_state_dict(bert.state_dict())
    return clf


def run_finetune(cfg: FinetuneConfig, *, checkpoint=None, progress: bool = True) -> dict:
    """The whole experiment; returns the numbers ``minilm finetune --json`` prints."""
    t0 = time.time()
    train, test = sentiment_split(cfg.seed, cfg.n_train, cfg.n_test)
    if checkpoint is not None:
        bert, tokenizer = _load_pretrained(checkpoint)
        pretrain_losses = []
        _log(progress, f"loaded a pre-trained BERT from {checkpoint}")
    else:
        bert, tokenizer, pretrain_losses = pretrain_encoder(cfg, [e.text for e in train], progress=progress)
    clf = bert_classifier(bert, 2, seed=cfg.seed, pool=cfg.pool)
    scores, losses = finetune_and_score(clf, tokenizer, train, test, bert.config.max_position_embeddings,
                                        steps=cfg.steps, batch_size=cfg.batch_size, lr=cfg.lr, seed=[cfg.seed, 5],
                                        progress=progress)
    n_test_negated = scores.pop("n_test_negated")
    return {
        "family": cfg.family, "pool": cfg.pool, **scores,
        "n_train": cfg.n_train, "n_test": cfg.n_test, "n_test_negated": n_test_negated,
        "pretrain_steps": 0 if checkpoint is not None else cfg.pretrain_steps,
        "pretrain_loss_first": pretrain_losses[0] if pretrain_losses else None,
        "pretrain_loss_last": float(np.mean(pretrain_losses[-20:])) if pretrain_losses else None,
        "steps": cfg.steps,
        "finetune_loss_first": losses[0], "finetune_loss_last": float(np.mean(losses[-20:])),
        "checkpoint": None if checkpoint is None else str(checkpoint),
        "config": asdict(cfg),
        "seconds": round(time.time() - t0, 1),
    }


# ---- any pre-trained encoder: RoBERTa, ELECTRA's discriminator, ... ---------------------------------

class EncoderClassifier(nn.Module):
    """A pre-trained encoder (any model with ``encode(ids, attention_mask) -> (B, T, C)``: RoBERTa,
    ELECTRA's discriminator) + a new Linear on h[CLS] (Task 5.4's ``classify_logits``), or with
    ``pool="mean"`` / ``"max"`` on the real tokens' states pooled (Task 5.4's ``pool``). It has the
    call signature of ``BertForSequenceClassification``, so ``finetune_classifier`` trains it."""

    def __init__(self, encoder_model, hidden_size: int, num_labels: int = 2, *, rng, pool: str = "cls"):
        super().__init__()
        if pool not in POOLING:
            raise ConfigError(f"EncoderClassifier: pool={pool!r}, expected one of {POOLING}")
        self.encoder_model, self.pool = encoder_model, pool
        self.classifier = nn.Linear(hidden_size, num_labels, rng=rng, init_std=0.02)

    def forward(self, input_ids, segment_ids=None, attention_mask=None, labels=None) -> dict:
        h = self.encoder_model.encode(input_ids, attention_mask)                             # (B, T, C)
        logits = sentence_logits(h, attention_mask, self.pool, self.classifier)               # (B, K)
        return {"logits": logits, "loss": None if labels is None else F.cross_entropy(logits, labels)}


def finetune_sentiment(model, tokenizer, *, steps: int = 200, n_train: int = 2000, n_test: int = 1000,
                       batch_size: int = 32, lr: float = 1e-3, seed: int = 0, progress: bool = False) -> dict:
    """Fine-tune a *copy* of ``model``'s encoder (``model`` is left as it is) with a new layer on
    h[CLS] on the sentiment-with-negation task; returns test ``accuracy``, ``negation_accuracy``,
    ``plain_accuracy`` and the bag-of-words baseline's (``bow_accuracy``, ``bow_negation_accuracy``).

    ``model`` is a ``RobertaForMaskedLM``, an ``Electra`` or any model built as
    ``Cls(config, *, rng)`` with an ``encode`` method; ``tokenizer`` the one it was trained with."""
    clone = type(model)(model.config, rng=np.random.default_rng(0))
    clone.load_state_dict(model.state_dict())
    clf = EncoderClassifier(clone, model.config.n_embd, 2, rng=np.random.default_rng([seed, 4]))
    train, test = sentiment_split(seed, n_train, n_test)
    scores, _ = finetune_and_score(clf, tokenizer, train, test, model.config.max_position_embeddings, steps=steps,
                                   batch_size=batch_size, lr=lr, seed=[seed, 5], progress=progress)
    return {**scores, "steps": steps, "n_train": n_train, "n_test": n_test}
