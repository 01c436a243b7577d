"""RoBERTa's input formats: packing whole sentences into blocks (Liu et al. 2019, §4.2).

BERT feeds sentence *pairs* and trains NSP; RoBERTa drops NSP and fills each input with as many
whole sentences as fit. fairseq's ``TokenBlockDataset`` calls the two ways ``complete`` and
``complete_doc``:

* **FULL-SENTENCES** (``pack_full_sentences``): sentences are added greedily while the block still
  fits; a block may cross a document boundary, with one extra separator token between documents.
* **DOC-SENTENCES** (``pack_doc_sentences``): the same, but every document starts a new block, and
  blocks of at most one token are dropped. Slightly better in the paper; FULL-SENTENCES was kept
  for comparability with related work.

Both are the slots of Task 6.1 (packing half); ``pack_sentences`` picks one by name, and
``roberta_blocks`` adds fairseq's ``<s>`` in front (block size ``tokens_per_sample - 1``).
"""
from __future__ import annotations

from autograd import tasks
from autograd.errors import MiniLMError

__all__ = ["pack_full_sentences", "pack_doc_sentences", "pack_sentences", "roberta_blocks",
           "PACKING_MODES"]

# Task 6.1: solutions/task06_roberta/packing.py (or exercises/)
pack_full_sentences = tasks.bind("task06_roberta.packing", "pack_full_sentences")
pack_doc_sentences = tasks.bind("task06_roberta.packing", "pack_doc_sentences")

PACKING_MODES = ("full", "doc")


def pack_sentences(docs, block_size: int, *, mode: str = "full", sep_id: int | None = None
                   ) -> list[list[int]]:
    """Pack documents of sentences of ids with FULL-SENTENCES (``mode="full"``, needs ``sep_id``)
    or DOC-SENTENCES (``mode="doc"``)."""
    if mode == "full":
        if sep_id is None:
            raise MiniLMError("pack_sentences: mode='full' puts a separator between documents: pass sep_id")
        return pack_full_sentences(docs, block_size, sep_id)
    if mode == "doc":
        return pack_doc_sentences(docs, block_size)
    raise MiniLMError(f"pack_sentences: mode={mode!r}: expected one of {PACKING_MODES}")


def roberta_blocks(docs, tokens_per_sample: int, *, bos_id: int, sep_id: int, mode: str = "full"
                   ) -> list[list[int]]:
    """fairseq's RoBERTa input: pack into ``tokens_per_sample - 1`` tokens, then prepend ``<s>``,
    so that every block has at most ``tokens_per_sample`` tokens."""
    if tokens_per_sample < 2:
        raise MiniLMError(f"roberta_blocks: tokens_per_sample={tokens_per_sample}: expected >= 2")
    blocks = pack_sentences(docs, tokens_per_sample - 1, mode=mode, sep_id=sep_id)
    return [[bos_id] + block for block in blocks]
