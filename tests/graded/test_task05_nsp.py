"""Graded tests of Task 5.3: truncate_seq_pair and BERT's NSP instances (google-research/bert
``create_instances_from_document``).

Every token id of the test corpora is unique, so each token of an instance can be traced back to its
document and its position there. Statistics use fixed seeds and >= 10,000 draws, with 4-sigma bounds.
"""
import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MOD = "task05_bert.nsp"
CLS, SEP = 1, 2
SETTINGS = settings(deadline=None, report_multiple_bugs=False, max_examples=100,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])  # impl is stateless


# ----------------------------------------------------------------------------- truncate_seq_pair

@pytest.mark.task5_3
@pytest.mark.points(1)
def test_truncate_trims_the_longer_segment_and_b_on_a_tie(impl):
    truncate = impl(MOD).truncate_seq_pair
    cases = [  # (len a, len b, max) -> (len a, len b)
        ((10, 3, 8), (5, 3)),     # only the longer one shrinks
        ((3, 10, 8), (3, 5)),
        ((4, 4, 7), (4, 3)),      # a tie: B loses the token
        ((10, 8, 14), (7, 7)),    # 10,8 -> 9,8 -> 8,8 -> 8,7 (tie: B) -> 7,7
        ((3, 3, 10), (3, 3)),     # already short enough: untouched
    ]
    for seed in range(5):
        rng = np.random.default_rng(seed)
        for (na, nb, m), want in cases:
            a, b = truncate(list(range(100, 100 + na)), list(range(200, 200 + nb)), m, rng=rng)
            assert (len(a), len(b)) == want, f"lengths {na}, {nb} with max {m}: got {(len(a), len(b))}"


@pytest.mark.task5_3
@pytest.mark.points(1)
@SETTINGS
@given(st.integers(0, 20), st.integers(0, 20), st.integers(2, 30), st.integers(0, 2**32 - 1))
def test_truncate_keeps_contiguous_pieces_and_returns_new_lists(impl, na, nb, m, seed):
    a0, b0 = list(range(100, 100 + na)), list(range(200, 200 + nb))
    a_in, b_in = list(a0), list(b0)
    a, b = impl(MOD).truncate_seq_pair(a_in, b_in, m, rng=np.random.default_rng(seed))
    assert a_in == a0 and b_in == b0, "truncate_seq_pair modified its inputs: return new lists"
    assert isinstance(a, list) and isinstance(b, list), \
        f"truncate_seq_pair should return two lists, got {type(a).__name__} and {type(b).__name__}"
    assert len(a) + len(b) == min(na + nb, m), \
        f"truncating {na} + {nb} tokens to max {m} should keep {min(na + nb, m)} tokens, kept {len(a)} + {len(b)}"
    for got, orig in ((a, a0), (b, b0)):
        if got:  # a contiguous piece: orig[i : i + len(got)]
            i = orig.index(got[0])
            assert got == orig[i:i + len(got)], "tokens were removed from the middle"


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_truncate_cuts_front_or_back_with_probability_one_half_per_token(impl):
    truncate = impl(MOD).truncate_seq_pair
    rng = np.random.default_rng(1234)
    n = 10_000
    # one token to remove: how often is it the first one?
    fronts = sum(truncate(list(range(10)), [], 9, rng=rng)[0][0] == 1 for _ in range(n))
    assert abs(fronts / n - 0.5) < 4 * np.sqrt(0.25 / n), \
        f"the front was cut in {fronts / n:.3f} of the draws, expected 0.5"
    # five tokens to remove: the number cut from the front is Binomial(5, 1/2), one coin per token
    k = np.array([truncate(list(range(10)), [], 5, rng=rng)[0][0] for _ in range(n)])
    assert abs(k.mean() - 2.5) < 4 * np.sqrt(1.25 / n), f"mean front cuts {k.mean():.3f}, expected 2.5"
    assert abs(k.var() - 1.25) < 0.1, \
        f"variance of the front cuts {k.var():.3f}, expected 1.25 (one draw per removed token)"


# ----------------------------------------------------------------------------- create_nsp_instances

def make_corpus(rng, n_docs, n_sentences, sentence_len):
    """Documents of unique ids; ``where[id] = (document, position in its token stream, sentence)``."""
    docs, where, next_id = [], {}, 10
    for d in range(n_docs):
        doc, pos = [], 0
        for k in range(int(rng.integers(n_sentences[0], n_sentences[1] + 1))):
            n = int(rng.integers(sentence_len[0], sentence_len[1] + 1))
            sentence = list(range(next_id, next_id + n))
            for t in sentence:
                where[t] = (d, pos, k)
                pos += 1
            next_id += n
            doc.append(sentence)
        docs.append(doc)
    return docs, where


