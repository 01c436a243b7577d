"""Task 5.3: BERT's next-sentence-prediction pairs, [CLS]/[SEP]/segment ids, truncate_seq_pair.

Devlin et al. 2019, "BERT", §3.1 Task #2 and Appendix A.2; google-research/bert
``create_pretraining_data.py``: ``create_instances_from_document`` and ``truncate_seq_pair``.

Input documents are lists of sentences; a sentence is a list of token ids (already tokenised).
One instance is

    input_ids   = [CLS]  a1 a2 ... [SEP]  b1 b2 ... [SEP]
    segment_ids =   0    0  0  ...   0     1  1  ...   1

with ``len(input_ids) <= max_seq_length``, so A and B together hold at most
``max_num_tokens = max_seq_length - 3`` tokens. The NSP label is ``is_random_next``
(``NSPInstance.next_sentence_label``: 1 = NotNext, 0 = IsNext).
"""
from __future__ import annotations

from autograd.errors import MiniLMError
# NSPInstance is the record returned below. library_truncate_seq_pair is the kit's binding of the
# truncate_seq_pair slot: create_nsp_instances calls it, so that in the graded tests it runs the
# reference and a mistake in one slot does not fail the other.
from minilm.data.nsp import NSPInstance, truncate_seq_pair as library_truncate_seq_pair


def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, *, rng):
    """Task 5.3: shorten a pair of segments until ``len(a) + len(b) <= max_num_tokens``.

    BERT's rule, one token at a time:

        while len(a) + len(b) > max_num_tokens:
            trim the LONGER segment (B when they are equally long):
            with probability 1/2 drop its FIRST token, otherwise its LAST token
            (one draw ``rng.random() < 0.5`` per removed token)

    Dropping from both ends at random (rather than always the end) is a little noise that keeps
    the model from relying on where the text was cut.

    Args: ``tokens_a``, ``tokens_b`` lists (or 1-D arrays) of ids; ``max_num_tokens`` int;
    ``rng`` a ``numpy.random.Generator``.
    Returns: ``(a, b)``, two NEW lists; the inputs are not modified.

    The graded tests check the final lengths (e.g. 10 and 8 tokens with max 14 give 7 and 7), that
    the shorter segment is left alone and B is cut on a tie, that each result is a contiguous piece
    of its input, and that the front is cut about half of the time (not always the back).
    """
    raise NotImplementedError("Task 5.3: truncate_seq_pair")


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


def create_nsp_instances(documents, *, max_seq_length, rng, short_seq_prob=0.1, cls_id=None, sep_id=None):
    """Task 5.3: BERT's sentence-pair instances (``create_instances_from_document``) for every document.

    For each document, in order (``documents[i]``, a list of sentences of ids):

    1. ``max_num_tokens = max_seq_length - 3``. The target length is ``max_num_tokens``, except with
       probability ``short_seq_prob`` (``rng.random() < short_seq_prob``) it is
       ``rng.integers(2, max_num_tokens + 1)`` — one draw per document, to also train short inputs.
    2. Walk the sentences with an index ``i``, appending each to a ``chunk``. When the document ends
       or the chunk's total length reaches the target (``>=``), emit one instance from the chunk,
       then empty it:
       a. ``a_end = 1`` if the chunk has one sentence, else ``rng.integers(1, len(chunk))``
          (1 .. len-1). Segment A = the sentences ``chunk[:a_end]``, concatenated.
       b. **NotNext** if the chunk has one sentence, or else if ``rng.random() < 0.5``.
          Draw a random document index (``rng.integers(len(documents))``) up to 10 times until it is
          not the current document (BERT's loop; drawing directly among the other documents is fine
          too); start at a random sentence of it (``rng.integers(len(that_doc))``) and
          concatenate sentences until B has at least ``target - len(A)`` tokens or that document
          ends. The chunk's unused sentences ``chunk[a_end:]`` are **put back**: step the sentence
          index back by ``len(chunk) - a_end`` so they are read again.
          **IsNext** otherwise: B = the sentences ``chunk[a_end:]``, concatenated.
       c. ``A, B = truncate_seq_pair(A, B, max_num_tokens, rng=rng)`` — call
          ``library_truncate_seq_pair`` (imported above), the kit's binding of that slot.
       d. Emit ``NSPInstance(input_ids=[cls_id] + A + [sep_id] + B + [sep_id],
          segment_ids=[0] * (len(A) + 2) + [1] * (len(B) + 1), is_random_next=...)``.

    ``documents`` have already been checked and cleaned (no empty sentences or documents, at least
    two documents). Returns the list of instances, document by document (BERT shuffles them
    afterwards and repeats the whole pass ``dupe_factor`` times; callers do that).

    The graded tests check the layout and segment ids (the first [SEP] is segment 0), that no
    instance is longer than ``max_seq_length``, that IsNext pairs are A then the text that follows
    it in the same document and NotNext pairs take B from another document, the put-back, that chunks
    fill up to the target length, and that NotNext is chosen about half of the time when the chunk
    has two or more sentences.
    """
    documents = _clean_documents(documents, max_seq_length, cls_id, sep_id)
    raise NotImplementedError("Task 5.3: create_nsp_instances")
