"""Knowledge distillation: a small student BERT learns from a fine-tuned teacher BERT.

Hinton, Vinyals & Dean 2015 (soft targets at temperature T, scaled by T²); DistilBERT (Sanh et al.
2019; HF ``distiller.py``: KL·T², logit MSE, hidden cosine, "one layer out of two" initialisation);
TinyBERT (Jiao et al. 2020 §3.1: hidden-state MSE through a learned projection, attention-score MSE).

The student's objective is any weighted mix of

    L = w_hard · CE(s, y)                              the labels, at T = 1
      + w_soft · T² · KL(softmax(t/T) ‖ softmax(s/T))   Task 10.1 (soft_target_loss)
      + w_mse  · Σ (s − t)² / N                         logit matching (DistilBERT's alpha_mse)
      + w_cos  · mean(1 − cos(h_s^L, h_t^L))            last hidden states, non-pad positions (Task 10.2)
      + w_hid  · Σ_m MSE(H_s^m · W_h, H_t^{g(m)})        every student state m = 0..M (Task 10.2)
      + w_att  · Σ_m MSE(A_s^m, A_t^{g(m)})              attention scores of every student layer (Task 10.2)

where g(m) = round(m·N/M) maps student state m onto a teacher state (TinyBERT's k·m; the embeddings
match the embeddings, the last layer the last layer). The teacher is *frozen*: its forward runs
under ``no_grad`` and it is not among the optimised parameters, so only the student (and W_h) learn.

Attention scores are the *pre-softmax* q·kᵀ/√d, as TinyBERT matches them; the blocks keep only the
probabilities (``last_attention``), so :func:`attention_scores` recomputes the scores from the input
of each layer with that layer's own q/k projections (post-LN: the input of layer m is state m − 1).

Letters: B batch, T time, C channels (C_s student, C_t teacher), H heads, K classes,
M student layers, N teacher layers.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

import autograd.functional as F
from autograd import Tensor, nn, no_grad, tasks
from autograd.errors import ConfigError
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForSequenceClassification, classify_logits, pool

__all__ = ["soft_target_loss", "distillation_loss", "cosine_hidden_loss", "hidden_mse_loss",
           "attention_mse_loss", "init_student_from_teacher", "default_layer_map", "StudentConfig",
           "DistilStudent", "DistillWeights", "attention_scores", "teacher_state_index", "classifier_forward",
           "distill_objective", "needs_teacher", "frozen_targets", "inference_parameters", "build_student",
           "StudentRecipe", "forward_seconds"]

# Task 10.1: solutions/task10_distill/soft_targets.py
soft_target_loss = tasks.bind("task10_distill.soft_targets", "soft_target_loss")
distillation_loss = tasks.bind("task10_distill.soft_targets", "distillation_loss")
# Task 10.2: solutions/task10_distill/intermediate.py
cosine_hidden_loss = tasks.bind("task10_distill.intermediate", "cosine_hidden_loss")
hidden_mse_loss = tasks.bind("task10_distill.intermediate", "hidden_mse_loss")
attention_mse_loss = tasks.bind("task10_distill.intermediate", "attention_mse_loss")
init_student_from_teacher = tasks.bind("task10_distill.intermediate", "init_student_from_teacher")


def default_layer_map(n_teacher: int, n_student: int) -> list[int]:
    """Teacher layers spread evenly from the first to the last: round(linspace(0, N−1, M)).
    For 12 → 6 this is DistilBERT's [0, 2, 4, 7, 9, 11]; for 4 → 2 it is [0, 3]."""
    if not 1 <= n_student <= n_teacher:
        raise ConfigError(f"default_layer_map: a student of {n_student} layers from a teacher of {n_teacher}; "
                          "expected 1 <= student layers <= teacher layers")
    return [int(i) for i in np.round(np.linspace(0, n_teacher - 1, n_student))]


def teacher_state_index(m: int, n_student: int, n_teacher: int) -> int:
    """g(m) = round(m·N/M): the teacher hidden state (0 = embeddings) matched by student state m."""
    return int(round(m * n_teacher / n_student))


@dataclass
class StudentConfig(BertConfig):
    teacher_n_embd: int | None = None     # C_t: the width W_h projects to (None = no projection)


