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
SETTINGS = settings(deadline=None, max_examples=80,
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
        assert order.shape == (T,) and np.issubdtype(order.dtype, np.integer)
        assert np.array_equal(np.sort(order), np.arange(T))


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_every_order_equally_likely(impl):
    sample = impl(MOD).sample_factorization_order
    rng = np.random.default_rng(1)
    n = 6000
    counts = Counter(tuple(np.asarray(sample(3, rng=rng)).tolist()) for _ in range(n))
    assert len(counts) == 6
    sd = math.sqrt(n * (1 / 6) * (5 / 6))
    for c in counts.values():
        assert abs(c - n / 6) < 4.5 * sd


@pytest.mark.task8_1
@pytest.mark.points(2)
def test_local_permutation_shares_one_offset_permutation_across_blocks(impl):
    sample = impl(MOD).sample_factorization_order
    rng = np.random.default_rng(2)
    n, seen = 6000, Counter()
    for _ in range(n):
        order = np.asarray(sample(9, rng=rng, perm_size=3))
        assert np.array_equal(np.sort(order), np.arange(9))
        blocks = order.reshape(3, 3)
        # blocks keep their order, and every block uses the same offsets
        assert np.array_equal(blocks // 3, np.repeat(np.arange(3)[:, None], 3, axis=1))
        assert np.array_equal(blocks % 3, np.tile(blocks[0] % 3, (3, 1)))
        seen[tuple(blocks[0].tolist())] += 1
    assert len(seen) == 6
    sd = math.sqrt(n * (1 / 6) * (5 / 6))
    assert all(abs(c - n / 6) < 4.5 * sd for c in seen.values())
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
        assert is_target.shape == (T,) and is_target.dtype == bool
        assert is_target.sum() == max(1, round(T / K)), (T, K)
        # the targets are the tail of the order
        in_order = is_target[order]
        n = int(in_order.sum())
        assert in_order[T - n:].all() and not in_order[:T - n].any()
    assert targets(np.arange(512), K=6).sum() == 85  # XLNet's num_predict


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
        assert not (is_target & ~candidates).any()
        assert is_target.sum() == (max(1, round(N / 3)) if N else 0)
        # no candidate left out comes after a target in the order
        r = ranks(order)
        if is_target.any():
            first = r[is_target].min()
            assert not (candidates & ~is_target & (r > first)).any()


# -- permutation_mask ------------------------------------------------------------------------------

@pytest.mark.task8_1
@pytest.mark.points(2)
def test_query_stream_hides_own_token_content_stream_shows_it(impl):
    perm_mask_fn = impl(MOD).permutation_mask
    order = np.array([3, 0, 4, 1, 2, 5])
    is_target = np.array([False, True, False, False, True, True])
    perm_mask, content_mask = (np.asarray(m) for m in perm_mask_fn(order, is_target))
    assert perm_mask.shape == content_mask.shape == (6, 6)
    assert perm_mask.dtype == bool and content_mask.dtype == bool
    assert np.array_equal(np.diag(perm_mask), is_target)  # a target may not see itself
    assert not np.diag(content_mask).any()  # in the content stream every token sees itself
    off = ~np.eye(6, dtype=bool)
    assert np.array_equal(perm_mask[off], content_mask[off])


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
    assert np.array_equal(perm_mask, expected)


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
        assert not perm_mask[i, is_context].any()
        ordered = ~is_context
        assert np.array_equal(perm_mask[i, ordered], r[ordered] >= r[i])


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
    assert not perm_mask[:, is_context].any()  # everyone sees the plain context
    assert perm_mask[np.ix_(is_context, is_target)].all()  # a non-target never depends on a target
    for i in np.flatnonzero(is_functional):  # functional tokens see only earlier targets
        assert np.array_equal(perm_mask[i, is_target], r[is_target] > r[i])
    assert np.array_equal(content_mask, perm_mask & ~np.eye(T, dtype=bool))


# -- sample_plm_spans ------------------------------------------------------------------------------

def run_lengths(mask):
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return edges[1::2] - edges[::2]


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_plm_spans_rate_is_plm_probability(impl):
    sample = impl(MOD).sample_plm_spans
    rng = np.random.default_rng(5)
    rates = [np.asarray(sample(120, rng=rng)).mean() for _ in range(2000)]
    assert abs(np.mean(rates) - 1 / 6) < 0.003
    half = [np.asarray(sample(120, rng=rng, plm_probability=0.5, max_span_length=2)).mean()
            for _ in range(500)]
    assert abs(np.mean(half) - 0.5) < 0.02


@pytest.mark.task8_1
@pytest.mark.points(2)
def test_plm_span_lengths_are_1_to_max_span_length(impl):
    """Spans ~ U{1..5}: one span per window, so a run of 6 needs two spans side by side (rare)."""
    sample = impl(MOD).sample_plm_spans
    rng = np.random.default_rng(6)
    runs = np.concatenate([run_lengths(np.asarray(sample(240, rng=rng))) for _ in range(1000)])
    assert runs.max() <= 10
    counts = np.bincount(runs, minlength=11)
    assert counts[1:6].min() > 0.1 * runs.size  # every length 1..5 is common
    assert counts[6] < 0.03 * runs.size  # a span of 6 is not drawn


@pytest.mark.task8_1
@pytest.mark.points(1)
def test_plm_spans_odd_length_raises(impl):
    sample = impl(MOD).sample_plm_spans
    rng = np.random.default_rng(7)
    assert np.asarray(sample(8, rng=rng)).shape == (8,)
    with pytest.raises(ValueError):
        sample(9, rng=rng)
