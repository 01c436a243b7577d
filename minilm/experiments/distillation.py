"""Distillation: how much of a fine-tuned teacher's accuracy a shallower student keeps, and which
objective mix keeps the most.

The claims. DistilBERT (Sanh et al. 2019, Table 1 and §4): a 6-layer student of the 12-layer BERT
base, initialised from every other teacher layer and trained with soft targets (KL at T, ×T²),
the MLM loss and a cosine loss on the last hidden states, keeps 97% of BERT's GLUE score (dev
sets) with 40% fewer parameters and runs 60% faster; in its ablation (Table 4) a random
initialisation and dropping the soft targets cost the most GLUE points, dropping the cosine term
less. TinyBERT (Jiao et al. 2020) adds MSE on every layer's hidden states (through a learned W_h)
and attention scores. Hinton et al. (2015) scale the soft term by T² so that its gradients keep
their size as T grows.

The miniature (all of it ``minilm.downstream.distill`` and ``minilm.downstream.finetune``): per seed, one teacher — a
4-layer BERT pre-trained with MLM + NSP on the synthetic corpus (or ``--corpus``), then fine-tuned on a few hundred
labelled pairs of the three-class entailment task (``minilm.data.entailment_dataset``: hypernyms,
added details and negation decide the label; chance is 33%) — is trained once and kept for every
condition of that seed. Each student is a BERT of the teacher's width and 1 or 2 layers,
initialised from evenly spread teacher layers (DistilBERT's init; ``default_layer_map``), its
embeddings and classifier, then trained on the same labelled pairs with one objective:

    hard labels               CE(student, y)                      (fine-tuning a truncated teacher)
    soft targets              ½ CE + ½ T²·KL(teacher ‖ student) at T = 2      (Hinton et al.)
    soft + cosine             + 1 − cos(h_s, h_t) on the last hidden states   (DistilBERT)
    soft + hidden/attn MSE    + MSE(H_s W_h, H_t) on every state + MSE of attention scores (TinyBERT)

Metrics on held-out pairs: **retained**, the student's accuracy as a share of its teacher's
(DistilBERT's "97%"); **accuracy** itself; the student's inference **size** as a share of the
teacher's parameters. The teacher row is the reference (100% by definition).
"""
from __future__ import annotations

from typing import Optional

import json
import tempfile
from dataclasses import dataclass, replace

import numpy as np

from autograd.errors import ConfigError
from minilm.downstream.distill import DistillWeights, StudentRecipe, build_student, inference_parameters
from minilm.experiments import Metric, Plan, settings_of, shared
from minilm.experiments.claims import Beats, applicable

NAME = "distillation"
HELP = "DistilBERT / TinyBERT: student depth and objective vs the share of the teacher's accuracy kept"

CONDITIONS = {  # row label -> (student layers, objective); the teacher row is the reference
    "teacher": None,                     # shown as "teacher (N layers)"
    "1 layer: hard labels": (1, "hard"),
    "1 layer: soft targets": (1, "soft"),
    "1 layer: soft + cosine": (1, "cosine"),
    "1 layer: soft + hidden/attn MSE": (1, "tinybert"),
    "2 layers: hard labels": (2, "hard"),
    "2 layers: soft + cosine": (2, "cosine"),
    "2 layers: soft + hidden/attn MSE": (2, "tinybert"),
}
# Measured on this machine: `python tools/distil_at_pretraining.py` (its defaults, seeds 0-2).
PRETRAINING_DISTILLATION = (
    "Nor in DistilBERT's own setting, where the soft targets are the pre-trained teacher's masked-word "
    "distribution over the whole vocabulary and the student is fine-tuned only afterwards "
    "(tools/distil_at_pretraining.py: a teacher pre-trained 600 steps, 2-layer students distilled 300 steps, "
    "then fine-tuned like the teacher; mean of seeds 0-2): 90.0 with the soft targets (DistilBERT's 5 : 2 : 1), "
    "90.3 without them (MLM + cosine), 91.6 for the same student fine-tuned with no distillation at all "
    "(teacher 94.2). At this size the fine-tuning on 300 labelled pairs, not the distillation before it, sets "
    "the student's score")
