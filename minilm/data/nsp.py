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

__all__ = ["NSPInstance", "truncate_seq_pair", "create_nsp_instances", "nsp_arrays"]


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