class DistilStudent(BertForSequenceClassification):
    """A BERT classifier plus TinyBERT's ``fit_dense`` (W_h, C_s → C_t, no bias) used only by the
    hidden-state loss; at inference it is the plain classifier (``inference_parameters``)."""

    def __init__(self, config: StudentConfig, num_labels: int = 2, *, rng, pool: str = "cls"):
        super().__init__(config, num_labels, rng=rng, pool=pool)
        if getattr(config, "teacher_n_embd", None):
            self.fit_dense = nn.Linear(config.n_embd, config.teacher_n_embd, bias=False, rng=rng,
                                       init_std=config.initializer_range)

    def projection(self) -> Tensor:
        """W_h as a (C_s, C_t) Tensor (a view of ``fit_dense.weight``, so gradients reach it)."""
        if not hasattr(self, "fit_dense"):
            raise ConfigError("DistilStudent: no projection W_h; build it with StudentConfig(teacher_n_embd=C_t)")
        return self.fit_dense.weight.T


def inference_parameters(model) -> int:
    """Parameters used at inference (the classifier, without the training-only W_h)."""
    return int(sum(p.size for name, p in model.named_parameters() if not name.startswith("fit_dense")))


@dataclass
class DistillWeights:
    hard: float = 0.5          # CE with the labels (DistilBERT's alpha_mlm; PKD's 1 − α)
    soft: float = 0.5          # T²·KL of the softened distributions (DistilBERT's alpha_ce)
    temperature: float = 2.0   # T (DistilBERT's default 2.0; PKD uses 10)
    logit_mse: float = 0.0     # summed squared logit error per example (alpha_mse)
    cos: float = 0.0           # last-layer hidden cosine (alpha_cos; needs equal widths)
    hidden_mse: float = 0.0    # TinyBERT hidden MSE through W_h, every student state 0..M
    attention: float = 0.0     # TinyBERT attention-score MSE, every student layer 1..M

    def __post_init__(self):
        for name in ("hard", "soft", "logit_mse", "cos", "hidden_mse", "attention"):
            if getattr(self, name) < 0:
                raise ConfigError(f"DistillWeights: {name}={getattr(self, name)}, expected >= 0")
        if not self.temperature > 0:
            raise ConfigError(f"DistillWeights: temperature={self.temperature}, expected > 0")


def attention_scores(block, x: Tensor, attention_mask=None) -> Tensor:
    """Pre-softmax scores q·kᵀ/√d (B, H, T, T) of ``block``'s self-attention on its input x (B, T, C).
    Unmasked: the loss leaves padded pairs out (``attention_mse_loss``)."""
    attn = block.attn
    B, T, C = x.shape
    H, d = attn.n_head, attn.head_dim
    q = attn.q_proj(x).reshape(B, T, H, d).transpose(0, 2, 1, 3)   # (B, H, T, d)
    k = attn.k_proj(x).reshape(B, T, H, d).transpose(0, 2, 1, 3)   # (B, H, T, d)
    scores = q @ k.transpose(0, 1, 3, 2)                            # (B, H, T, T)
    return scores * (1.0 / np.sqrt(d)) if attn.scale else scores


def classifier_forward(model: BertForSequenceClassification, ids, mask) -> tuple[Tensor, list]:
    """(logits (B, K), hidden states [x₀ … x_L]) in one pass — what ``model(ids)`` computes, plus the states."""
    out = model.bert(ids, None, mask, output_hidden_states=True)
    if model.pool == "cls":
        logits = classify_logits(out, model.classifier.weight, model.classifier.bias)
    else:
        logits = model.classifier(pool(out["last_hidden_state"], np.asarray(mask).astype(bool), how=model.pool))
    return logits, out["hidden_states"]


def needs_teacher(weights: DistillWeights) -> bool:
    """Whether any term of ``weights`` reads the teacher (every one but the labels' CE does)."""
    w = weights
    return any(v > 0 for v in (w.soft, w.logit_mse, w.cos, w.hidden_mse, w.attention))


@contextlib.contextmanager
def frozen(teacher):
    """The teacher as a fixed target: eval mode (no dropout) under ``no_grad``; its mode is restored
    afterwards, whatever happens inside."""
    was_training = teacher.training
    teacher.eval()
    try:
        with no_grad():
            yield teacher
    finally:
        teacher.train(was_training)


