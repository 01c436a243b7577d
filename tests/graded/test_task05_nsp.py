"""Graded tests of Task 5.3: truncate_seq_pair, pair_layout and nsp_pair, the pieces of BERT's NSP
instances (google-research/bert ``create_instances_from_document``). The library's
``minilm.data.create_nsp_instances``, which walks the documents and calls them, is tested in
tests/models/test_nsp_instances.py.

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


# ----------------------------------------------------------------------------- pair_layout

@pytest.mark.task5_3
@pytest.mark.points(2)
def test_pair_layout_and_segment_ids(impl):
    layout = impl(MOD).pair_layout
    for a, b in (([10, 11, 12], [20, 21]), ([10], [20, 21, 22, 23]), ([], [20]), ([10], [])):
        a_in, b_in = list(a), list(b)
        ids, seg = layout(a_in, b_in, cls_id=CLS, sep_id=SEP)
        want = [CLS] + a + [SEP] + b + [SEP]
        assert list(ids) == want, f"A={a}, B={b}: input_ids should be [CLS] A [SEP] B [SEP] = {want}, got {list(ids)}"
        want_seg = [0] * (len(a) + 2) + [1] * (len(b) + 1)
        assert list(seg) == want_seg, (
            f"A={a}, B={b}: segment ids {list(seg)}, expected {want_seg} (0 for [CLS], A and the FIRST [SEP]; "
            "1 for B and the last [SEP])")
        assert a_in == a and b_in == b, "pair_layout modified its inputs"


# ----------------------------------------------------------------------------- nsp_pair

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


def pairs(impl, docs, seed, n, chunk_sentences=(1, 6), target=30):
    """``n`` calls of nsp_pair on chunks of consecutive sentences of random documents:
    yields (chunk, doc_index, first sentence index, (A, B, is_random_next, put_back))."""
    rng = np.random.default_rng(seed)
    nsp_pair = impl(MOD).nsp_pair
    for _ in range(n):
        d = int(rng.integers(len(docs)))
        k = min(len(docs[d]), int(rng.integers(chunk_sentences[0], chunk_sentences[1] + 1)))
        first = int(rng.integers(len(docs[d]) - k + 1))
        chunk = [list(s) for s in docs[d][first:first + k]]
        before = copy.deepcopy(chunk)
        out = nsp_pair(chunk, docs, d, target=target, rng=rng)
        assert chunk == before, "nsp_pair modified the chunk"
        yield chunk, d, first, out


def a_sentences(chunk, a):
    """How many whole sentences of the chunk A is (asserts that A is a prefix of whole sentences)."""
    for a_end in range(1, len(chunk) + 1):
        if [t for s in chunk[:a_end] for t in s] == list(a):
            return a_end
    raise AssertionError(f"segment A {list(a)} is not the first sentences of the chunk {chunk}, concatenated")


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_isnext_is_a_then_the_rest_of_the_chunk(impl):
    docs, _ = make_corpus(np.random.default_rng(2), 40, (2, 10), (1, 5))
    seen = 0
    for chunk, _, _, (a, b, is_random_next, put_back) in pairs(impl, docs, 2, 2000, chunk_sentences=(2, 6)):
        a_end = a_sentences(chunk, a)
        assert a_end < len(chunk), f"A took all {len(chunk)} sentences of the chunk: a_end is at most len(chunk) - 1"
        if not is_random_next:
            seen += 1
            want = [t for s in chunk[a_end:] for t in s]
            assert list(b) == want, f"IsNext: B should be the rest of the chunk {want}, got {list(b)}"
            assert put_back == 0, f"IsNext uses the whole chunk: put_back should be 0, got {put_back}"
    assert seen > 500, f"only {seen} IsNext pairs in 2000 chunks of 2-6 sentences"


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_notnext_takes_b_from_another_document_and_puts_the_rest_back(impl):
    docs, where = make_corpus(np.random.default_rng(3), 40, (2, 10), (1, 5))
    seen = 0
    for chunk, d, _, (a, b, is_random_next, put_back) in pairs(impl, docs, 3, 2000):
        a_end = a_sentences(chunk, a)
        if len(chunk) == 1:
            assert is_random_next, "a chunk of one sentence has no next sentence: it must be NotNext"
        if not is_random_next:
            continue
        seen += 1
        assert put_back == len(chunk) - a_end, (
            f"NotNext with A = {a_end} of the chunk's {len(chunk)} sentences: the other "
            f"{len(chunk) - a_end} must be put back (read again), got put_back={put_back}")
        other = {where[t][0] for t in b}
        assert len(other) == 1 and d not in other, \
            f"NotNext: B should come from ONE other document than {d}, it comes from {sorted(other)}"
        o = other.pop()
        first = where[b[0]][2]
        want = [t for s in docs[o][first:] for t in s][:len(b)]
        assert where[b[0]][1] == sum(len(s) for s in docs[o][:first]) and list(b) == want, \
            "NotNext: B should be whole consecutive sentences of the other document, from a sentence start"
        assert where[b[-1]][1] == sum(len(s) for s in docs[o][:where[b[-1]][2] + 1]) - 1, \
            "NotNext: B should end at a sentence end (whole sentences only)"
    assert seen > 500, f"only {seen} NotNext pairs in 2000 chunks"


@pytest.mark.task5_3
@pytest.mark.points(2)
def test_notnext_half_of_the_time_when_there_is_a_choice(impl):
    docs, _ = make_corpus(np.random.default_rng(4), 50, (3, 6), (2, 3))
    draws = [out[2] for _, _, _, out in pairs(impl, docs, 4, 20_000, chunk_sentences=(2, 3))]
    share, n = np.mean(draws), len(draws)
    assert abs(share - 0.5) < 4 * np.sqrt(0.25 / n), \
        f"NotNext share {share:.3f} among {n} chunks of two or more sentences, expected 0.5"


@pytest.mark.task5_3
@pytest.mark.points(1)
def test_notnext_b_stops_once_it_reaches_the_target(impl):
    docs, where = make_corpus(np.random.default_rng(5), 30, (10, 20), (2, 4))
    for target in (6, 15, 40):
        for chunk, _, _, (a, b, is_random_next, _) in pairs(impl, docs, target, 500, chunk_sentences=(1, 1),
                                                           target=target):
            o, last = where[b[-1]][0], where[b[-1]][2]
            ended = last == len(docs[o]) - 1
            assert len(b) >= target - len(a) or ended, \
                (f"target {target}, A of {len(a)} tokens: B has {len(b)} tokens although its document goes on; "
                 f"add sentences until B has at least target - len(A) = {target - len(a)}")
            assert len(b) - len(docs[o][last]) < target - len(a), \
                (f"target {target}, A of {len(a)} tokens: B has {len(b)} tokens, a whole sentence more than needed: "
                 "stop as soon as B reaches target - len(A)")


@pytest.mark.task5_3
@pytest.mark.points(1)
def test_a_end_is_uniform_over_one_to_len_minus_one(impl):
    docs, _ = make_corpus(np.random.default_rng(6), 30, (5, 8), (1, 3))
    ends = [a_sentences(chunk, out[0]) for chunk, _, _, out in pairs(impl, docs, 6, 8000, chunk_sentences=(5, 5))]
    counts = np.bincount(ends, minlength=6)[1:]
    assert counts[4] == 0, "A took all 5 sentences of a chunk: a_end is rng.integers(1, len(chunk)), at most len - 1"
    expected = len(ends) / 4
    chi2 = float(((counts[:4] - expected) ** 2 / expected).sum())
    assert chi2 < 3 + 6 * np.sqrt(6), \
        f"a_end over 1..4 for chunks of 5 sentences: counts {counts[:4].tolist()}, expected about {expected:.0f} each"
