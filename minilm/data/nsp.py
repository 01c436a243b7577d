"""BERT's sentence-pair instances for next-sentence prediction (Devlin et al. 2019, §3.1 Task #2).

Letters: B batch, T time (sequence length).

Each instance is ``[CLS] A [SEP] B [SEP]``: segment A is one or more whole sentences of a document;
segment B is the sentences that follow A (IsNext, label 0) or sentences from a random other document
(NotNext, label 1), chosen half of the time. :func:`create_nsp_instances` walks the documents as
BERT does and calls Task 5.3's three slots for each instance (``nsp_pair``, ``truncate_seq_pair``,
``pair_layout``); :func:`nsp_arrays` turns instances into padded arrays for the model.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd import tasks
from autograd.errors import MiniLMError

__all__ = ["NSPInstance", "nsp_pair", "truncate_seq_pair", "pair_layout", "create_nsp_instances",
           "sentence_pair_instances", "nsp_arrays"]


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
nsp_pair = tasks.bind("task05_bert.nsp", "nsp_pair")
truncate_seq_pair = tasks.bind("task05_bert.nsp", "truncate_seq_pair")  # Task 5.3
pair_layout = tasks.bind("task05_bert.nsp", "pair_layout")  # Task 5.3


def _clean_documents(documents, max_seq_length, cls_id, sep_id) -> list[list[list[int]]]:
    """Check the arguments; return the documents as new lists of ints, dropping empty sentences
    and then empty documents (as BERT's reader does)."""
    if int(max_seq_length) != max_seq_length or max_seq_length < 5:
        raise MiniLMError(f"create_nsp_instances: max_seq_length={max_seq_length!r}: expected a whole "
                          "number >= 5 ([CLS] A [SEP] B [SEP] with at least 2 tokens of A and B)")
    if cls_id is None or sep_id is None:
        raise MiniLMError("create_nsp_instances: pass cls_id= and sep_id= (the [CLS] and [SEP] ids)")
    docs = []
    for d, doc in enumerate(documents):
        sentences = [[int(t) for t in s] for s in doc]
        for s, ids in enumerate(sentences):
            if any(t < 0 for t in ids):
                raise MiniLMError(f"create_nsp_instances: document {d}, sentence {s} has a negative id "
                                  f"{min(ids)}: expected token ids >= 0")
        sentences = [s for s in sentences if s]
        if sentences:
            docs.append(sentences)
    if len(docs) < 2:
        raise MiniLMError(f"create_nsp_instances: {len(docs)} non-empty document(s): NotNext pairs take "
                          "segment B from another document, so at least 2 are needed")
    return docs


def create_nsp_instances(documents, *, max_seq_length: int, rng, short_seq_prob: float = 0.1,
                         cls_id: int | None = None, sep_id: int | None = None) -> list[NSPInstance]:
    """BERT's sentence-pair instances (google-research/bert ``create_instances_from_document``) for
    every document, in order. ``documents``: lists of sentences, each a list of ids.

    1. ``max_num_tokens = max_seq_length - 3`` (room for [CLS] and two [SEP]). Each document has a
       target length: ``max_num_tokens``, except with probability ``short_seq_prob`` (one draw
       ``rng.random()`` per document) ``rng.integers(2, max_num_tokens + 1)``, so that the model
       also sees short inputs.
    2. Walk the sentences, gathering them into a chunk. When the document ends or the chunk holds at
       least ``target`` tokens, make one instance of it and start a new chunk:
       a. segments A and B: Task 5.3's ``nsp_pair`` (IsNext, or NotNext with B from another
          document; then the sentences it did not use are read again: step back ``put_back``);
       b. A and B cut to ``max_num_tokens`` together: Task 5.3's ``truncate_seq_pair``;
       c. ``[CLS] A [SEP] B [SEP]`` and the segment ids: Task 5.3's ``pair_layout``.

    Empty sentences and then empty documents are dropped (as BERT's reader does); at least two
    documents must remain. Returns the instances, document by document (BERT shuffles them and
    repeats the pass ``dupe_factor`` times; callers do that).
    """
    documents = _clean_documents(documents, max_seq_length, cls_id, sep_id)
    max_num_tokens = max_seq_length - 3
    instances = []
    for doc_index, document in enumerate(documents):
        target = max_num_tokens
        if rng.random() < short_seq_prob:
            target = int(rng.integers(2, max_num_tokens + 1))
        chunk, chunk_length, i = [], 0, 0
        while i < len(document):
            chunk.append(document[i])
            chunk_length += len(document[i])
            if i == len(document) - 1 or chunk_length >= target:
                tokens_a, tokens_b, is_random_next, put_back = nsp_pair(chunk, documents, doc_index,
                                                                        target=target, rng=rng)
                i -= put_back
                tokens_a, tokens_b = truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng=rng)
                input_ids, segment_ids = pair_layout(tokens_a, tokens_b, cls_id=cls_id, sep_id=sep_id)
                instances.append(NSPInstance(input_ids, segment_ids, bool(is_random_next)))
                chunk, chunk_length = [], 0
            i += 1
    return instances


def sentence_pair_instances(documents, *, max_seq_length: int, rng, cls_id: int, sep_id: int) -> list[NSPInstance]:
    """RoBERTa's SENTENCE-PAIR+NSP inputs (Liu et al. 2019, §4.2): each segment is ONE natural
    sentence. For every sentence of a document that has a next one, A is that sentence and B is
    the next (IsNext) or, half of the time, a random sentence of a random other document (NotNext);
    a pair longer than ``max_seq_length - 3`` tokens is cut by ``truncate_seq_pair`` and laid out by
    ``pair_layout`` (Task 5.3). ``documents``: documents of sentences of ids."""
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
            out.append(NSPInstance(*pair_layout(a, b, cls_id=cls_id, sep_id=sep_id), is_random_next))
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
