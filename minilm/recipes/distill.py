"""Distillation: a fine-tuned BERT teacher teaches a smaller student the sentiment-with-negation task.

1. Teacher: pre-train a BERT (MLM + NSP) on the synthetic corpus and fine-tune it on the labelled
   sentences (``minilm.downstream.finetune``) — or load one with --teacher CKPT (a classifier saved by an
   earlier ``minilm train distill``, OUT/teacher.npz, or a ``minilm train bert`` checkpoint, which
   is then fine-tuned). The teacher is saved to OUT/teacher.npz for reuse.
2. Student: fewer layers (--student-layers) and/or narrower (--student-n-embd); when the widths
   match it starts from the teacher's embeddings and evenly spread layers (DistilBERT).
3. Distil on the same sentences with any weighted mix (minilm/downstream/distill.py): hard CE, soft KL·T²,
   logit MSE, hidden cosine, hidden MSE through W_h, attention-score MSE.

The summary reports the student's accuracy as a share of the teacher's (``retained``), both
parameter counts, and the measured forward-speed ratio.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from autograd import no_grad
from autograd.errors import ConfigError

TRAIN_DEFAULTS = {"steps": 200, "lr": 1e-3, "warmup": 20, "eval_every": 100, "checkpoint_every": 200}


def add_arguments(p):
    g = p.add_argument_group("teacher")
    g.add_argument("--teacher", type=Path, help="a saved teacher (OUT/teacher.npz of an earlier run, or a "
                                                "'minilm train bert' checkpoint to fine-tune); default: train one")
    g.add_argument("--teacher-layers", type=int, default=4, help="teacher encoder layers (default 4)")
    g.add_argument("--n-embd", type=int, default=64, help="teacher width (default 64)")
    g.add_argument("--n-head", type=int, default=2, help="attention heads, teacher and student (default 2)")
    g.add_argument("--teacher-pretrain-steps", type=int, default=100, help="MLM + NSP steps (default 100)")
    g.add_argument("--teacher-steps", type=int, default=200, help="teacher fine-tuning steps (default 200)")
    g.add_argument("--docs", type=int, default=150, help="synthetic documents for pre-training (default 150)")
    g.add_argument("--vocab-size", type=int, default=500, help="WordPiece vocabulary (default 500)")
    s = p.add_argument_group("student and data")
    s.add_argument("--student-layers", type=int, default=2, help="student encoder layers (default 2)")
    s.add_argument("--student-n-embd", type=int, default=None, help="student width (default: the teacher's)")
    s.add_argument("--init", choices=("teacher", "random"), default=None,
                   help="student init: teacher layers (default when widths match) or random")
    s.add_argument("--n-train", type=int, default=2000, help="labelled training sentences (default 2000)")
    s.add_argument("--n-test", type=int, default=1000, help="held-out sentences (default 1000)")
    s.add_argument("--batch-size", type=int, default=32, help="sentences per step (default 32)")
    w = p.add_argument_group("loss weights (minilm/downstream/distill.py)")
    w.add_argument("--temperature", type=float, default=2.0, help="T of the soft targets (default 2)")
    w.add_argument("--alpha-hard", type=float, default=0.5, help="hard-label CE (default 0.5)")
    w.add_argument("--alpha-soft", type=float, default=0.5, help="soft-target KL·T² (default 0.5)")
    w.add_argument("--alpha-mse", type=float, default=0.0, help="logit MSE (default 0)")
    w.add_argument("--alpha-cos", type=float, default=0.0, help="last hidden-state cosine (default 0)")
    w.add_argument("--alpha-hidden", type=float, default=0.0, help="hidden MSE through W_h (default 0)")
    w.add_argument("--alpha-att", type=float, default=0.0, help="attention-score MSE (default 0)")


def _log(msg):
    print(msg, file=sys.stderr, flush=True)


def forward_seconds(models, ids, mask, repeats: int = 5, batch_size: int = 256) -> list[float]:
    """Best-of-``repeats`` wall time of one forward pass over (ids, mask) for each model, in eval
    mode. The models take turns within each repeat, so a busy machine slows them alike."""
    best = [float("inf")] * len(models)
    with no_grad():
        for _ in range(repeats):
            for k, model in enumerate(models):
                model.eval()
                t0 = time.perf_counter()
                for i in range(0, len(ids), batch_size):
                    model(ids[i:i + batch_size], None, mask[i:i + batch_size])
                best[k] = min(best[k], time.perf_counter() - t0)
    return best


class DistillRecipe:
    family = "distill"

    def __init__(self, args):
        from minilm.checkpoint import model_meta, save_checkpoint
        from minilm.data import sentiment_dataset
        from minilm.downstream.distill import DistillWeights, DistilStudent, StudentConfig, default_layer_map, init_student_from_teacher
        from minilm.downstream.finetune import classification_accuracy, encode_texts
        self.weights = DistillWeights(hard=args.alpha_hard, soft=args.alpha_soft, temperature=args.temperature,
                                      logit_mse=args.alpha_mse, cos=args.alpha_cos, hidden_mse=args.alpha_hidden,
                                      attention=args.alpha_att)
        data_rng = np.random.default_rng([args.seed, 1])
        train, test = sentiment_dataset(args.n_train, rng=data_rng), sentiment_dataset(args.n_test, rng=data_rng)
        self.train_texts = [e.text for e in train]
        self.y_train = np.array([e.label for e in train])
        self.y_test = np.array([e.label for e in test])
        self.negated = np.array([e.negated for e in test])
        self.teacher, self.tokenizer = self._teacher(args, train, test)
        self.teacher.eval()
        tcfg = self.teacher.config
        max_len = tcfg.max_position_embeddings
        self.ids, self.mask = encode_texts(self.tokenizer, self.train_texts, max_len)
        self.test_ids, self.test_mask = encode_texts(self.tokenizer, [e.text for e in test], max_len)
        self.teacher_accuracy = float(classification_accuracy(self.teacher, self.test_ids, self.test_mask,
                                                              self.y_test).mean())
        _log(f"teacher: {tcfg.n_layer} layers x {tcfg.n_embd} wide, held-out accuracy {self.teacher_accuracy:.1%}")
        if args.out is not None or args.teacher is None:
            path = Path(args.out or Path("runs") / "distill") / "teacher.npz"
            save_checkpoint(path, model=self.teacher, meta={"family": "distill-teacher",
                                                            **model_meta(self.teacher, tcfg)},
                            tokenizer=self.tokenizer)
            _log(f"teacher saved to {path} (reuse it with --teacher {path})")

        width = args.student_n_embd or tcfg.n_embd
        if self.weights.cos > 0 and width != tcfg.n_embd:
            raise ConfigError(f"distill: --alpha-cos needs equal widths (student {width}, teacher {tcfg.n_embd}); "
                              "use --alpha-hidden (through W_h) for a narrower student")
        self.model_config = StudentConfig(vocab_size=tcfg.vocab_size, max_position_embeddings=max_len,
                                          n_layer=args.student_layers, n_head=args.n_head if args.student_n_embd
                                          else tcfg.n_head, n_embd=width, dropout=tcfg.dropout,
                                          teacher_n_embd=tcfg.n_embd)
        self.model = DistilStudent(self.model_config, 2, rng=np.random.default_rng([args.seed, 6]),
                                   pool=self.teacher.pool)
        init = args.init or ("teacher" if width == tcfg.n_embd else "random")
        self.layer_map = None
        if init == "teacher":
            self.layer_map = default_layer_map(tcfg.n_layer, args.student_layers)
            init_student_from_teacher(self.model.bert, self.teacher.bert, self.layer_map)
            self.model.classifier.load_state_dict(self.teacher.classifier.state_dict())
            _log(f"student initialised from teacher layers {self.layer_map} (and its embeddings and classifier)")
        self.batch_size = args.batch_size

    def _teacher(self, args, train, test):
        from minilm.checkpoint import load_model
        from minilm.data import synthetic_corpus
        from minilm.downstream.finetune import encode_texts, finetune_classifier, pretrain_bert
        from minilm.models.bert import BertConfig, BertForPreTraining, BertForSequenceClassification
        from minilm.tokenizers import WordPieceTokenizer
        if args.teacher is not None:
            model, tok, meta = load_model(args.teacher)
            if isinstance(model, BertForSequenceClassification) and tok is not None:
                _log(f"loaded the teacher from {args.teacher}")
                return model, tok
            bert = getattr(model, "bert", None)
            if bert is None or tok is None or type(bert).__name__ != "BertModel":
                raise ConfigError(f"distill: {args.teacher} holds a {type(model).__name__} (family "
                                  f"{meta.get('family')!r}); expected a BERT classifier or a 'minilm train bert' "
                                  "checkpoint with its tokenizer")
            config = bert.config
        else:
            docs = synthetic_corpus(args.docs, rng=np.random.default_rng([args.seed, 2]))
            tok = WordPieceTokenizer.train([s for d in docs for s in d] + self.train_texts, args.vocab_size)
            config = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=32, n_layer=args.teacher_layers,
                                n_head=args.n_head, n_embd=args.n_embd, dropout=0.1)
            pre = BertForPreTraining(config, rng=np.random.default_rng([args.seed, 3]))
            if args.teacher_pretrain_steps:
                pretrain_bert(pre, tok, docs, steps=args.teacher_pretrain_steps, batch_size=32, lr=2e-3,
                              max_seq_length=32, seed=args.seed, progress=True)
            bert = pre.bert
        teacher = BertForSequenceClassification(config, 2, rng=np.random.default_rng([args.seed, 4]))
        teacher.bert.load_state_dict(bert.state_dict())
        ids, mask = encode_texts(tok, self.train_texts, config.max_position_embeddings)
        finetune_classifier(teacher, ids, mask, self.y_train, steps=args.teacher_steps, batch_size=32, lr=1e-3,
                            seed=[args.seed, 5], progress=True)
        return teacher, tok

    def batch(self, rng):
        idx = rng.integers(0, len(self.y_train), size=self.batch_size)
        T = int(self.mask[idx].sum(axis=1).max())   # cut the batch to its longest sentence
        return {"input_ids": self.ids[idx, :T], "attention_mask": self.mask[idx, :T], "labels": self.y_train[idx]}

    def loss(self, model, batch):
        from minilm.downstream.distill import distill_objective
        loss, terms = distill_objective(model, self.teacher, batch["input_ids"], batch["attention_mask"],
                                        batch["labels"], self.weights)
        return loss, {"tokens": int(batch["attention_mask"].sum()), **terms}

    def evaluate(self, model):
        from minilm.downstream.distill import distill_objective
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
        from minilm.downstream.distill import inference_parameters
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


def build(args):
    for name in ("teacher_layers", "student_layers", "n_train", "n_test", "batch_size"):
        if getattr(args, name) < 1:
            raise ConfigError(f"distill: --{name.replace('_', '-')}={getattr(args, name)}, expected >= 1")
    if not hasattr(args, "out"):
        args.out = None
    return DistillRecipe(args)


def describe(s) -> str:
    m, b = s["metrics"], s["baselines"]
    return (f"distill: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} after {s['steps']} steps\n"
            f"student ({b['student_layers']} layers x {b['student_n_embd']}) accuracy {m['accuracy']:.1%} vs teacher "
            f"({b['teacher_layers']} x {b['teacher_n_embd']}) {m['teacher_accuracy']:.1%}: retained "
            f"{m['retained']:.1%} (majority class {b['majority_accuracy']:.1%})\n"
            f"parameters {b['student_parameters']:,} vs {b['teacher_parameters']:,} ({b['parameter_ratio']:.0%}); "
            f"forward {b['speedup']:.2f}x faster")
