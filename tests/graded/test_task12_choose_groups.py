"""Graded tests of Task 12.2 (the walk): ``choose_groups``, BERT's budget-and-group walk.

``whole_word_mask`` and the library's ``bert_masked_lm_predictions`` both choose with it.
"""
import numpy as np
import pytest

MOD = "task12_beyond.wwm"


@pytest.mark.task12_2
@pytest.mark.points(2)
def test_choose_groups_budget_rounding_and_cap(impl):
    choose = impl(MOD).choose_groups
    singles = [[t] for t in range(1, 29)]
    for num_tokens, prob, cap, budget in ((30, 0.15, 20, 4), (50, 0.15, 20, 8), (30, 0.15, 3, 3), (3, 0.15, 20, 1)):
        got = choose(singles[:num_tokens - 2], num_tokens, rng=np.random.default_rng(0), prob=prob, max_predictions=cap)
        assert len(got) == budget, (
            f"{num_tokens} tokens, prob {prob}, max_predictions {cap}: chose {len(got)} positions, expected "
            f"budget = min(max_predictions, max(1, round(num_tokens·prob))) = {budget} (Python's round: half to even)")


@pytest.mark.task12_2
@pytest.mark.points(2)
def test_choose_groups_whole_groups_and_skips_what_does_not_fit(impl):
    choose = impl(MOD).choose_groups
    groups = [[1, 2, 3], [4], [5, 6], [7], [8, 9, 10], [11]]
    full = 0
    for seed in range(300):
        got = choose(groups, 30, rng=np.random.default_rng(seed), prob=0.15)   # budget 4
        assert len(got) == len(set(got)) and len(got) <= 4, f"chose {got}: at most 4 distinct positions"
        for g in groups:
            assert len(set(got) & set(g)) in (0, len(g)), (
                f"chose {got}: group {g} was cut, take a group whole or skip it")
        full += len(got) == 4
    assert full > 250, (
        f"only {full}/300 draws filled the budget of 4: a group that does not fit must be skipped "
        "(continue), not end the walk (break) — a later, shorter group may still fit")


@pytest.mark.task12_2
@pytest.mark.points(2)
def test_choose_groups_shuffles_anew_each_call(impl):
    choose = impl(MOD).choose_groups
    groups = [[t] for t in range(1, 11)]
    rng, hits = np.random.default_rng(7), np.zeros(11)
    for _ in range(2000):
        hits[choose(groups, 20, rng=rng, prob=0.15)] += 1                       # budget 3 of 10
    rate = hits[1:] / 2000
    assert np.all(np.abs(rate - 0.3) < 0.05), (
        f"per-position rates {np.round(rate, 3).tolist()}, expected 0.3 each: shuffle the groups with "
        "rng.permutation(len(groups)) on every call, and walk them in that order")


@pytest.mark.task12_2
@pytest.mark.points(1)
def test_choose_groups_order_and_draws(impl):
    choose = impl(MOD).choose_groups
    groups = [[1], [2, 3], [4], [5], [6, 7]]
    got = choose(groups, 40, rng=np.random.default_rng(11), prob=0.15)         # budget 6
    rng = np.random.default_rng(11)
    want = []
    for g in rng.permutation(len(groups)):
        if len(want) >= 6:
            break
        if len(want) + len(groups[g]) <= 6:
            want.extend(groups[g])
    assert list(got) == want, (
        f"chose {list(got)}, expected {want}: the positions in the order the walk takes them (not "
        "sorted), from one rng.permutation(len(groups))")
