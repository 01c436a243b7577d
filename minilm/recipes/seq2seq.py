"""What the encoder–decoder recipes (T5, BART) share: (source ids, target ids) pairs as padded
arrays, the teacher-forced loss, the held-out loss per target token, and exact match of greedy
decoding. The prefix-LM recipe scores its targets with the same ``token_stats`` and ``exact_match``.

Letters: B pairs, S source tokens, T target tokens, V vocabulary.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from minilm.data import pad_batch
from minilm.models.seq2seq import strip_after_eos


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


class Seq2SeqRecipe:
    """The recipe methods of an encoder–decoder family; the subclass sets ``tokenizer`` (its
    ``pad_id`` pads the sources) and draws the pairs."""

    def _arrays(self, pairs):
        """[(source ids, target ids)] → source (B, S), its attention mask (B, S), labels (B, T)
        padded with -100 (the model builds the decoder input from them)."""
        src, src_mask = pad_batch([s for s, _ in pairs], self.tokenizer.pad_id)
        labels, _ = pad_batch([t for _, t in pairs], -100)
        return src, src_mask, labels

    def loss(self, model, batch):
        src, src_mask, labels = batch
        out = model(src, attention_mask=src_mask, labels=labels)
        return out["loss"], {"tokens": int(src_mask.sum() + (labels != -100).sum())}

    def token_metrics(self, model, pairs) -> dict:
        """Held-out ``loss`` per target token and ``token_accuracy``, teacher-forced, 64 pairs at a time."""
        total, correct, n = 0.0, 0, 0
        for i in range(0, len(pairs), 64):
            src, src_mask, labels = self._arrays(pairs[i:i + 64])
            logits = model(src, attention_mask=src_mask, labels=labels)["logits"]   # (B, T, V)
            ce, ok, count = token_stats(logits, labels)
            total, correct, n = total + ce, correct + ok, n + count
        return {"loss": total / n, "token_accuracy": correct / n}

    def greedy_exact_match(self, model, pairs, max_len: int, eos_id: int) -> float:
        """Exact match of greedy decoding (at most ``max_len`` tokens, cut after ``eos_id``), 100
        pairs at a time."""
        predicted = []
        for i in range(0, len(pairs), 100):
            src, src_mask, _ = self._arrays(pairs[i:i + 100])
            predicted += strip_after_eos(model.generate(src, max_len, attention_mask=src_mask), eos_id)
        return exact_match(predicted, [t for _, t in pairs])
