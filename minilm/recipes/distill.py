"""Distillation: a fine-tuned BERT teacher teaches a smaller student the sentiment-with-negation task.

1. Teacher: pre-train a BERT (MLM + NSP) on the synthetic corpus (or --corpus: ``real``, the English
   text minilm ships, or a file) and fine-tune it on the labelled sentences
   (``minilm.downstream.finetune``) — or load one with --teacher CKPT (a classifier saved by an earlier
   ``minilm train distill``, OUT/teacher.npz, or a ``minilm train bert`` checkpoint, which is then
   fine-tuned). The teacher is saved to OUT/teacher.npz for reuse.
2. Student: fewer layers (--student-layers) and/or narrower (--student-n-embd); when the widths
   match it starts from the teacher's embeddings and evenly spread layers (DistilBERT).
3. Distil on the same sentences with any weighted mix (minilm/downstream/distill.py): hard CE, soft KL·T²,
   logit MSE, hidden cosine, hidden MSE through W_h, attention-score MSE.

The summary reports the student's accuracy as a share of the teacher's (``retained``), both
parameter counts, and the measured forward-speed ratio.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import numpy as np

from autograd.errors import ConfigError
from minilm.downstream.distill import (DistillWeights, StudentRecipe, build_student, distill_objective,
                                       forward_seconds, inference_parameters)
from minilm.recipes import recipe
from minilm.recipes.config import nested
from minilm.train import TrainConfig
from minilm.recipes.common import CorpusConfig


@dataclass
class DistillRecipeConfig(CorpusConfig):
    """``minilm train distill``: one option per field; ``corpus`` and ``docs`` are the teacher's
    pre-training text."""
    # the teacher
    teacher: Optional[Path] = None          # a saved teacher (OUT/teacher.npz of an earlier run, or a 'minilm
                                            # train bert' checkpoint to fine-tune); default: train one
    teacher_layers: int = 4                 # teacher encoder layers
    n_embd: int = 64                        # teacher width
    n_head: int = 2                         # attention heads, teacher and student
    teacher_pretrain_steps: int = 100       # MLM + NSP steps
    teacher_steps: int = 200                # teacher fine-tuning steps
    docs: int = 150                         # synthetic documents for the teacher's pre-training (without --corpus)
    vocab_size: int = 500                   # WordPiece vocabulary
    # the student and the data
    student_layers: int = 2                 # student encoder layers
    student_n_embd: Optional[int] = None    # student width (default: the teacher's)
    init: Optional[Literal["teacher", "random"]] = None  # student init: teacher layers (default when widths
                                                         # match) or random
    n_train: int = 2000                     # labelled training sentences
    n_test: int = 1000                      # held-out sentences
    batch_size: int = 32                    # sentences per step
    # the loss weights (minilm/downstream/distill.py)
    temperature: float = 2.0                # T of the soft targets
    alpha_hard: float = 0.5                 # hard-label CE
    alpha_soft: float = 0.5                 # soft-target KL·T²
    alpha_mse: float = 0.0                  # logit MSE
    alpha_cos: float = 0.0                  # last hidden-state cosine
    alpha_hidden: float = 0.0               # hidden MSE through W_h
    alpha_att: float = 0.0                  # attention-score MSE
    out: Optional[Path] = None              # the run's folder (minilm train's --out): teacher.npz goes there
    no_progress: bool = False               # minilm train's --no-progress: no bars for the teacher's training either
    train: TrainConfig = nested(TrainConfig(steps=200, lr=1e-3, warmup=20, checkpoint_every=200))


def _log(msg):
    print(msg, file=sys.stderr, flush=True)


@recipe("distill", config=DistillRecipeConfig, chapter=10)
class DistillRecipe(StudentRecipe):
    """The teacher and the data of ``minilm train distill``; batches and loss are ``StudentRecipe``'s."""

    def __init__(self, cfg: DistillRecipeConfig):
        from minilm.checkpoint import model_meta, save_checkpoint
        for name in ("teacher_layers", "student_layers", "n_train", "n_test", "batch_size"):
            if getattr(cfg, name) < 1:
                raise ConfigError(f"distill: --{name.replace('_', '-')}={getattr(cfg, name)}, expected >= 1")
        from minilm.downstream.finetune import classification_accuracy, encode_texts, sentiment_split
        weights = DistillWeights(hard=cfg.alpha_hard, soft=cfg.alpha_soft, temperature=cfg.temperature,
                                 logit_mse=cfg.alpha_mse, cos=cfg.alpha_cos, hidden_mse=cfg.alpha_hidden,
                                 attention=cfg.alpha_att)
        train, test = sentiment_split(cfg.seed, cfg.n_train, cfg.n_test)
        self.train_texts = [e.text for e in train]
        self.y_train = np.array([e.label for e in train])
        self.y_test = np.array([e.label for e in test])
        self.negated = np.array([e.negated for e in test])
        self.teacher, self.tokenizer = self._teacher(cfg, train, test)
        self.teacher.eval()
        tcfg = self.teacher.config
        max_len = tcfg.max_position_embeddings
        ids, mask = encode_texts(self.tokenizer, self.train_texts, max_len)
        self.test_ids, self.test_mask = encode_texts(self.tokenizer, [e.text for e in test], max_len)
        self.teacher_accuracy = float(classification_accuracy(self.teacher, self.test_ids, self.test_mask,
                                                              self.y_test).mean())
        _log(f"teacher: {tcfg.n_layer} layers x {tcfg.n_embd} wide, held-out accuracy {self.teacher_accuracy:.1%}")
        if cfg.out is not None or cfg.teacher is None:
            path = Path(cfg.out or Path("runs") / "distill") / "teacher.npz"
            save_checkpoint(path, model=self.teacher, meta={"family": "distill-teacher",
                                                            **model_meta(self.teacher, tcfg)},
                            tokenizer=self.tokenizer)
            _log(f"teacher saved to {path} (reuse it with --teacher {path})")

        width = cfg.student_n_embd or tcfg.n_embd
        if weights.cos > 0 and width != tcfg.n_embd:
            raise ConfigError(f"distill: --alpha-cos needs equal widths (student {width}, teacher {tcfg.n_embd}); "
                              "use --alpha-hidden (through W_h) for a narrower student")
        init = cfg.init or ("teacher" if width == tcfg.n_embd else "random")
        student, self.layer_map = build_student(self.teacher, cfg.student_layers,
                                                rng=np.random.default_rng([cfg.seed, 6]), n_embd=width,
                                                n_head=cfg.n_head if cfg.student_n_embd else None,
                                                init_from_teacher=init == "teacher")
        if self.layer_map is not None:
            _log(f"student initialised from teacher layers {self.layer_map} (and its embeddings and classifier)")
        super().__init__(student, self.teacher, self.tokenizer, ids, mask, self.y_train, weights, cfg.batch_size)

    def _teacher(self, cfg, train, test):
        from minilm.checkpoint import load_model
        from minilm.data import read_corpus
        from minilm.downstream.finetune import (FinetuneConfig, bert_classifier, encode_texts, finetune_classifier,
                                                pretrain_encoder)
        from minilm.models.bert_heads import BertForSequenceClassification
        if cfg.teacher is not None:
            if cfg.corpus:
                raise ConfigError(f"distill: --corpus {cfg.corpus} is the text a new teacher is pre-trained on, "
                                  f"but --teacher {cfg.teacher} is already pre-trained; give one of the two")
            model, tok, meta = load_model(cfg.teacher)
            if isinstance(model, BertForSequenceClassification) and tok is not None:
                _log(f"loaded the teacher from {cfg.teacher}")
                return model, tok
            bert = getattr(model, "bert", None)
            if bert is None or tok is None or type(bert).__name__ != "BertModel":
                raise ConfigError(f"distill: {cfg.teacher} holds a {type(model).__name__} (family "
                                  f"{meta.get('family')!r}); expected a BERT classifier or a 'minilm train bert' "
                                  "checkpoint with its tokenizer")
        else:
            pretraining = FinetuneConfig(n_docs=cfg.docs, vocab_size=cfg.vocab_size, n_layer=cfg.teacher_layers,
                                         n_head=cfg.n_head, n_embd=cfg.n_embd, max_seq_length=32, dropout=0.1,
                                         pretrain_steps=cfg.teacher_pretrain_steps, pretrain_lr=2e-3, batch_size=32,
                                         seed=cfg.seed)
            docs = read_corpus(cfg.corpus) if cfg.corpus else None        # None: cfg.docs synthetic documents
            bert, tok, _ = pretrain_encoder(pretraining, self.train_texts, docs=docs, progress=not cfg.no_progress)
        teacher = bert_classifier(bert, 2, seed=cfg.seed)
        ids, mask = encode_texts(tok, self.train_texts, bert.config.max_position_embeddings)
        finetune_classifier(teacher, ids, mask, self.y_train, steps=cfg.teacher_steps, batch_size=32, lr=1e-3,
                            seed=[cfg.seed, 5], progress=not cfg.no_progress)
        return teacher, tok

    def evaluate(self, model):
        from minilm.downstream.finetune import classification_accuracy
        correct = classification_accuracy(model, self.test_ids, self.test_mask, self.y_test)
        total, n = 0.0, len(self.y_test)
        for i in range(0, n, 250):
            sl = slice(i, i + 250)
            T = int(self.test_mask[sl].sum(axis=1).max())
            loss, _ = distill_objective(model, self.teacher, self.test_ids[sl, :T], self.test_mask[sl, :T],
                                        self.y_test[sl], self.weights)
            total += loss.item() * len(self.y_test[sl]) / n
        accuracy = float(correct.mean())
        return {"loss": total, "accuracy": accuracy, "negation_accuracy": float(correct[self.negated].mean()),
                "teacher_accuracy": self.teacher_accuracy, "retained": accuracy / max(self.teacher_accuracy, 1e-12)}

    def baselines(self):
        t_sec, s_sec = forward_seconds([self.teacher, self.model], self.test_ids, self.test_mask)
        self.model.train()
        t_par, s_par = inference_parameters(self.teacher), inference_parameters(self.model)
        return {"teacher_accuracy": self.teacher_accuracy, "majority_accuracy":
                float(max(self.y_test.mean(), 1 - self.y_test.mean())),
                "teacher_parameters": t_par, "student_parameters": s_par, "parameter_ratio": s_par / t_par,
                "teacher_forward_seconds": t_sec, "student_forward_seconds": s_sec, "speedup": t_sec / s_sec,
                "teacher_layers": self.teacher.config.n_layer, "student_layers": self.model_config.n_layer,
                "teacher_n_embd": self.teacher.config.n_embd, "student_n_embd": self.model_config.n_embd,
                "layer_map": self.layer_map}

    @staticmethod
    def describe(s) -> str:
        m, b = s["metrics"], s["baselines"]
        return (f"distill: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} after {s['steps']} steps\n"
                f"student ({b['student_layers']} layers x {b['student_n_embd']}) accuracy {m['accuracy']:.1%} vs "
                f"teacher ({b['teacher_layers']} x {b['teacher_n_embd']}) {m['teacher_accuracy']:.1%}: retained "
                f"{m['retained']:.1%} (majority class {b['majority_accuracy']:.1%})\n"
                f"parameters {b['student_parameters']:,} vs {b['teacher_parameters']:,} ({b['parameter_ratio']:.0%}); "
                f"forward {b['speedup']:.2f}x faster")

