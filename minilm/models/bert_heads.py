"""BERT's heads: masked LM + next-sentence prediction (pre-training) and sequence classification.

Devlin et al. 2019, §3.1 (pre-training) and §3.2 / Figure 4 (fine-tuning); google-research/bert
``run_pretraining.py`` (``get_masked_lm_output``, ``get_next_sentence_output``).

* Masked LM (``cls.predictions``): h' = LayerNorm(GELU(W·h + b)), then logits = h'·Eᵀ + b_out,
  where E is the input word-embedding matrix itself (a *tied* decoder: one V×C matrix both reads
  and writes tokens) and b_out is an output-only bias, zero at init. The loss is Task 5.2's
  ``mlm_loss``: cross-entropy over the masked positions only.
* NSP (``cls.seq_relationship``): logits = pooled·Wᵀ + b over 2 classes on the pooler output
  tanh(W_p·h[CLS] + b_p); label 1 = NotNext (B from another document), 0 = IsNext. Mean CE.
* Classification (fine-tuning): logits = h[CLS]·Wᵀ + b on the *last hidden state* — not the pooler,
  which only NSP trained (Task 5.4's ``classify_logits``) — or on a mean / max pooling of the real
  tokens (Task 5.4's ``pool``).

Letters: B batch, T time, C channels, V vocabulary, K classes.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import Tensor, nn, tasks
from autograd.errors import ConfigError, ShapeError

from minilm.blocks.feedforward import activate

from .bert import BertConfig, BertModel

# Task 5.2: solutions/task05_bert/mlm_loss.py
mlm_loss = tasks.bind("task05_bert.mlm_loss", "mlm_loss")
# Task 5.4: solutions/task05_bert/classify.py
classify_logits = tasks.bind("task05_bert.classify", "classify_logits")
pool = tasks.bind("task05_bert.classify", "pool")

POOLING = ("cls", "mean", "max")


class TiedDecoder(nn.Module):
    """logits = h·Eᵀ with ``weight`` = E, *the same Parameter* as the word embeddings (not a copy):
    one matrix, one gradient (the sum of both uses), one optimiser update."""

    def __init__(self, weight: nn.Parameter):
        super().__init__()
        self.weight = weight  # (V, C), shared with embeddings.word_embeddings

    def forward(self, h: Tensor) -> Tensor:
        return h @ self.weight.T  # (..., C) @ (C, V) -> (..., V)


class BertPredictionHeadTransform(nn.Module):
    """h' = LayerNorm(act(dense(h)))   (..., C) → (..., C); act = ``config.head_activation``, else the
    encoder's ``activation`` (transformers' BertPredictionHeadTransform: ``ACT2FN[config.hidden_act]``)."""

    def __init__(self, config: BertConfig, *, rng):
        super().__init__()
        self.dense = nn.Linear(config.n_embd, config.n_embd, rng=rng, init_std=config.initializer_range)
        self.LayerNorm = nn.LayerNorm(config.n_embd, eps=config.layer_norm_eps)
        self.activation = config.head_activation or config.activation

    def forward(self, h: Tensor) -> Tensor:
        return self.LayerNorm(activate(self.dense(h), self.activation))


class BertLMPredictionHead(nn.Module):
    """The MLM head: transform → tied decoder → + bias (V,), zero at init."""

    def __init__(self, config: BertConfig, word_embeddings: nn.Parameter, *, rng):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config, rng=rng)
        self.decoder = TiedDecoder(word_embeddings)
        self.bias = nn.Parameter(np.zeros(config.vocab_size), dtype=word_embeddings.dtype)

    def forward(self, h: Tensor) -> Tensor:
        return self.decoder(self.transform(h)) + self.bias  # (B, T, V)


class BertPreTrainingHeads(nn.Module):
    """``predictions`` (MLM) and ``seq_relationship`` (NSP, 2 classes)."""

    def __init__(self, config: BertConfig, word_embeddings: nn.Parameter, *, rng):
        super().__init__()
        self.predictions = BertLMPredictionHead(config, word_embeddings, rng=rng)
        self.seq_relationship = nn.Linear(config.n_embd, 2, rng=rng, init_std=config.initializer_range)


def _check_labels(op: str, labels, shape: tuple, what: str) -> np.ndarray:
    labels = np.asarray(getattr(labels, "data", labels))
    if labels.shape != shape or not np.issubdtype(labels.dtype, np.integer):
        raise ShapeError(f"{op}: {what} of shape {labels.shape} and dtype {labels.dtype}, expected "
                         f"integers of shape {shape}")
    return labels


class BertForPreTraining(nn.Module):
    """BERT with its two pre-training heads: ``bert`` (BertModel) and ``cls`` (MLM + NSP).

    ``forward(input_ids, segment_ids, attention_mask, mlm_labels=None, nsp_labels=None)`` returns

    * ``mlm_logits`` (B, T, V) and ``nsp_logits`` (B, 2), always;
    * ``mlm_loss`` — Task 5.2's mean CE over positions with ``mlm_labels != -100`` (None if no
      ``mlm_labels``); ``nsp_loss`` — mean CE of ``nsp_labels`` (B,), 1 = NotNext (None if none);
    * ``loss`` = the sum of the losses given (None if neither): BERT trains on MLM + NSP,
      RoBERTa passes ``nsp_labels=None`` and trains on the MLM alone.
    """

    def __init__(self, config: BertConfig, *, rng):
        super().__init__()
        self.config = config
        self.bert = BertModel(config, rng=rng)
        self.cls = BertPreTrainingHeads(config, self.bert.embeddings.word_embeddings.weight, rng=rng)

    def forward(self, input_ids, segment_ids=None, attention_mask=None, mlm_labels=None, nsp_labels=None) -> dict:
        out = self.bert(input_ids, segment_ids, attention_mask)
        h, pooled = out["last_hidden_state"], out["pooler_output"]     # (B, T, C), (B, C)
        B, T, C = h.shape
        # every position independently: (B·T, C) rows make each matmul one 2-D BLAS call
        mlm_logits = self.cls.predictions(h.reshape(B * T, C)).reshape(B, T, -1)  # (B, T, V)
        nsp_logits = self.cls.seq_relationship(pooled)                  # (B, 2)
        result = {"mlm_logits": mlm_logits, "nsp_logits": nsp_logits, "mlm_loss": None, "nsp_loss": None,
                  "loss": None, "last_hidden_state": h, "pooler_output": pooled}
        if mlm_labels is not None:
            labels = _check_labels("BertForPreTraining", mlm_labels, (B, T), "mlm_labels")
            result["mlm_loss"] = mlm_loss(mlm_logits, labels)
        if nsp_labels is not None:
            labels = _check_labels("BertForPreTraining", nsp_labels, (B,), "nsp_labels")
            if labels.size and (labels.min() < 0 or labels.max() > 1):
                raise ShapeError(f"BertForPreTraining: nsp_labels hold {int(labels[(labels < 0) | (labels > 1)][0])}"
                                 ": expected 0 (IsNext) or 1 (NotNext)")
            result["nsp_loss"] = F.cross_entropy(nsp_logits, labels)
        losses = [result[k] for k in ("mlm_loss", "nsp_loss") if result[k] is not None]
        if losses:
            result["loss"] = losses[0] if len(losses) == 1 else losses[0] + losses[1]
        return result


def sentence_logits(h: Tensor, attention_mask, how: str, classifier) -> Tensor:
    """(B, K): ``classifier`` (Linear C → K) on the sentence vector of the last states ``h`` (B, T, C):
    h[CLS] for ``how="cls"`` (Task 5.4's ``classify_logits``), or the real tokens' states pooled by
    ``"mean"`` / ``"max"`` (Task 5.4's ``pool``; ``attention_mask`` (B, T) says which are real)."""
    if how == "cls":
        return classify_logits({"last_hidden_state": h}, classifier.weight, classifier.bias)
    mask = None if attention_mask is None else np.asarray(attention_mask).astype(bool)
    return classifier(pool(h, mask, how=how))


class BertForSequenceClassification(nn.Module):
    """BERT fine-tuned for a K-class sentence (or sentence-pair) task (Devlin et al. §3.2, Fig. 4).

    ``bert`` (BertModel) and ``classifier`` (Linear C → K). ``pool`` chooses the sentence vector:
    ``"cls"`` (BERT's choice: h[CLS] of the last layer, through Task 5.4's ``classify_logits``),
    ``"mean"`` or ``"max"`` over the real tokens (Task 5.4's ``pool``). The pooler is kept (so a
    pre-trained checkpoint loads unchanged) but is not used.

    ``forward(input_ids, segment_ids=None, attention_mask=None, labels=None)`` returns
    ``{"logits": (B, K), "loss": mean CE or None}``.
    """

    def __init__(self, config: BertConfig, num_labels: int = 2, *, rng, pool: str = "cls"):
        super().__init__()
        if pool not in POOLING:
            raise ConfigError(f"BertForSequenceClassification: pool={pool!r}, expected one of {POOLING}")
        if num_labels < 2:
            raise ConfigError(f"BertForSequenceClassification: num_labels={num_labels}, expected >= 2")
        self.config, self.num_labels, self.pool = config, int(num_labels), pool
        self.bert = BertModel(config, rng=rng)
        self.classifier = nn.Linear(config.n_embd, self.num_labels, rng=rng, init_std=config.initializer_range)

    def forward(self, input_ids, segment_ids=None, attention_mask=None, labels=None) -> dict:
        out = self.bert(input_ids, segment_ids, attention_mask)
        logits = sentence_logits(out["last_hidden_state"], attention_mask, self.pool, self.classifier)  # (B, K)
        result = {"logits": logits, "loss": None}
        if labels is not None:
            labels = _check_labels("BertForSequenceClassification", labels, (logits.shape[0],), "labels")
            result["loss"] = F.cross_entropy(logits, labels)
        return result
