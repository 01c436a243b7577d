"""Graded tests of Task 6.1 (masking half): ``mask_plan``, RoBERTa's choice of what to mask.

``apply_mask_plan`` applies the plan to tokens (test_task06_masking.py); the library's ``roberta_mask``
makes it over positions and ``roberta_whole_word_mask`` over words. The count, the rates and the split
are graded here only. Rates are checked over many draws (a binomial tolerance of 5 standard deviations).
"""
import numpy as np
import pytest

MOD = "task06_roberta.masking"


def _within(hits, n, p, what):
    sd = np.sqrt(p * (1 - p) / n)
    assert abs(hits / n - p) < 5 * sd + 1e-12, (
        f"{what}: rate {hits / n:.4f} over {n} draws, expected {p:.4f} ± {5 * sd:.4f}")


@pytest.mark.task6_1
@pytest.mark.points(3)
def test_mask_plan_count_is_stochastically_rounded(impl):
    mask_plan = impl(MOD).mask_plan
    rng = np.random.default_rng(0)
    n, prob = 23, 0.15                                   # prob·n = 3.45
    counts = np.array([mask_plan(n, rng=rng, prob=prob)[0].sum() for _ in range(4000)])
    assert set(np.unique(counts)) <= {3, 4}, (
        f"counts {sorted(set(counts.tolist()))}: with prob·n = 3.45 every count must be 3 or 4 "
        "(int(prob·n + U), U ~ Uniform[0, 1)); repeated positions (replace=True) give fewer")
    assert abs(counts.mean() - prob * n) < 0.05, (
        f"mean count {counts.mean():.3f}, expected prob·n = {prob * n:.3f}: plain int() or round() "
        "instead of int(prob·n + rng.random()) biases it")


@pytest.mark.task6_1
@pytest.mark.points(3)
def test_mask_plan_every_unit_at_rate_prob(impl):
    mask_plan = impl(MOD).mask_plan
    rng = np.random.default_rng(1)
    n, draws = 10, 3000
    hits = np.zeros(n)
    for _ in range(draws):
        masked, _, _ = mask_plan(n, rng=rng, prob=0.3)
        assert masked.shape == (n,) and masked.dtype == bool, (
            f"masked has shape {masked.shape} and dtype {masked.dtype}: expected ({n},) bools")
        hits += masked
    for t in range(n):
        _within(hits[t], draws, 0.3, f"unit {t} masked" + (" (the first unit can be masked too)" if t == 0 else ""))


@pytest.mark.task6_1
@pytest.mark.points(3)
def test_mask_plan_80_10_10_split_and_nesting(impl):
    mask_plan = impl(MOD).mask_plan
    rng = np.random.default_rng(2)
    n_mask = n_rand = n_keep = total = 0
    for _ in range(400):
        masked, to_mask, to_random = mask_plan(50, rng=rng, prob=0.5, leave_unmasked_prob=0.1, random_token_prob=0.1)
        assert not (to_mask & ~masked).any() and not (to_random & ~masked).any(), (
            "to_mask and to_random must lie inside masked: an unmasked unit is never replaced")
        assert not (to_mask & to_random).any(), "a unit is both <mask> and random: the two are disjoint"
        total += masked.sum()
        n_mask += to_mask.sum()
        n_rand += to_random.sum()
        n_keep += (masked & ~to_mask & ~to_random).sum()
    _within(n_mask, total, 0.8, "<mask> share of the masked units")
    _within(n_rand, total, 0.1, "random-token share of the masked units")
    _within(n_keep, total, 0.1, "unchanged share of the masked units (leave_unmasked_prob / (sum) of the 20%)")


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_mask_plan_draws_in_fairseqs_order(impl):
    """The kit gives the same numbers on your code as on the reference only if the draws match."""
    mask_plan = impl(MOD).mask_plan

    class Recorder:
        """A Generator that notes each call (method and sizes) before drawing."""
        def __init__(self):
            self.rng, self.calls = np.random.default_rng(5), []

        def __getattr__(self, name):
            method = getattr(self.rng, name)

            def call(*args, **kwargs):
                self.calls.append((name, args[:1] if name == "choice" else args, kwargs.get("replace", None)))
                return method(*args, **kwargs)
            return call

    rec = Recorder()
    masked, _, _ = mask_plan(17, rng=rec, prob=0.4)
    k = int(masked.sum())
    want = [("random", (), None), ("choice", (17,), False), ("random", (17,), None), ("random", (17,), None)]
    assert rec.calls == want, (
        f"the draws were {rec.calls}, expected {want} (choosing k = {k}): one rng.random() for the count, "
        "rng.choice(n, k, replace=False), then rng.random(n) twice — in this order")
