"""Graded tests of Task 8.1: factorisation order, permutation mask, partial prediction, PLM spans.

Mask convention: ``perm_mask[i, j] = True`` means row i may NOT attend to column j.
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MOD = "task08_xlnet.permutation"
SETTINGS = settings(deadline=None, report_multiple_bugs=False, max_examples=80,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def ranks(order):
    rank = np.empty(len(order), dtype=np.int64)
    rank[np.asarray(order)] = np.arange(len(order))
    return rank


@st.composite
def orders_and_roles(draw, max_T=12):
    """A random order with random disjoint targets / functional positions."""
    T = draw(st.integers(1, max_T))
    order = np.array(draw(st.permutations(range(T))), dtype=np.int64)
    roles = np.array(draw(st.lists(st.sampled_from(["ctx", "tgt", "fun"]), min_size=T, max_size=T)))
    return order, roles == "tgt", roles == "fun"


# -- sample_factorization_order ------------------------------------------------------------------

@pytest.mark.task8_1
@pytest.mark.points(1)
def test_order_is_a_permutation(impl):
    sample = impl(MOD).sample_factorization_order
    rng = np.random.default_rng(0)
    for T in (1, 2, 7, 64):
        order = np.asarray(sample(T, rng=rng))
        assert order.shape == (T,) and np.issubdtype(order.dtype, np.integer), \
            f"sample_factorization_order({T}) should be a ({T},) integer array, got {order.shape} {order.dtype}"
        assert np.array_equal(np.sort(order), np.arange(T)), \
            f"sample_factorization_order({T}) is not a permutation of 0..{T - 1}: {order[:12]}"


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_every_order_equally_likely(impl):
    sample = impl(MOD).sample_factorization_order
    rng = np.random.default_rng(1)
    n = 6000
    counts = Counter(tuple(np.asarray(sample(3, rng=rng)).tolist()) for _ in range(n))
    assert len(counts) == 6, f"over {n} draws with T=3 only {len(counts)} of the 6 orders came out: {dict(counts)}"
    sd = math.sqrt(n * (1 / 6) * (5 / 6))
    for order, c in counts.items():
        assert abs(c - n / 6) < 4.5 * sd, \
            (f"order {order} came out {c} times in {n} draws, expected about {n // 6} ± {4.5 * sd:.0f}: every "
             "order must be equally likely (rng.permutation(T))")


@pytest.mark.task8_1
@pytest.mark.points(2)
def test_local_permutation_shares_one_offset_permutation_across_blocks(impl):
    sample = impl(MOD).sample_factorization_order
    rng = np.random.default_rng(2)
    n, seen = 6000, Counter()
    for _ in range(n):
        order = np.asarray(sample(9, rng=rng, perm_size=3))
        assert np.array_equal(np.sort(order), np.arange(9)), \
            f"sample_factorization_order(9, perm_size=3) is not a permutation of 0..8: {order}"
        blocks = order.reshape(3, 3)
        # blocks keep their order, and every block uses the same offsets
        assert np.array_equal(blocks // 3, np.repeat(np.arange(3)[:, None], 3, axis=1)), \
            f"perm_size=3: the blocks 0-2, 3-5, 6-8 must keep their order, permuted only inside; got {order}"
        assert np.array_equal(blocks % 3, np.tile(blocks[0] % 3, (3, 1))), \
            f"perm_size=3: every block must use the same offset permutation (XLNet's _local_perm); got {order}"
        seen[tuple(blocks[0].tolist())] += 1
    assert len(seen) == 6, f"perm_size=3: only {len(seen)} of the 6 in-block permutations came out in {n} draws"
    sd = math.sqrt(n * (1 / 6) * (5 / 6))
    assert all(abs(c - n / 6) < 4.5 * sd for c in seen.values()), \
        f"perm_size=3: the in-block permutations are not equally likely: {dict(seen)}"
    with pytest.raises(ValueError):
        sample(10, rng=rng, perm_size=3)


# -- partial_prediction_targets --------------------------------------------------------------------

@pytest.mark.task8_1
@pytest.mark.points(2)
def test_partial_prediction_predicts_about_one_in_K(impl):
    targets = impl(MOD).partial_prediction_targets
    rng = np.random.default_rng(3)
    for T, K in [(512, 6), (60, 6), (60, 3), (60, 2), (60, 1), (24, 4), (7, 6), (100, 7.5)]:
        order = rng.permutation(T)
        is_target = np.asarray(targets(order, K=K))
        assert is_target.shape == (T,) and is_target.dtype == bool, \
            f"partial_prediction_targets(T={T}) should be a ({T},) bool mask, got {is_target.shape} {is_target.dtype}"
        assert is_target.sum() == max(1, round(T / K)), \
            f"T={T}, K={K}: expected max(1, round(T / K)) = {max(1, round(T / K))} targets, got {is_target.sum()}"
        # the targets are the tail of the order
        in_order = is_target[order]
        n = int(in_order.sum())
        assert in_order[T - n:].all() and not in_order[:T - n].any(), \
            (f"T={T}, K={K}: the targets must be the last {n} positions of the factorisation order "
             "(order[-n:]), not the last positions of the sequence")
    got = targets(np.arange(512), K=6).sum()
    assert got == 85, f"T=512, K=6 must give XLNet's num_predict = 85 targets, got {got}"


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_partial_prediction_only_among_candidates(impl):
    targets = impl(MOD).partial_prediction_targets
    rng = np.random.default_rng(4)
    for _ in range(50):
        T = 30
        order = rng.permutation(T)
        candidates = rng.random(T) < 0.7
        is_target = np.asarray(targets(order, K=3, candidates=candidates))
        N = int(candidates.sum())
        assert not (is_target & ~candidates).any(), "partial_prediction_targets chose a target outside `candidates`"
        want = max(1, round(N / 3)) if N else 0
        assert is_target.sum() == want, \
            (f"{N} candidates, K=3: expected max(1, round(N / K)) = {want} targets, got {is_target.sum()} "
             "(count candidates only)")
        # no candidate left out comes after a target in the order
        r = ranks(order)
        if is_target.any():
            first = r[is_target].min()
            assert not (candidates & ~is_target & (r > first)).any(), \
                ("a candidate that is not a target comes after a target in the order: the targets are the "
                 "last candidates")


# -- permutation_mask ------------------------------------------------------------------------------

@pytest.mark.task8_1
@pytest.mark.points(2)
def test_query_stream_hides_own_token_content_stream_shows_it(impl):
    perm_mask_fn = impl(MOD).permutation_mask
    order = np.array([3, 0, 4, 1, 2, 5])
    is_target = np.array([False, True, False, False, True, True])
    perm_mask, content_mask = (np.asarray(m) for m in perm_mask_fn(order, is_target))
    assert perm_mask.shape == content_mask.shape == (6, 6), \
        f"T=6: both masks should be (6, 6), got {perm_mask.shape} and {content_mask.shape}"
    assert perm_mask.dtype == bool and content_mask.dtype == bool, \
        f"the masks should be bool (True = may NOT attend), got {perm_mask.dtype} and {content_mask.dtype}"
    assert np.array_equal(np.diag(perm_mask), is_target), \
        (f"the query stream's diagonal should be True exactly at the targets {is_target.astype(int)} (a target may "
         f"not see its own token), got {np.diag(perm_mask).astype(int)}")
    assert not np.diag(content_mask).any(), \
        "content_mask has True on the diagonal: in the content stream every token sees itself"
    off = ~np.eye(6, dtype=bool)
    assert np.array_equal(perm_mask[off], content_mask[off]), \
        "content_mask must equal perm_mask off the diagonal (only the diagonal differs)"


@pytest.mark.task8_1
@pytest.mark.points(2)
def test_mask_rows_are_the_ones_who_look(impl):
    """Order 0,1,…,5 with targets 4 and 5: 5 may see 4, 4 may not see 5 (not transposed)."""
    perm_mask_fn = impl(MOD).permutation_mask
    is_target = np.array([False, False, False, False, True, True])
    perm_mask, _ = (np.asarray(m) for m in perm_mask_fn(np.arange(6), is_target))
    expected = np.zeros((6, 6), dtype=bool)
    expected[:4, 4:] = True  # the context sees no target
    expected[4, 4] = expected[4, 5] = expected[5, 5] = True
    assert perm_mask.shape == (6, 6), f"perm_mask should be (6, 6), got {perm_mask.shape}"
    if np.array_equal(perm_mask, expected.T):
        pytest.fail("perm_mask is transposed: row i is the position that looks and column j the one looked at; "
                    "yours lets target 4 see the later target 5 and hides the context from the targets")
    assert np.array_equal(perm_mask, expected), \
        (f"order 0..5, targets 4 and 5: expected perm_mask (1 = may not attend)\n{expected.astype(int)}\n"
         f"got\n{perm_mask.astype(int)}")


@pytest.mark.task8_1
@pytest.mark.points(3)
@SETTINGS
@given(case=orders_and_roles())
def test_targets_see_exactly_the_context_and_earlier_targets(impl, case):
    order, is_target, is_functional = case
    perm_mask, content_mask = (np.asarray(m) for m in
                               impl(MOD).permutation_mask(order, is_target,
                                                          is_functional=is_functional))
    r = ranks(order)
    is_context = ~is_target & ~is_functional
    for i in np.flatnonzero(is_target):
        # sees all context; sees a target / functional token iff it comes earlier in the order
        assert not perm_mask[i, is_context].any(), \
            (f"order {order.tolist()}: target {i} may not see some context position: every target sees all context "
             "(a transposed mask hides the context from the targets: row = the one who looks)")
        ordered = ~is_context
        if np.array_equal(perm_mask[i, ordered], r[ordered] > r[i]):
            pytest.fail(f"order {order.tolist()}: target {i} may see its own token in the query stream "
                        "(perm_mask[i, i] must be True for a target): compare ranks with <=, not <")
        assert np.array_equal(perm_mask[i, ordered], r[ordered] >= r[i]), \
            (f"order {order.tolist()}, targets {np.flatnonzero(is_target).tolist()}, functional "
             f"{np.flatnonzero(is_functional).tolist()}: target {i} must see exactly the non-context tokens earlier "
             "in the order (is the mask transposed? row = the one who looks)")


@pytest.mark.task8_1
@pytest.mark.points(2)
@SETTINGS
@given(case=orders_and_roles())
def test_context_is_visible_to_all_and_sees_no_target(impl, case):
    order, is_target, is_functional = case
    T = order.size
    perm_mask, content_mask = (np.asarray(m) for m in
                               impl(MOD).permutation_mask(order, is_target,
                                                          is_functional=is_functional))
    r = ranks(order)
    is_context = ~is_target & ~is_functional
    case_text = (f"order {order.tolist()}, targets {np.flatnonzero(is_target).tolist()}, functional "
                 f"{np.flatnonzero(is_functional).tolist()}")
    assert not perm_mask[:, is_context].any(), \
        (f"{case_text}: some position may not see a context position — everyone sees the plain context "
         "(is the mask transposed? row = the one who looks)")
    assert perm_mask[np.ix_(is_context, is_target)].all(), \
        (f"{case_text}: a context position may see a target — the context must see no target (is the mask "
         "transposed? row = the one who looks)")
    for i in np.flatnonzero(is_functional):  # functional tokens see only earlier targets
        assert np.array_equal(perm_mask[i, is_target], r[is_target] > r[i]), \
            f"{case_text}: functional position {i} must see exactly the targets earlier in the order"
    assert np.array_equal(content_mask, perm_mask & ~np.eye(T, dtype=bool)), \
        f"{case_text}: content_mask must be perm_mask with the diagonal set to False"


# -- sample_plm_spans ------------------------------------------------------------------------------

def run_lengths(mask):
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return edges[1::2] - edges[::2]


class _LowestDraws:
    """A stand-in rng whose ``integers(low, high)`` always returns ``low``, counting the calls."""

    def __init__(self):
        self.calls = 0
        self._rng = np.random.default_rng(0)

    def integers(self, low, high=None, size=None, **kwargs):
        self.calls += 1
        low = 0 if high is None else low
        return low if size is None else np.full(size, low)

    def __getattr__(self, name):  # anything else: a real generator
        return getattr(self._rng, name)


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_plm_spans_walk_stops_at_the_end(impl):
    """Every span is 1 and every offset 0, so the windows (context 6) start at cur = 0 and 6 for T = 12:
    two spans, two draws each. A loop ``while cur <= T`` draws a third span at cur = T."""
    sample = impl(MOD).sample_plm_spans
    rng = _LowestDraws()
    mask = np.asarray(sample(12, rng=rng))
    assert mask.shape == (12,), f"sample_plm_spans(12) should return a (12,) mask, got {mask.shape}"
    assert np.flatnonzero(mask).tolist() == [0, 6], \
        (f"with every span 1 and offset 0 the targets of T=12 should be positions [0, 6] (windows of "
         f"int(1 / (1/6)) = 6), got {np.flatnonzero(mask).tolist()}")
    assert rng.calls == 4, \
        (f"sample_plm_spans(12) with windows of 6 should draw 2 spans (cur = 0, 6), i.e. 4 random numbers; it drew "
         f"{rng.calls}" + (": the walk went on at cur = T — loop while cur < T, not cur <= T" if rng.calls > 4 else ""))


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_plm_spans_rate_is_plm_probability(impl):
    sample = impl(MOD).sample_plm_spans
    rng = np.random.default_rng(5)
    rates = [np.asarray(sample(120, rng=rng)).mean() for _ in range(2000)]
    assert abs(np.mean(rates) - 1 / 6) < 0.003, \
        (f"sample_plm_spans(120): the mean target rate should be plm_probability = 1/6 ≈ 0.1667, got "
         f"{np.mean(rates):.4f} (context = int(span / plm_probability), one span per context window)")
    half = [np.asarray(sample(120, rng=rng, plm_probability=0.5, max_span_length=2)).mean()
            for _ in range(500)]
    assert abs(np.mean(half) - 0.5) < 0.02, \
        f"plm_probability=0.5, max_span_length=2: the mean target rate should be 0.5, got {np.mean(half):.4f}"


@pytest.mark.task8_1
@pytest.mark.points(2)
def test_plm_span_lengths_are_1_to_max_span_length(impl):
    """Spans ~ U{1..5}: one span per window, so a run of 6 needs two spans side by side (rare)."""
    sample = impl(MOD).sample_plm_spans
    rng = np.random.default_rng(6)
    runs = np.concatenate([run_lengths(np.asarray(sample(240, rng=rng))) for _ in range(1000)])
    assert runs.max() <= 10, f"a run of {runs.max()} targets: two spans of at most 5 can make at most 10"
    counts = np.bincount(runs, minlength=11)
    assert counts[1:6].min() > 0.1 * runs.size, \
        f"run lengths 1..5 should each be common (span ~ U{{1..5}}), counts of 1..5: {counts[1:6].tolist()}"
    assert counts[6] < 0.03 * runs.size, \
        (f"{counts[6]} of {runs.size} runs have length 6: spans are U{{1..5}} — rng.integers(1, max_span_length + 1) "
         "(the high end is exclusive)")


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_plm_spans_odd_length_raises(impl):
    sample = impl(MOD).sample_plm_spans
    rng = np.random.default_rng(7)
    assert np.asarray(sample(8, rng=rng)).shape == (8,), "sample_plm_spans(8) should return an (8,) mask"
    with pytest.raises(ValueError):
        sample(9, rng=rng)
