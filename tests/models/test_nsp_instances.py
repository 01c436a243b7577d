"""The library's BERT NSP instances (minilm.data.create_nsp_instances): the walk over each document
that calls Task 5.3's slots (nsp_pair, truncate_seq_pair, pair_layout), checked on the reference.

Every token id of the test corpora is unique, so each token of an instance can be traced back to its
document and its position there. Statistics use fixed seeds and >= 10,000 draws, with 4-sigma bounds.
"""
import copy

import numpy as np

from autograd import tasks
from minilm.data import create_nsp_instances, sentence_pair_instances
from tests.graded.test_task05_nsp import make_corpus  # documents of unique, traceable ids

CLS, SEP = 1, 2


def split(inst):
    """(A, B) of an instance, after checking the [CLS] A [SEP] B [SEP] layout."""
    ids = list(inst.input_ids)
    assert ids[0] == CLS and ids[-1] == SEP, f"expected [CLS] ... [SEP], got {ids}"
    seps = [i for i, t in enumerate(ids) if t == SEP]
    assert len(seps) == 2, f"expected exactly two [SEP], got {ids}"
    a, b = ids[1:seps[0]], ids[seps[0] + 1:-1]
    assert a and b, f"segment A or B is empty: {ids}"
    return a, b


def instances(docs, seed, **kw):
    kw.setdefault("short_seq_prob", 0.1)
    return create_nsp_instances(docs, rng=np.random.default_rng(seed), cls_id=CLS, sep_id=SEP, **kw)


def test_instance_layout_and_segment_ids():
    docs, _ = make_corpus(np.random.default_rng(0), 30, (1, 8), (1, 6))
    before = copy.deepcopy(docs)
    out = instances(docs, 0, max_seq_length=24)
    assert docs == before, "create_nsp_instances modified its input"
    assert len(out) >= 30, f"30 documents should give at least 30 instances, got {len(out)}"
    for inst in out:
        a, b = split(inst)
        want = [0] * (len(a) + 2) + [1] * (len(b) + 1)  # [CLS] A [SEP] -> 0;  B [SEP] -> 1
        assert list(inst.segment_ids) == want, (
            f"segment ids {list(inst.segment_ids)} for {list(inst.input_ids)}: expected {want} "
            "(0 for [CLS], A and the first [SEP]; 1 for B and the last [SEP])")


def test_no_instance_longer_than_max_seq_length():
    docs, _ = make_corpus(np.random.default_rng(1), 30, (1, 6), (4, 20))
    for max_len in (8, 16, 40):
        out = instances(docs, max_len, max_seq_length=max_len)
        lengths = [len(inst.input_ids) for inst in out]
        assert max(lengths) <= max_len, f"an instance has {max(lengths)} tokens > max_seq_length={max_len}"
        assert max(lengths) == max_len, \
            (f"with long sentences some instance should be cut to exactly max_seq_length={max_len}, the longest "
             f"has {max(lengths)}: fill the target length")  # long sentences: some instances are cut exactly to the limit


def test_isnext_continues_the_document_and_notnext_comes_from_another():
    docs, where = make_corpus(np.random.default_rng(2), 40, (2, 10), (1, 5))
    out = instances(docs, 2, max_seq_length=20)
    kinds = set()
    for inst in out:
        a, b = split(inst)
        doc_a = {where[t][0] for t in a}
        doc_b = {where[t][0] for t in b}
        assert len(doc_a) == 1, "segment A mixes documents"
        if inst.is_random_next:
            assert doc_b.isdisjoint(doc_a), \
                "a NotNext instance (is_random_next=True) took B from A's own document"
        else:
            assert doc_b == doc_a, "an IsNext instance (is_random_next=False) took B from another document"
            assert max(where[t][1] for t in a) < min(where[t][1] for t in b), "IsNext: B does not follow A"
        kinds.add(inst.is_random_next)
    assert kinds == {True, False}, \
        f"over 40 documents there should be both IsNext and NotNext instances, got only is_random_next in {kinds}"


