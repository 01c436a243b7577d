"""Task 6.1 (packing): RoBERTa's FULL-SENTENCES and DOC-SENTENCES input formats.

Liu et al. 2019, "RoBERTa", §4.2 (Training procedure analysis, "Model input format and Next
Sentence Prediction"); fairseq ``TokenBlockDataset`` with ``break_mode="complete"`` (FULL-SENTENCES)
and ``"complete_doc"`` (DOC-SENTENCES), ``fairseq/data/token_block_utils_fast.pyx``.

Input: ``docs``, a list of documents; a document is a list of sentences; a sentence is a list of
token ids. Output: a list of blocks, each a list of token ids of length ``<= block_size``.

The greedy rule both share. Keep a current block; for each sentence in turn:

    if the block is empty or  len(block) + len(sentence) <= block_size:  append the sentence
    else:                                                                 close the block, start a new one

so a sentence is never split across two blocks. A single sentence longer than ``block_size`` becomes
a block of its own. fairseq keeps it whole (a block longer than the size, filtered out later by the
model's position limit); here it is **truncated to its first ``block_size`` tokens**, so that every
block fits the model.
"""
from __future__ import annotations

from autograd.errors import MiniLMError


def _as_documents(docs, block_size, where: str) -> list[list[list[int]]]:
    """Check the input and return it as new lists of ints, without empty sentences or documents."""
    if int(block_size) != block_size or block_size < 1:
        raise MiniLMError(f"{where}: block_size={block_size!r}: expected a whole number >= 1")
    out = []
    for d, doc in enumerate(docs):
        sentences = []
        for s, sentence in enumerate(doc):
            ids = [int(t) for t in sentence]
            if any(t < 0 for t in ids):
                raise MiniLMError(f"{where}: document {d}, sentence {s} has a negative id {min(ids)}: "
                                  "expected token ids >= 0")
            if ids:
                sentences.append(ids)
        if sentences:
            out.append(sentences)
    return out


def pack_full_sentences(docs, block_size, sep_id):
    """Task 6.1: FULL-SENTENCES packing (fairseq ``break_mode="complete"``).

    Walk all sentences of all documents in order and pack them greedily (module docstring):

    * add a sentence to the current block while ``len(block) + len(sentence) <= block_size``;
      otherwise close the block and start the next one with that sentence;
    * blocks **cross document boundaries**: between two documents put one extra separator token
      ``[sep_id]``, packed exactly like a one-token sentence (none before the first document or
      after the last);
    * a sentence longer than ``block_size`` closes the current block and becomes a block of its
      own, truncated to its first ``block_size`` tokens;
    * the last, partly filled block is kept.

    Example (block_size=5, sep_id=0): docs ``[[[1, 2], [3, 4]], [[5, 6, 7]]]`` -> the stream
    ``[1, 2] [3, 4] [0] [5, 6, 7]`` -> blocks ``[[1, 2, 3, 4, 0], [5, 6, 7]]``.

    ``docs`` has already been checked and cleaned (no empty sentences or documents). Return a new
    list of blocks (lists of ints); do not modify ``docs``.

    The graded tests check that the blocks, concatenated, are exactly the sentences with one
    separator between documents; that no sentence is split across blocks; that no block is longer
    than ``block_size``; that packing is greedy (the next sentence never fitted into a closed block);
    and the over-long case.
    """
    docs = _as_documents(docs, block_size, "pack_full_sentences")
    raise NotImplementedError("Task 6.1: pack_full_sentences")


def pack_doc_sentences(docs, block_size):
    """Task 6.1: DOC-SENTENCES packing (fairseq ``break_mode="complete_doc"``).

    The same greedy rule as ``pack_full_sentences``, but a block never crosses a document boundary:

    * every document starts a new block (so there is no separator token at all);
    * a sentence longer than ``block_size`` becomes a block of its own, truncated to ``block_size``;
    * every block of **at most one token** is dropped (fairseq keeps only ``curr_size > 1``), e.g.
      a document that is a single one-token sentence gives no block.

    Example (block_size=4): docs ``[[[1, 2], [3]], [[4, 5, 6], [7, 8]], [[9]]]`` -> blocks
    ``[[1, 2, 3], [4, 5, 6], [7, 8]]`` (``[9]`` has one token and is dropped).

    ``docs`` has already been checked and cleaned. Return a new list of blocks; do not modify ``docs``.

    The graded tests check that no block mixes two documents, that each document's blocks
    concatenate to its sentences (less the dropped one-token blocks), that no sentence is split and
    no block is too long, that packing is greedy inside a document, and that one-token blocks go.
    """
    docs = _as_documents(docs, block_size, "pack_doc_sentences")
    raise NotImplementedError("Task 6.1: pack_doc_sentences")
