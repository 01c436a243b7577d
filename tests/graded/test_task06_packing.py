"""Graded tests of Task 6.1 (packing half): FULL-SENTENCES and DOC-SENTENCES (Liu et al. 2019, §4.2;
fairseq's ``complete`` / ``complete_doc``, fairseq/data/token_block_utils_fast.pyx).

Every token id in these corpora is unique (separator 0, tokens from 1), so a block can be traced
back to the sentence and document each of its tokens came from.
"""
import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MOD = "task06_roberta.packing"
SEP = 0
SETTINGS = settings(deadline=None, report_multiple_bugs=False, max_examples=150,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])  # impl is stateless


def make_docs(lengths):
    """Documents with the given sentence lengths, every token id unique and >= 1."""
    docs, next_id = [], 1
    for doc_lengths in lengths:
        doc = []
        for n in doc_lengths:
            doc.append(list(range(next_id, next_id + n)))
            next_id += n
        docs.append(doc)
    return docs


@st.composite
def corpora(draw, min_block=1):
    """(docs, block_size) with every sentence short enough to fit a block."""
    block_size = draw(st.integers(min_block, 12))
    lengths = draw(st.lists(st.lists(st.integers(1, block_size), min_size=1, max_size=6),
                            min_size=1, max_size=6))
    return make_docs(lengths), block_size


def full_stream(docs):
    """FULL-SENTENCES' units in order: the sentences, a [SEP] unit between documents."""
    units = []
    for d, doc in enumerate(docs):
        if d > 0:
            units.append([SEP])
        units.extend(doc)
    return units


def check_greedy_partition(blocks, units, block_size):
    """blocks are units packed greedily: same tokens, cut only between units, each block full."""
    assert [t for b in blocks for t in b] == [t for u in units for t in u], \
        "the blocks, concatenated, are not the sentences in order (a lost, extra or missing token?)"
    assert all(0 < len(b) <= block_size for b in blocks), \
        f"block lengths {[len(b) for b in blocks]}: expected 1..block_size={block_size}"
    unit_ends = set(np.cumsum([len(u) for u in units]).tolist())
    block_ends = np.cumsum([len(b) for b in blocks]).tolist()
    assert set(block_ends) <= unit_ends, "a sentence was split across two blocks"
    # greedy: the unit that opened each next block would not have fitted in the previous one
    starts = {end: i for i, end in enumerate(np.cumsum([0] + [len(u) for u in units]).tolist())}
    for b, end in enumerate(block_ends[:-1]):
        nxt = units[starts[end]]
        assert len(blocks[b]) + len(nxt) > block_size, (
            f"block {b} was closed with {len(blocks[b])} tokens although the next unit "
            f"({len(nxt)} tokens) fits in block_size={block_size}")


# ----------------------------------------------------------------------------- FULL-SENTENCES

@pytest.mark.task6_1
@pytest.mark.points(1)
def test_full_sentences_docstring_example(impl):
    pack = impl(MOD).pack_full_sentences
    assert (got := pack([[[1, 2], [3, 4]], [[5, 6, 7]]], 5, 0)) == [[1, 2, 3, 4, 0], [5, 6, 7]], \
        ('pack([[[1, 2], [3, 4]], [[5, 6, 7]]], 5, 0) should be [[1, 2, 3, 4, 0], [5, 6, 7]], got ' + repr(got)
         + ' — fill a block with whole sentences; a [SEP] (here 0) goes between documents')


@pytest.mark.task6_1
@pytest.mark.points(1)
def test_full_sentences_cross_documents_with_one_separator(impl):
    pack = impl(MOD).pack_full_sentences
    # three short documents fit in one block, with a separator between each two of them
    assert (got := pack([[[1, 2]], [[3]], [[4, 5]]], 16, 99)) == [[1, 2, 99, 3, 99, 4, 5]], \
        ('pack([[[1, 2]], [[3]], [[4, 5]]], 16, 99) should be [[1, 2, 99, 3, 99, 4, 5]], got ' + repr(got)
         + ' — blocks may cross documents with one separator between them, but not inside a document')
    # the separator is not put after the last document, nor before the first one
    assert (got := pack([[[1, 2], [3]]], 16, 99)) == [[1, 2, 3]], \
        ('pack([[[1, 2], [3]]], 16, 99) should be [[1, 2, 3]], got ' + repr(got)
         + ' — blocks may cross documents with one separator between them, but not inside a document')


@pytest.mark.task6_1
@pytest.mark.points(2)
@SETTINGS
@given(corpora())
def test_full_sentences_is_greedy_whole_sentence_packing(impl, corpus):
    docs, block_size = corpus
    before = copy.deepcopy(docs)
    blocks = impl(MOD).pack_full_sentences(docs, block_size, SEP)
    assert docs == before, "pack_full_sentences modified its input"
    assert all(isinstance(b, list) for b in blocks), "pack_full_sentences must return a list of lists of ids"
    check_greedy_partition(blocks, full_stream(docs), block_size)