# Measured on this machine: the seed-0 teacher (the same one distillation-transfer trains: same settings)
# on its held-out pairs.
SOFT_WHY_NOT = (
    "measured: the teacher's soft targets say little beyond its hard label. At T = 2 it puts 92.7% on its top "
    "class and splits the rest 4.4% / 2.9% (seed 0, held-out pairs; 99.2% on the top class at T = 1): a "
    "three-class task whose label a few words decide leaves no similarity structure among the wrong classes to "
    "pass on. distillation-transfer measures the same from scratch over 11 seeds (soft minus hard -0.6 ± 1.2 "
    "points at T = 2). " + PRETRAINING_DISTILLATION)
# Measured on this machine: run_one of the three 1-layer rows for seeds 3-10 with this file's defaults,
# beside the table's seeds 0-2; and run_one of the 2-layer rows plus a 2-layer student with soft targets alone
# (objective "soft", the 1-layer row's), seeds 0-10, accuracy points.
COSINE_WHY_NOT = (
    "measured: more seeds do not turn it. Over seeds 0-10 the 1-layer student's accuracy with soft targets + "
    "cosine minus soft targets alone is -0.8 ± 0.5 points (mean ± standard error; the cosine row behind in 9 of "
    "11 seeds); soft targets alone against hard labels is 0.0 ± 0.3. Nor does DistilBERT's depth ratio turn it. "
    "Its student keeps every other layer of its teacher: here the 2-layer student of the 4-layer teacher, where "
    "over the same seeds the cosine term neither costs nor adds (+0.1 ± 0.3 points over soft targets alone, "
    "ahead in 5 seeds and behind in 5; soft targets over hard labels +0.1 ± 0.2). So the 1-layer cost comes "
    "with a student that must match the last state of four layers with one, and the paper's gain (+1.46) shows "
    "at neither depth")
CLAIMS = [
    Beats("A deeper student keeps more of its teacher (Sun et al. 2019, Patient KD: its 6-layer students beat "
          "its 3-layer ones; DistilBERT keeps 97% with half of BERT's layers).", "retained",
          above=tuple(c for c, spec in CONDITIONS.items() if spec and spec[0] == 2),
          below=tuple(c for c, spec in CONDITIONS.items() if spec and spec[0] == 1)),
    Beats("Soft targets teach more than hard labels (DistilBERT, Table 4: removing them costs 2.96 GLUE points).",
          "retained", above=("1 layer: soft targets",), below=("1 layer: hard labels",), why_not=SOFT_WHY_NOT),
    Beats("The cosine loss on the hidden states adds to the soft targets (Table 4: removing it costs 1.46).",
          "retained", above=("1 layer: soft + cosine",), below=("1 layer: soft targets",), why_not=COSINE_WHY_NOT),
    Beats("Matching every layer's states and attention adds more (Jiao et al. 2020, TinyBERT: in its ablation of "
          "the distillation objectives, dropping the Transformer-layer distillation costs the most).",
          "retained", above=("1 layer: soft + hidden/attn MSE",), below=("1 layer: soft + cosine",)),
]
OBJECTIVES = {  # DistillWeights of each objective (minilm/downstream/distill.py)
    "hard": {"hard": 1.0, "soft": 0.0},
    "soft": {"hard": 0.5, "soft": 0.5},
    "cosine": {"hard": 0.5, "soft": 0.5, "cos": 1.0},
    "tinybert": {"hard": 0.5, "soft": 0.5, "hidden_mse": 1.0, "attention": 1.0},
}


@dataclass(frozen=True)
class TeacherConfig:
    """The teacher and the labelled pairs, as both distillation experiments (this one and
    ``distillation-transfer``) make them; each experiment's config adds its students."""
    teacher_layers: int = 4         # the teacher BERT's blocks
    n_embd: int = 64                # width of the teacher and every student
    n_head: int = 2                 # attention heads
    vocab_size: int = 400           # WordPiece vocabulary
    docs: int = 200                 # synthetic documents the teacher is pre-trained on
    pretrain_steps: int = 150       # the teacher's MLM + NSP pre-training steps
    teacher_steps: int = 400        # the teacher's fine-tuning steps
    n_train: int = 300              # labelled training pairs for teacher and students
    n_test: int = 1000              # held-out pairs