def frozen_targets(teacher, ids, mask, weights: DistillWeights, chunk: int = 256):
    """The teacher's outputs that the output-side terms read, for every row at once: ``(logits
    (N, K), last hidden states (N, T, C) or None)``, or None when the weights need the teacher's
    inner states (hidden MSE, attention) or no teacher at all. The teacher is frozen, so a row's
    targets do not change from step to step: computing them once replaces a teacher forward pass
    per batch. Rows go through in fixed chunks of the full width T, so the result depends on the
    rows only, never on which batch asks for them."""
    w = weights
    if not needs_teacher(w) or w.hidden_mse > 0 or w.attention > 0:
        return None
    logits, last = [], []
    with frozen(teacher):
        for i in range(0, len(ids), chunk):
            t_logits, t_states = classifier_forward(teacher, ids[i:i + chunk], mask[i:i + chunk])
            logits.append(t_logits.data)
            if w.cos > 0:
                last.append(t_states[-1].data)
    return np.concatenate(logits), (np.concatenate(last) if last else None)


def _teacher_targets(teacher, ids, mask, w: DistillWeights, teacher_out):
    """What the weighted terms read of the frozen teacher on this batch: (logits Tensor (B, K),
    last states (B, T, C), every state [x₀ … x_N], attention scores per layer); None where no term
    reads it. From ``teacher_out`` (logits and last states only) or one forward pass under
    ``no_grad``; nothing at all when only the labels' term is weighted."""
    if teacher_out is not None:
        if w.hidden_mse > 0 or w.attention > 0:
            raise ConfigError("distill: precomputed teacher outputs hold its logits and last states only; the "
                              "hidden-MSE and attention terms need its forward pass (teacher_out=None)")
        t_last = teacher_out[1]
        if w.cos > 0 and (t_last is None or t_last.shape[:2] != np.shape(ids)):
            raise ConfigError(f"distill: the cosine term needs the teacher's last states of shape (B, T) + (C,) = "
                              f"{np.shape(ids)} + (C,); got {None if t_last is None else t_last.shape}")
        return Tensor(teacher_out[0]), t_last, None, None
    if not needs_teacher(w):
        return None, None, None, None
    with frozen(teacher):
        out, t_states = classifier_forward(teacher, ids, mask)
        t_scores = ([attention_scores(blk, t_states[i], mask) for i, blk in enumerate(teacher.bert.encoder.layer)]
                    if w.attention > 0 else None)
    return Tensor(out.data), t_states[-1].data, t_states, t_scores


def distill_objective(student, teacher, ids, mask, labels, weights: DistillWeights,
                      teacher_out=None) -> tuple[Tensor, dict]:
    """The weighted loss of the module docstring on one batch; returns (loss, {term: value}).
    ids, mask (B, T); labels (B,). The teacher runs in eval mode under ``no_grad``, and not at all
    when only the labels' term is weighted. ``teacher_out``: this batch's rows of
    :func:`frozen_targets` (logits (B, K), last states (B, T, C) or None), used instead of a teacher
    forward pass (output-side terms only)."""
    w = weights
    t_logits, t_last, t_states, t_scores = _teacher_targets(teacher, ids, mask, w, teacher_out)
    s_logits, s_states = classifier_forward(student, ids, mask)
    M, N = len(s_states) - 1, (len(t_states) - 1 if t_states is not None else 0)
    terms = {}
    if w.hard > 0:
        terms["hard"] = (w.hard, F.cross_entropy(s_logits, labels))
    if w.soft > 0:
        terms["soft"] = (w.soft, soft_target_loss(s_logits, t_logits, w.temperature))
    if w.logit_mse > 0:
        terms["logit_mse"] = (w.logit_mse, F.mse_loss(s_logits, t_logits, reduction="sum") * (1.0 / len(labels)))
    if w.cos > 0:
        terms["cos"] = (w.cos, cosine_hidden_loss(s_states[-1], Tensor(t_last), mask))
    if w.hidden_mse > 0:
        W_h = student.projection()
        loss = None
        for m in range(M + 1):
            term = hidden_mse_loss(s_states[m], Tensor(t_states[teacher_state_index(m, M, N)].data), W_h)
            loss = term if loss is None else loss + term
        terms["hidden_mse"] = (w.hidden_mse, loss)
    if w.attention > 0:
        loss = None
        for m in range(1, M + 1):
            a_s = attention_scores(student.bert.encoder.layer[m - 1], s_states[m - 1], mask)
            a_t = t_scores[teacher_state_index(m, M, N) - 1]
            if a_s.shape != a_t.shape:
                raise ConfigError(f"distill: attention MSE needs equal head counts; student scores {a_s.shape}, "
                                  f"teacher {a_t.shape}")
            term = attention_mse_loss(a_s, Tensor(a_t.data), mask)
            loss = term if loss is None else loss + term
        terms["attention"] = (w.attention, loss)
    if not terms:
        raise ConfigError("distill: every loss weight is 0; give at least one term a positive weight")
    total = None
    for weight, value in terms.values():
        total = value * weight if total is None else total + value * weight
    return total, {name: float(value.item()) for name, (_, value) in terms.items()}


