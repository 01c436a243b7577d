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

The library's ``minilm.data.create_nsp_instances`` walks each document as BERT's
``create_instances_from_document`` does — a target length per document, sentences gathered into a
chunk until it reaches the target — and calls the three pieces of this task for each full chunk:
``nsp_pair`` (segments A and B, IsNext or NotNext), ``truncate_seq_pair`` and ``pair_layout``.
"""
from __future__ import annotations

from autograd.errors import MiniLMError


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
    # BEGIN SOLUTION
    a, b = list(tokens_a), list(tokens_b)
    while len(a) + len(b) > max_num_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()
    return a, b
    # END SOLUTION


def nsp_pair(chunk, documents, doc_index, *, target, rng):
    """Task 5.3: segments A and B of one full chunk, IsNext or NotNext (BERT's ``create_instances_from_document``).

    ``chunk``: the sentences gathered so far (a non-empty list of lists of ids), in document order;
    ``documents``: every document (lists of sentences); ``doc_index``: the chunk's document;
    ``target``: the document's target length in tokens (A and B together).

    1. ``a_end = 1`` if the chunk has one sentence, else ``rng.integers(1, len(chunk))`` (1 ..
       len-1). Segment A = the sentences ``chunk[:a_end]``, concatenated.
    2. **NotNext** if the chunk has one sentence, or else if ``rng.random() < 0.5``.
       Draw a random document index (``rng.integers(len(documents))``) up to 10 times until it is
       not ``doc_index`` (BERT's loop); start at a random sentence of it
       (``rng.integers(len(that_doc))``) and concatenate sentences until B has at least
       ``target - len(A)`` tokens or that document ends. The chunk's unused sentences
       ``chunk[a_end:]`` must be **put back** — read again by the caller, who steps its sentence
       index back by ``put_back = len(chunk) - a_end``.
       **IsNext** otherwise: B = the sentences ``chunk[a_end:]``, concatenated; ``put_back = 0``.

    Returns ``(tokens_a, tokens_b, is_random_next, put_back)``: two new lists of ids, a bool, an int.
    Draw from ``rng`` in the order above (a_end, the coin, the documents, the start sentence), so that
    the kit gives the same numbers on your code as on the reference.

    The graded tests check that A is the first a_end sentences with a_end uniform in 1 .. len-1,
    that IsNext pairs are A then the rest of the chunk, that NotNext pairs take whole sentences of
    another document up to the target and put the rest of the chunk back, that a one-sentence chunk
    is NotNext, and that NotNext is chosen about half of the time otherwise.
    """
    if not chunk or doc_index not in range(len(documents)):  # given: checks
        raise MiniLMError(f"nsp_pair: a chunk of {len(chunk)} sentences from document {doc_index} of "
                          f"{len(documents)}: expected at least one sentence and a valid document index")
    # BEGIN SOLUTION
    a_end = 1 if len(chunk) == 1 else int(rng.integers(1, len(chunk)))
    tokens_a = [t for sentence in chunk[:a_end] for t in sentence]
    tokens_b, put_back = [], 0
    is_random_next = len(chunk) == 1 or rng.random() < 0.5
    if is_random_next:
        for _ in range(10):
            other = int(rng.integers(len(documents)))
            if other != doc_index:
                break
        other_doc = documents[other]
        for sentence in other_doc[int(rng.integers(len(other_doc))):]:
            tokens_b.extend(sentence)
            if len(tokens_b) >= target - len(tokens_a):
                break
        put_back = len(chunk) - a_end  # the unused sentences are read again
    else:
        tokens_b = [t for sentence in chunk[a_end:] for t in sentence]
    return tokens_a, tokens_b, bool(is_random_next), put_back
    # END SOLUTION


def pair_layout(tokens_a, tokens_b, *, cls_id, sep_id):
    """Task 5.3: BERT's input layout of a sentence pair. Returns ``(input_ids, segment_ids)``, two new lists::

        input_ids   = [CLS]  a1 a2 ... [SEP]  b1 b2 ... [SEP]
        segment_ids =   0    0  0  ...   0     1  1  ...   1

    ``[CLS]``, A and the FIRST ``[SEP]`` are segment 0; B and the last ``[SEP]`` segment 1. Both
    lists have ``len(tokens_a) + len(tokens_b) + 3`` entries. The graded tests check the layout and
    the segment ids, on empty and non-empty segments.
    """
    # BEGIN SOLUTION
    input_ids = [cls_id] + list(tokens_a) + [sep_id] + list(tokens_b) + [sep_id]
    segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
    return input_ids, segment_ids
    # END SOLUTION