@dataclass(frozen=True)
class DistillationConfig(TeacherConfig):
    """``minilm experiment distillation``: the teacher (``TeacherConfig``), the students and the data.
    ``quick()``: toy sizes."""
    student_steps: int = 100        # distillation steps per student
    batch_size: int = 32            # pairs (or sequences) per step
    lr: float = 1e-3                # the students' peak learning rate
    temperature: float = 2.0        # T of the soft targets
    max_len: int = 32               # longest sequence in tokens (pre-training and pairs)
    corpus: Optional[str] = None    # the teacher's pre-training text: "real", the English text minilm ships
                                    # (minilm/data/real/), or a UTF-8 text file (or .gz): documents separated by
                                    # blank lines, one sentence per line (default: --docs synthetic documents)

    @classmethod
    def quick(cls):
        return replace(cls(), teacher_layers=2, n_embd=32, docs=40, pretrain_steps=10, teacher_steps=20,
                       n_train=200, n_test=200, student_steps=10)


CONFIG = DistillationConfig
OPTIONS = ("n_train", "student_steps", "temperature", "corpus")


def teacher_label(settings: dict) -> str:
    """The reference row's label: ``teacher (N layers)``."""
    return f"teacher ({settings['teacher_layers']} layers)"


def weights_for(objective: str, temperature: float):
    """The ``DistillWeights`` of one objective of :data:`OBJECTIVES`."""
    if objective not in OBJECTIVES:
        raise ConfigError(f"distillation: unknown objective {objective!r}, expected one of {list(OBJECTIVES)}")
    return DistillWeights(temperature=temperature, **OBJECTIVES[objective])


def encode_pairs(tokenizer, examples, max_len: int) -> tuple[np.ndarray, np.ndarray]:
    """``[CLS] premise [SEP] hypothesis [SEP]`` for every example: ids and attention mask (N, T).
    The segment ids are dropped: ``minilm.downstream.distill`` and ``classification_accuracy`` feed none, and
    the [SEP] already marks the boundary."""
    from minilm.data import pad_batch
    seqs = [tokenizer.encode_pair(e.premise, e.hypothesis)[0] for e in examples]
    return pad_batch(seqs, tokenizer.pad_id, min(max(len(s) for s in seqs), max_len), truncate=True)


# ---- the teacher: trained once per (seed, teacher settings) in a run -----------------------------

TEACHER_KEYS = ("teacher_layers", "n_embd", "n_head", "vocab_size", "docs", "pretrain_steps", "teacher_steps",
                "n_train", "n_test", "batch_size", "max_len")
_CACHE: dict = {}   # {(seed, teacher settings as JSON): bundle}; a run's result never depends on it


def teacher_bundle(seed: int, settings: dict) -> dict:
    """The fine-tuned teacher of ``seed`` with its tokenizer, the encoded train and test pairs, and
    which test pairs it gets right (``correct`` (n_test,) bool) with their mean (``accuracy``).
    Deterministic for (seed, settings); cached (the latest one) so that every condition of a seed
    reuses it, and trained by one process of a ``--jobs`` run, which the others load it from
    (``minilm.experiments.shared``)."""
    key = (seed, json.dumps({k: settings.get(k) for k in TEACHER_KEYS + ("corpus",)}, sort_keys=True))
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = shared.once(f"distillation teacher {key}", lambda: _train_teacher(seed, settings),
                                  _save_teacher, lambda path: _load_teacher(path, seed, settings))
    return _CACHE[key]


def _save_teacher(bundle: dict, path) -> None:
    from minilm.checkpoint import model_meta, save_checkpoint
    teacher = bundle["teacher"]
    save_checkpoint(path, model=teacher, tokenizer=bundle["tokenizer"],
                    meta={"family": "distillation-teacher", "correct": bundle["correct"].astype(int).tolist(),
                          **model_meta(teacher, teacher.config)})


def _load_teacher(path, seed: int, s: dict) -> dict:
    """The bundle of a teacher another process saved: its weights and tokenizer from ``path``, the
    pairs drawn and encoded again (the same draws: ``labelled_pairs``)."""
    from minilm.checkpoint import load_model
    teacher, tok, meta = load_model(path)
    correct = np.array(meta["correct"], dtype=bool)
    return {"teacher": teacher, "tokenizer": tok, **_encoded(tok, *labelled_pairs(seed, s), s),
            "correct": correct, "accuracy": float(correct.mean())}