# ---- a student, and the recipe that distils it -----------------------------------------------------

def build_student(teacher: BertForSequenceClassification, n_layer: int, *, rng, n_embd: int | None = None,
                  n_head: int | None = None, projection: bool = True, init_from_teacher: bool = True):
    """``(DistilStudent, layer map or None)``: a student of ``n_layer`` blocks with the teacher's
    vocabulary, positions, dropout, pooling and classes, and its width and heads unless ``n_embd`` /
    ``n_head`` say otherwise; W_h (C_s → C_t) if ``projection``. With ``init_from_teacher`` it starts
    as DistilBERT's does: evenly spread teacher layers (:func:`default_layer_map`), the teacher's
    embeddings and its classifier (the widths must match)."""
    t = teacher.config
    config = StudentConfig(vocab_size=t.vocab_size, max_position_embeddings=t.max_position_embeddings,
                           n_layer=n_layer, n_head=n_head or t.n_head, n_embd=n_embd or t.n_embd, dropout=t.dropout,
                           teacher_n_embd=t.n_embd if projection else None)
    student = DistilStudent(config, teacher.num_labels, rng=rng, pool=teacher.pool)
    if not init_from_teacher:
        return student, None
    layer_map = default_layer_map(t.n_layer, n_layer)
    init_student_from_teacher(student.bert, teacher.bert, layer_map)
    student.classifier.load_state_dict(teacher.classifier.state_dict())
    return student, layer_map


class StudentRecipe:
    """What ``minilm.train.train`` needs to distil ``model`` from a frozen ``teacher`` on labelled
    rows (``ids``, ``mask`` (N, T), ``labels`` (N,)): batches of ``batch_size`` rows cut to their
    longest, and :func:`distill_objective` with ``weights`` as the loss. A subclass adds
    ``evaluate`` and ``baselines`` (``minilm train distill``; the ``distillation`` experiment)."""

    family = "distill"

    def __init__(self, model: DistilStudent, teacher, tokenizer, ids, mask, labels, weights: DistillWeights,
                 batch_size: int):
        self.model, self.model_config, self.teacher, self.tokenizer = model, model.config, teacher, tokenizer
        self.ids, self.mask, self.labels = ids, mask, np.asarray(labels)
        self.weights, self.batch_size = weights, batch_size
        self._targets = None   # (ids, mask, frozen_targets(...)) of the rows they were computed for

    def batch(self, rng):
        idx = rng.integers(0, len(self.labels), size=self.batch_size)
        T = int(self.mask[idx].sum(axis=1).max())   # cut the batch to its longest row
        return {"input_ids": self.ids[idx, :T], "attention_mask": self.mask[idx, :T], "labels": self.labels[idx],
                "rows": idx}

    def teacher_out(self, batch):
        """The batch's rows of the teacher's :func:`frozen_targets`, computed on first use for
        every row of ``self.ids`` (again if the rows are replaced); None where they do not apply."""
        if "rows" not in batch:
            return None
        if self._targets is None or self._targets[0] is not self.ids or self._targets[1] is not self.mask:
            self._targets = (self.ids, self.mask, frozen_targets(self.teacher, self.ids, self.mask, self.weights))
        if self._targets[2] is None:
            return None
        logits, last = self._targets[2]
        rows, T = batch["rows"], batch["input_ids"].shape[1]
        return logits[rows], (None if last is None else last[rows, :T])

    def loss(self, model, batch):
        loss, terms = distill_objective(model, self.teacher, batch["input_ids"], batch["attention_mask"],
                                        batch["labels"], self.weights, teacher_out=self.teacher_out(batch))
        return loss, {"tokens": int(batch["attention_mask"].sum()), **terms}


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
