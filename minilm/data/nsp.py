"""BERT's sentence-pair instances for next-sentence prediction (Devlin et al. 2019, §3.1 Task #2).

Letters: B batch, T time (sequence length).

Each instance is ``[CLS] A [SEP] B [SEP]``: segment A is one or more whole sentences of a document;
segment B is the sentences that follow A (IsNext, label 0) or sentences from a random other document
(NotNext, label 1), chosen half of the time. The two slots of Task 5.3 build them; this module binds
them for the kit and turns instances into padded arrays for the model.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd import tasks
from autograd.errors import MiniLMError

__all__ = ["NSPInstance", "truncate_seq_pair", "create_nsp_instances", "sentence_pair_instances", "nsp_arrays"]


@dataclass
class NSPInstance:
    """One BERT pre-training pair: ``input_ids = [CLS] A [SEP] B [SEP]``; ``segment_ids`` is 0 on
    ``[CLS]``, A and the first ``[SEP]`` and 1 on B and the last ``[SEP]``; ``is_random_next`` is
    True when B comes from another document (NotNext)."""

    input_ids: list[int]
    segment_ids: list[int]
    is_random_next: bool

    @property
    def next_sentence_label(self) -> int:
        """BERT's label convention (``run_pretraining.py``): 1 = NotNext, 0 = IsNext."""
        return int(self.is_random_next)


# Task 5.3: solutions/task05_bert/nsp.py (or exercises/)
truncate_seq_pair = tasks.bind("task05_bert.nsp", "truncate_seq_pair")
create_nsp_instances = tasks.bind("task05_bert.nsp", "create_nsp_instances")


def sentence_pair_instances(documents, *, max_seq_length: int, rng, cls_id: int, sep_id: int) -> list[NSPInstance]:
    """RoBERTa's SENTENCE-PAIR+NSP inputs (Liu et al. 2019, §4.2): each segment is ONE natural
    sentence. For every sentence of a document that has a next one, A is that sentence and B is
    the next (IsNext) or, half of the time, a random sentence of a random other document (NotNext);
    a pair longer than ``max_seq_length - 3`` tokens is cut by ``truncate_seq_pair``.
    ``documents``: documents of sentences of ids. The layout is ``create_nsp_instances``'s."""
    docs = [[list(s) for s in doc if len(s)] for doc in documents]
    docs = [doc for doc in docs if doc]
    if len(docs) < 2:
        raise MiniLMError(f"sentence_pair_instances: got {len(docs)} non-empty document(s): NotNext draws B "
                          "from another document, so at least 2 are needed")
    if max_seq_length < 5:
        raise MiniLMError(f"sentence_pair_instances: max_seq_length={max_seq_length}: expected >= 5 "
                          "([CLS] A [SEP] B [SEP] with one token in each segment)")
    out = []
    for d, doc in enumerate(docs):
        for i in range(len(doc) - 1):
            is_random_next = bool(rng.random() < 0.5)
            if is_random_next:
                other = int(rng.integers(len(docs) - 1))
                other += other >= d                                  # any document but this one
                b = docs[other][int(rng.integers(len(docs[other])))]
            else:
                b = doc[i + 1]
            a, b = truncate_seq_pair(doc[i], b, max_seq_length - 3, rng=rng)
            out.append(NSPInstance([cls_id, *a, sep_id, *b, sep_id], [0] * (len(a) + 2) + [1] * (len(b) + 1),
                                   is_random_next))
    return out


def nsp_arrays(instances, *, max_seq_length: int | None = None, pad_id: int = 0) -> dict[str, np.ndarray]:
    """Pad instances into the model's inputs, padding on the right with id ``pad_id``, segment 0
    and mask False (BERT's convention)::

        input_ids           (B, T) int64
        segment_ids         (B, T) int64
        attention_mask      (B, T) bool
        next_sentence_label (B,)   int64    1 = NotNext, 0 = IsNext

    ``T`` is ``max_seq_length`` when given (an instance longer than it raises), else the longest.
    """
    if len(instances) == 0:
        raise MiniLMError("nsp_arrays: got no instances: expected at least one")
    lengths = [len(inst.input_ids) for inst in instances]
    T = max(lengths) if max_seq_length is None else int(max_seq_length)
    if max(lengths) > T:
        raise MiniLMError(f"nsp_arrays: an instance has {max(lengths)} tokens, more than "
                          f"max_seq_length={T}")
    B = len(instances)
    input_ids = np.full((B, T), pad_id, dtype=np.int64)       # (B, T)
    segment_ids = np.zeros((B, T), dtype=np.int64)            # (B, T)
    attention_mask = np.zeros((B, T), dtype=bool)             # (B, T)
    for b, inst in enumerate(instances):
        n = len(inst.input_ids)
        if len(inst.segment_ids) != n:
            raise MiniLMError(f"nsp_arrays: instance {b} has {n} ids but {len(inst.segment_ids)} "
                              "segment ids: expected one segment id per token")
        input_ids[b, :n] = inst.input_ids
        segment_ids[b, :n] = inst.segment_ids
        attention_mask[b, :n] = True
    labels = np.array([int(inst.is_random_next) for inst in instances], dtype=np.int64)  # (B,)
    return {"input_ids": input_ids, "segment_ids": segment_ids, "attention_mask": attention_mask,
            "next_sentence_label": labels}