def test_one_sentence_chunks_are_notnext_and_unused_sentences_are_put_back():
    # two short sentences per document, a large target: every chunk is [s0, s1] with a_end = 1.
    # IsNext uses s1 as B; NotNext must put s1 back, which then forms a chunk alone -> NotNext.
    docs, where = make_corpus(np.random.default_rng(3), 300, (2, 2), (2, 3))
    out = instances(docs, 3, max_seq_length=64, short_seq_prob=0.0)
    by_doc = {}
    for inst in out:
        a, b = split(inst)
        by_doc.setdefault(where[a[0]][0], []).append((a, b, inst.is_random_next))
    assert sorted(by_doc) == list(range(len(docs))), "some document gave no instance"
    for d, insts in by_doc.items():
        s0, s1 = docs[d]
        assert insts[0][0] == s0, "the first instance of a document should start with its first sentence"
        if insts[0][2]:  # NotNext: s1 was put back and makes a second, one-sentence chunk
            assert len(insts) == 2 and insts[1][0] == s1, (
                "after a NotNext pair the unused sentence must be put back and used as A")
            assert insts[1][2], "a chunk of one sentence must be NotNext"
        else:
            assert len(insts) == 1 and insts[0][1] == s1, \
                ("an IsNext pair from a two-sentence chunk must be A = s0, B = s1, and the document gives "
                 "no other instance")


def test_notnext_half_of_the_time_when_there_is_a_choice():
    docs, where = make_corpus(np.random.default_rng(4), 10_000, (2, 2), (2, 3))
    out = instances(docs, 4, max_seq_length=64, short_seq_prob=0.0)
    # the instances whose A is a document's first sentence came from a two-sentence chunk
    first = [inst.is_random_next for inst in out if where[split(inst)[0][0]][1] == 0]
    n = len(first)
    assert n == len(docs), \
        (f"every one of the {len(docs)} two-sentence documents should give one instance starting at its first "
         f"sentence, got {n}")
    share = np.mean(first)
    assert abs(share - 0.5) < 4 * np.sqrt(0.25 / n), \
        f"NotNext share {share:.3f} among the chunks of two sentences, expected 0.5"


def test_chunks_fill_up_to_the_target_length():
    docs, where = make_corpus(np.random.default_rng(5), 40, (40, 40), (3, 3))
    out = instances(docs, 5, max_seq_length=32, short_seq_prob=0.0)
    full = [len(i.input_ids) for i in out]
    # 10 sentences of 3 tokens reach the target of 29: almost every instance is exactly 32 long
    assert np.mean(np.array(full) == 32) > 0.7, \
        f"instance lengths {sorted(full)[:20]}...: the chunks do not fill up to the target"
    # A is chunk[:a_end] with a_end uniform in 1 .. len(chunk) - 1, so with chunks of up to 10
    # sentences A has about 4 to 5 sentences on average (not always 1, not always all but one)
    n_a = np.mean([len({where[t][2] for t in split(i)[0]}) for i in out])
    assert 2.5 < n_a < 6, \
        f"segment A has {n_a:.2f} sentences on average: is a_end uniform in 1 .. len(chunk) - 1?"
    short = [len(i.input_ids) for i in instances(docs, 5, max_seq_length=32, short_seq_prob=1.0)]
    assert np.mean(short) < 0.75 * np.mean(full), "short_seq_prob=1.0 should give shorter targets"


def test_the_walk_calls_the_three_task_5_3_slots():
    docs, _ = make_corpus(np.random.default_rng(7), 5, (2, 4), (2, 4))
    with tasks.trace() as seen:
        instances(docs, 7, max_seq_length=16)
        sentence_pair_instances(docs, max_seq_length=16, rng=np.random.default_rng(7), cls_id=CLS, sep_id=SEP)
    assert {("task05_bert.nsp", name) for name in ("nsp_pair", "truncate_seq_pair", "pair_layout")} <= seen