def labelled_pairs(seed: int, s: dict):
    """The (train, test) entailment examples of ``seed``: ``n_train`` and ``n_test`` pairs."""
    from minilm.data import entailment_dataset
    data_rng = np.random.default_rng([seed, 1])
    return entailment_dataset(s["n_train"], rng=data_rng), entailment_dataset(s["n_test"], rng=data_rng)


def _encoded(tok, train, test, s: dict) -> dict:
    ids, mask = encode_pairs(tok, train, s["max_len"])
    test_ids, test_mask = encode_pairs(tok, test, s["max_len"])
    return {"ids": ids, "mask": mask, "y": np.array([e.label for e in train]), "test_ids": test_ids,
            "test_mask": test_mask, "y_test": np.array([e.label for e in test])}


def pretrained_teacher(seed: int, s: dict, *, steps: int | None = None, heads: bool = False):
    """``(encoder, tokenizer, (train, test))``: the teacher's pre-training (``finetune.pretrain_encoder``:
    MLM + NSP for ``steps``, default ``pretrain_steps``, on the corpus) before any fine-tuning, and the
    labelled pairs of :func:`labelled_pairs`, whose sentences the tokenizer was trained with.
    ``heads=True``: the whole ``BertForPreTraining``."""
    from minilm.downstream.finetune import FinetuneConfig, pretrain_encoder
    train, test = labelled_pairs(seed, s)
    pretraining = FinetuneConfig(n_docs=s["docs"], vocab_size=s["vocab_size"], n_layer=s["teacher_layers"],
                                 n_head=s["n_head"], n_embd=s["n_embd"], max_seq_length=s["max_len"], dropout=0.1,
                                 pretrain_steps=s["pretrain_steps"] if steps is None else steps, pretrain_lr=2e-3,
                                 batch_size=s["batch_size"], seed=seed)
    docs = None
    if s.get("corpus"):   # ``--corpus``: "real" or a file, instead of the synthetic documents
        from minilm.data import read_corpus
        docs = read_corpus(s["corpus"])
    model, tok, _ = pretrain_encoder(pretraining, [t for e in train for t in (e.premise, e.hypothesis)], docs=docs,
                                     heads=heads)
    return model, tok, (train, test)


def _train_teacher(seed: int, s: dict) -> dict:
    bert, tok, (train, test) = pretrained_teacher(seed, s)
    data = _encoded(tok, train, test, s)
    teacher, correct = finetune_on_pairs(bert, data, seed, s)
    return {"teacher": teacher, "tokenizer": tok, **data, "correct": correct, "accuracy": float(correct.mean())}


def finetune_on_pairs(bert, data: dict, seed: int, s: dict):
    """``(classifier, correct)``: a copy of the encoder ``bert`` with a new 3-way layer on h[CLS],
    fine-tuned as the teacher is (``teacher_steps`` steps at lr 1e-3 on the labelled pairs of
    :func:`_encoded`), in eval mode, and which test pairs it gets right ((n_test,) bool)."""
    from minilm.downstream.finetune import bert_classifier, classification_accuracy, finetune_classifier
    clf = bert_classifier(bert, 3, seed=seed)
    finetune_classifier(clf, data["ids"], data["mask"], data["y"], steps=s["teacher_steps"],
                        batch_size=s["batch_size"], lr=1e-3, seed=[seed, 5])
    clf.eval()
    return clf, classification_accuracy(clf, data["test_ids"], data["test_mask"], data["y_test"])   # (n_test,)


# ---- a student, distilled with minilm.train ---------------------------------------------------------

class StudentRun(StudentRecipe):
    """The recipe ``minilm.train.train`` needs to distil ``student`` from the bundle's teacher:
    ``StudentRecipe``'s batches of labelled pairs and loss, scored by held-out cross-entropy and
    accuracy."""

    def __init__(self, bundle: dict, student, weights, batch_size: int):
        super().__init__(student, bundle["teacher"], bundle["tokenizer"], bundle["ids"], bundle["mask"], bundle["y"],
                         weights, batch_size)
        self.b = bundle

    def evaluate(self, model):
        import autograd.functional as F
        b, total, correct = self.b, 0.0, 0
        for i in range(0, len(b["y_test"]), 200):
            sl = slice(i, i + 200)
            logits = model(b["test_ids"][sl], None, b["test_mask"][sl])["logits"]   # (n, 3)
            total += F.cross_entropy(logits, b["y_test"][sl], reduction="sum").item()
            correct += int((logits.data.argmax(-1) == b["y_test"][sl]).sum())
        n = len(b["y_test"])
        return {"loss": total / n, "accuracy": correct / n}

    def baselines(self):
        return {}