@pytest.mark.task6_1
@pytest.mark.points(1)
def test_full_sentences_overlong_sentence_is_its_own_truncated_block(impl):
    pack = impl(MOD).pack_full_sentences
    long = list(range(10, 20))
    blocks = pack([[[1, 2], long, [3]], [[4]]], 4, 0)
    assert blocks == [[1, 2], [10, 11, 12, 13], [3, 0, 4]], \
        ("[[1, 2], long (10 tokens), [3]], [[4]] with block_size 4 should pack as [[1, 2], [10, 11, 12, "
         "13], [3, 0, 4]], got ") + repr(blocks) + " — an over-long sentence is a block of its own, cut to block_size"
    # an over-long first sentence too
    assert (got := pack([[long, [1]]], 3, 0)) == [[10, 11, 12], [1]], \
        ('pack([[long, [1]]], 3, 0) should be [[10, 11, 12], [1]], got ' + repr(got)
         + ' — a sentence longer than block_size is a block of its own, cut to block_size')


# ----------------------------------------------------------------------------- DOC-SENTENCES

@pytest.mark.task6_1
@pytest.mark.points(1)
def test_doc_sentences_docstring_example(impl):
    pack = impl(MOD).pack_doc_sentences
    assert (got := pack([[[1, 2], [3]], [[4, 5, 6], [7, 8]], [[9]]], 4)) == [[1, 2, 3], [4, 5, 6], [7, 8]], \
        (('pack([[[1, 2], [3]], [[4, 5, 6], [7, 8]], [[9]]], 4) should be [[1, 2, 3], [4, 5, 6], [7, 8]], '
          'got ') + repr(got)
         + ' — DOC-SENTENCES never crosses a document: start a new block at each document')


@pytest.mark.task6_1
@pytest.mark.points(2)
@SETTINGS
@given(corpora(min_block=2))
def test_doc_sentences_restart_at_every_document(impl, corpus):
    docs, block_size = corpus
    before = copy.deepcopy(docs)
    blocks = impl(MOD).pack_doc_sentences(docs, block_size)
    assert docs == before, "pack_doc_sentences modified its input"
    doc_of = {t: d for d, doc in enumerate(docs) for s in doc for t in s}
    assert all(t in doc_of for b in blocks for t in b), "a block holds a token that is in no sentence"
    per_doc = [[] for _ in docs]
    for b in blocks:
        owners = {doc_of[t] for t in b}
        assert len(owners) == 1, f"block {b} mixes documents {sorted(owners)}"
        assert len(b) > 1, f"block {b} has at most one token: it should have been dropped"
        per_doc[owners.pop()].append(b)
    for doc, doc_blocks in zip(docs, per_doc):
        # put the dropped one-token blocks back (ids grow along a document, so sort by first id):
        # the document must then be exactly a greedy whole-sentence packing of its own sentences
        covered = {t for b in doc_blocks for t in b}
        dropped = [s for s in doc if s[0] not in covered]
        assert all(len(s) == 1 for s in dropped), "a sentence of several tokens was dropped"
        check_greedy_partition(sorted(doc_blocks + dropped, key=lambda b: b[0]), doc, block_size)


@pytest.mark.task6_1
@pytest.mark.points(1)
def test_doc_sentences_drop_blocks_of_one_token(impl):
    pack = impl(MOD).pack_doc_sentences
    assert (got := pack([[[5]]], 4)) == [], \
        ('pack([[[5]]], 4) should be [], got ' + repr(got)
         + ' — a block of a single token is dropped (nothing to predict)')
    assert (got := pack([[[1, 2, 3], [4]]], 3)) == [[1, 2, 3]], \
        ('pack([[[1, 2, 3], [4]]], 3) should be [[1, 2, 3]], got ' + repr(got)
         + ' — a block of a single token is dropped (nothing to predict)')
    assert (got := pack([[[7]], [[8]], [[1], [2]]], 4)) == [[1, 2]], \
        ('pack([[[7]], [[8]], [[1], [2]]], 4) should be [[1, 2]], got ' + repr(got)
         + ' — a block of a single token is dropped (nothing to predict)')
    assert (got := pack([[[1, 2]], [[3, 4]]], 8)) == [[1, 2], [3, 4]], \
        ('pack([[[1, 2]], [[3, 4]]], 8) should be [[1, 2], [3, 4]], got ' + repr(got)
         + ' — a block of a single token is dropped (nothing to predict)')


@pytest.mark.task6_1
@pytest.mark.points(1)
def test_doc_sentences_overlong_sentence_is_its_own_truncated_block(impl):
    pack = impl(MOD).pack_doc_sentences
    long = list(range(10, 20))
    assert (got := pack([[[1, 2], long, [3, 4]], [[5, 6]]], 4)) == [[1, 2], [10, 11, 12, 13], [3, 4], [5, 6]], \
        (('pack([[[1, 2], long, [3, 4]], [[5, 6]]], 4) should be [[1, 2], [10, 11, 12, 13], [3, 4], [5, '
          '6]], got ') + repr(got)
         + ' — a sentence longer than block_size is a block of its own, cut to block_size')