def split(inst):
    """(A, B) of an instance, after checking the [CLS] A [SEP] B [SEP] layout."""
    ids = list(inst.input_ids)
    assert ids[0] == CLS and ids[-1] == SEP, f"expected [CLS] ... [SEP], got {ids}"
    seps = [i for i, t in enumerate(ids) if t == SEP]
    assert len(seps) == 2, f"expected exactly two [SEP], got {ids}"
    a, b = ids[1:seps[0]], ids[seps[0] + 1:-1]
    assert a and b, f"segment A or B is empty: {ids}"
    return a, b


def instances(impl, docs, seed, **kw):
    kw.setdefault("short_seq_prob", 0.1)
    return impl(MOD).create_nsp_instances(docs, rng=np.random.default_rng(seed), cls_id=CLS, sep_id=SEP, **kw)


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_instance_layout_and_segment_ids(impl):
    docs, _ = make_corpus(np.random.default_rng(0), 30, (1, 8), (1, 6))
    before = copy.deepcopy(docs)
    out = instances(impl, docs, 0, max_seq_length=24)
    assert docs == before, "create_nsp_instances modified its input"
    assert len(out) >= 30, f"30 documents should give at least 30 instances, got {len(out)}"
    for inst in out:
        a, b = split(inst)
        want = [0] * (len(a) + 2) + [1] * (len(b) + 1)  # [CLS] A [SEP] -> 0;  B [SEP] -> 1
        assert list(inst.segment_ids) == want, (
            f"segment ids {list(inst.segment_ids)} for {list(inst.input_ids)}: expected {want} "
            "(0 for [CLS], A and the first [SEP]; 1 for B and the last [SEP])")


@pytest.mark.task5_3
@pytest.mark.points(1)
def test_no_instance_longer_than_max_seq_length(impl):
    docs, _ = make_corpus(np.random.default_rng(1), 30, (1, 6), (4, 20))
    for max_len in (8, 16, 40):
        out = instances(impl, docs, max_len, max_seq_length=max_len)
        lengths = [len(inst.input_ids) for inst in out]
        assert max(lengths) <= max_len, f"an instance has {max(lengths)} tokens > max_seq_length={max_len}"
        assert max(lengths) == max_len, \
            (f"with long sentences some instance should be cut to exactly max_seq_length={max_len}, the longest "
             f"has {max(lengths)}: fill the target length")  # long sentences: some instances are cut exactly to the limit


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_isnext_continues_the_document_and_notnext_comes_from_another(impl):
    docs, where = make_corpus(np.random.default_rng(2), 40, (2, 10), (1, 5))
    out = instances(impl, docs, 2, max_seq_length=20)
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


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_one_sentence_chunks_are_notnext_and_unused_sentences_are_put_back(impl):
    # two short sentences per document, a large target: every chunk is [s0, s1] with a_end = 1.
    # IsNext uses s1 as B; NotNext must put s1 back, which then forms a chunk alone -> NotNext.
    docs, where = make_corpus(np.random.default_rng(3), 300, (2, 2), (2, 3))
    out = instances(impl, docs, 3, max_seq_length=64, short_seq_prob=0.0)
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


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_notnext_half_of_the_time_when_there_is_a_choice(impl):
    docs, where = make_corpus(np.random.default_rng(4), 10_000, (2, 2), (2, 3))
    out = instances(impl, docs, 4, max_seq_length=64, short_seq_prob=0.0)
    # the instances whose A is a document's first sentence came from a two-sentence chunk
    first = [inst.is_random_next for inst in out if where[split(inst)[0][0]][1] == 0]
    n = len(first)
    assert n == len(docs), \
        (f"every one of the {len(docs)} two-sentence documents should give one instance starting at its first "
         f"sentence, got {n}")
    share = np.mean(first)
    assert abs(share - 0.5) < 4 * np.sqrt(0.25 / n), \
        f"NotNext share {share:.3f} among the chunks of two sentences, expected 0.5"


@pytest.mark.task5_3
@pytest.mark.points(1)
def test_chunks_fill_up_to_the_target_length(impl):
    docs, where = make_corpus(np.random.default_rng(5), 40, (40, 40), (3, 3))
    out = instances(impl, docs, 5, max_seq_length=32, short_seq_prob=0.0)
    full = [len(i.input_ids) for i in out]
    # 10 sentences of 3 tokens reach the target of 29: almost every instance is exactly 32 long
    assert np.mean(np.array(full) == 32) > 0.7, \
        f"instance lengths {sorted(full)[:20]}...: the chunks do not fill up to the target"
    # A is chunk[:a_end] with a_end uniform in 1 .. len(chunk) - 1, so with chunks of up to 10
    # sentences A has about 4 to 5 sentences on average (not always 1, not always all but one)
    n_a = np.mean([len({where[t][2] for t in split(i)[0]}) for i in out])
    assert 2.5 < n_a < 6, \
        f"segment A has {n_a:.2f} sentences on average: is a_end uniform in 1 .. len(chunk) - 1?"
    short = [len(i.input_ids) for i in instances(impl, docs, 5, max_seq_length=32, short_seq_prob=1.0)]
    assert np.mean(short) < 0.75 * np.mean(full), "short_seq_prob=1.0 should give shorter targets"