def make_student(bundle: dict, layers: int, objective: str, seed: int):
    """A ``DistilStudent`` of ``layers`` blocks at the teacher's width, initialised from evenly
    spread teacher layers, the teacher's embeddings and its classifier (DistilBERT); W_h for the
    TinyBERT objective only."""
    student, _ = build_student(bundle["teacher"], layers, rng=np.random.default_rng([seed, 6, layers]),
                               projection=objective == "tinybert")
    return student


def plan(cfg: DistillationConfig) -> Plan:
    settings = settings_of(cfg)
    if settings["n_train"] < 1 or settings["student_steps"] < 1 or not settings["temperature"] > 0:
        raise ConfigError(f"distillation: n_train={settings['n_train']}, student_steps={settings['student_steps']}, "
                          f"temperature={settings['temperature']}: expected positive values")
    s = settings
    conditions = [teacher_label(s) if spec is None else c for c, spec in CONDITIONS.items()
                  if spec is None or spec[0] < s["teacher_layers"]]
    return Plan(
        title="DistilBERT in miniature: how much of the teacher's entailment accuracy does a shallower "
              "student keep, and with which objective?",
        conditions=conditions,
        metrics=[Metric("retained", "retained (student / teacher)"), Metric("accuracy", "accuracy"),
                 Metric("size", "size, share of the teacher")],
        settings=settings,
        notes=[f"Teacher: BERT {s['teacher_layers']} layers x {s['n_embd']}, MLM + NSP for {s['pretrain_steps']} "
               f"steps on " + (f"{s['docs']} synthetic documents" if not s.get("corpus")
                                else f"the documents of --corpus {s['corpus']}")
               + f", fine-tuned {s['teacher_steps']} steps on "
               f"{s['n_train']} labelled entailment pairs (3 classes, chance 33%); one teacher per seed.",
               f"Students: the teacher's width, initialised from its layers (DistilBERT), "
               f"{s['student_steps']} steps on the same pairs; soft targets at T = {s['temperature']} "
               "(×T²), mixed ½ / ½ with the labels.",
               f"Held-out: {s['n_test']} pairs. Paper: DistilBERT keeps 97% of BERT-base's GLUE score (Sanh et al. "
               "2019, Table 1, GLUE dev sets) with 6 of 12 layers (60% of the parameters)."],
        claims=applicable(CLAIMS, conditions))


def run_one(condition: str, seed: int, settings: dict) -> dict:
    from minilm.train import TrainConfig, train
    is_teacher = condition == teacher_label(settings)
    if not is_teacher and CONDITIONS.get(condition) is None:
        raise ConfigError(f"distillation: unknown condition {condition!r}, expected "
                          f"{teacher_label(settings)!r} or one of {[c for c in CONDITIONS if CONDITIONS[c]]}")
    bundle = teacher_bundle(seed, settings)
    teacher_acc = bundle["accuracy"]
    if is_teacher:
        return {"retained": 1.0, "accuracy": teacher_acc, "size": 1.0}
    layers, objective = CONDITIONS[condition]
    student = make_student(bundle, layers, objective, seed)
    run = StudentRun(bundle, student, weights_for(objective, settings["temperature"]), settings["batch_size"])
    steps = settings["student_steps"]
    cfg = TrainConfig(steps=steps, lr=settings["lr"], warmup=max(1, steps // 10), eval_every=steps,
                      checkpoint_every=steps, seed=seed)
    with tempfile.TemporaryDirectory(prefix="minilm-distil-") as out:
        summary = train(run, cfg, out, progress=False, plot=False)
    accuracy = summary["metrics"]["accuracy"]
    return {"retained": accuracy / max(teacher_acc, 1e-12), "accuracy": accuracy,
            "size": inference_parameters(student) / inference_parameters(bundle["teacher"])}
