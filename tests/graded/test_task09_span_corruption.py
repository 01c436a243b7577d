"""Graded tests of Task 9.1: T5's noise mask, the sentinels of span corruption, random_spans_helper."""
from __future__ import annotations

import math

import numpy as np
import pytest

from autograd.errors import MiniLMError
from minilm.corruption import reconstruct, t5_sentinel_ids

MOD = "task09_seq2seq.span_corruption"
V, EOS = 1000, 1
SENTINELS = t5_sentinel_ids(V, 100)  # [999, 998, ...]: <extra_id_0> is the TOP id


def runs(mask):
    """(start, length) of each maximal run of True."""
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2], edges[1::2] - edges[::2]))


def expected_counts(length, density, mu):
    L = max(length, 2)
    n = min(max(round(L * density), 1), L - 1)
    k = min(max(1, round(n / mu)), n, L - n)
    return n, k


def expected_format(ids, noise):
    """T5's inputs and targets for a known noise mask (written independently of the slot)."""
    inputs, targets, j, t = [], [], 0, 0
    for pos, tok in enumerate(ids):
        new_run = pos == 0 or noise[pos] != noise[pos - 1]
        if noise[pos]:
            if new_run:
                inputs.append(SENTINELS[j])
                j += 1
            targets.append(tok)
        else:
            if new_run:
                targets.append(SENTINELS[t])
                t += 1
            inputs.append(tok)
    return np.array(inputs + [EOS]), np.array(targets + [EOS])


# -- random_spans_noise_mask -----------------------------------------------------------------------

@pytest.mark.task9_1
@pytest.mark.points(2)
def test_noise_mask_counts(impl):
    mask_fn = impl(MOD).random_spans_noise_mask
    rng = np.random.default_rng(0)
    for density, mu in [(0.15, 3.0), (0.3, 2.0), (0.5, 1.0), (0.15, 8.0)]:
        for length in range(2, 160, 3):
            mask = np.asarray(mask_fn(length, rng=rng, noise_density=density,
                                      mean_noise_span_length=mu))
            assert mask.shape == (length,) and mask.dtype == bool, \
                f"random_spans_noise_mask({length}) should be a ({length},) bool mask, got {mask.dtype} {mask.shape}"
            n, k = expected_counts(length, density, mu)
            assert mask.sum() == n, \
                (f"random_spans_noise_mask({length}, noise_density={density}, mean_noise_span_length={mu}): "
                 f"expected round({length}·{density}) = {n} noise tokens, got {mask.sum()}")
            assert len(runs(mask)) == k, \
                (f"random_spans_noise_mask({length}, noise_density={density}, mean_noise_span_length={mu}): "
                 f"expected {k} noise spans (round(noise / mean span), at least 1), got {len(runs(mask))}")


@pytest.mark.task9_1
@pytest.mark.points(2)
def test_noise_mask_first_token_clean_last_token_noise(impl):
    mask_fn = impl(MOD).random_spans_noise_mask
    rng = np.random.default_rng(1)
    for _ in range(300):
        length = int(rng.integers(2, 80))
        mask = np.asarray(mask_fn(length, rng=rng))
        assert not mask[0] and mask[-1], \
            f"random_spans_noise_mask({length}): the first token must be clean and the last noise, got {mask.astype(int)}"


@pytest.mark.task9_1
@pytest.mark.points(1)
def test_noise_mask_edge_cases(impl):
    mask_fn = impl(MOD).random_spans_noise_mask
    rng = np.random.default_rng(2)
    assert np.array_equal(mask_fn(1, rng=rng), [False]), \
        "random_spans_noise_mask(1) should be [False]: build it for length 2, then cut to 1"  # built for 2, cut to 1: no noise
    assert np.array_equal(mask_fn(2, rng=rng), [False, True]), \
        "random_spans_noise_mask(2) should be [False, True] (the first token clean, the last noise)"
    assert not np.asarray(mask_fn(50, rng=rng, noise_density=0.0)).any(), "noise_density=0 must give no noise at all"


@pytest.mark.task9_1
@pytest.mark.points(2)
def test_noise_span_lengths_are_a_uniform_random_split(impl):
    """L=100: 15 noise tokens in 5 spans, every split of 15 into 5 equally likely, so a span has
    length s with probability C(15-s-1, 3) / C(14, 4). Same for 85 clean tokens in 5 spans."""
    mask_fn = impl(MOD).random_spans_noise_mask
    rng = np.random.default_rng(3)
    noise_lengths, clean_lengths = [], []
    for _ in range(2000):
        mask = np.asarray(mask_fn(100, rng=rng))
        noise_lengths += [n for _, n in runs(mask)]
        clean_lengths += [n for _, n in runs(~mask)]
    for lengths, n in ((noise_lengths, 15), (clean_lengths, 85)):
        lengths = np.array(lengths)
        assert lengths.size == 10_000, \
            (f"L=100 gives 5 spans of each kind per draw: expected 10,000 {'noise' if n == 15 else 'clean'} "
             f"spans over 2000 draws, got {lengths.size}")
        pmf = np.array([math.comb(n - s - 1, 3) / math.comb(n - 1, 4) for s in range(1, n - 3)])
        counts = np.bincount(lengths, minlength=n - 3)[1:]
        # chi-square over bins with expected count >= 20, the tail pooled
        expected = lengths.size * pmf
        keep = expected >= 20
        obs = np.append(counts[keep], counts[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum())
        chi2 = ((obs - exp) ** 2 / exp).sum()
        df = len(obs) - 1
        assert chi2 < df + 6 * math.sqrt(2 * df) + 10, \
            (f"{n} tokens in 5 spans: the span lengths are not a uniform random split (chi2 = {chi2:.1f} on {df} "
             "degrees of freedom): split with a random permutation of the boundaries")  # above the 99.99% point
        assert abs(lengths.mean() - n / 5) < 0.05 * n / 5, \
            f"{n} tokens in 5 spans: the mean span length should be {n / 5}, got {lengths.mean():.2f}"


# -- spans_to_sentinels ----------------------------------------------------------------------------

def to_sentinels(impl, ids, noise, **kw):
    kw.setdefault("sentinel_ids", SENTINELS)
    inputs, targets = impl(MOD).spans_to_sentinels(np.asarray(ids), np.asarray(noise, dtype=bool), eos_id=EOS,
                                                   **kw)
    return np.asarray(inputs), np.asarray(targets)


def t5_like_mask(length, rng):
    """A random noise mask that starts clean, as T5's always does (made here, not by the slot)."""
    noise = rng.random(length) < rng.uniform(0.05, 0.6)
    noise[0] = False
    return noise


def mask_from_runs(clean, noise):
    """clean_0 noise_0 clean_1 noise_1 ...: run lengths to a bool mask."""
    parts = [np.zeros(c, dtype=bool) if i % 2 == 0 else np.ones(c, dtype=bool)
             for i, c in enumerate(x for pair in zip(clean, noise) for x in pair)]
    return np.concatenate(parts)


@pytest.mark.task9_1
@pytest.mark.points(3)
def test_spans_to_sentinels_format(impl):
    """Exactly T5's format, sentinels counting down from <extra_id_0> = sentinel_ids[0]."""
    rng = np.random.default_rng(4)
    for _ in range(300):
        length = int(rng.integers(1, 60))
        ids = rng.permutation(np.arange(10, 10 + length))
        noise = t5_like_mask(length, rng)
        inputs, targets = to_sentinels(impl, ids, noise)
        want_inputs, want_targets = expected_format(ids, noise)
        np.testing.assert_array_equal(inputs, want_inputs,
            err_msg=(f"noise mask {noise.astype(int).tolist()}: inputs should be the clean tokens with each noise "
                     "span replaced by ONE sentinel (sentinel_ids[0], [1], ... in order), then EOS"))
        np.testing.assert_array_equal(targets, want_targets,
            err_msg=(f"noise mask {noise.astype(int).tolist()}: targets should be each sentinel followed by the "
                     "span it replaced, then EOS"))


@pytest.mark.task9_1
@pytest.mark.points(1)
def test_six_tokens_in_two_noise_spans(impl):
    """``a b c d e f`` with noise ``{c d}, {f}``: both sides hold <extra_id_0> then <extra_id_1>
    (999, 998) and end with EOS — the example of the module docstring."""
    ids = np.array([11, 12, 13, 14, 15, 16])
    inputs, targets = to_sentinels(impl, ids, [0, 0, 1, 1, 0, 1])
    assert inputs.tolist() == [11, 12, 999, 15, 998, EOS], \
        f"inputs should be a b <extra_id_0> e <extra_id_1> EOS = [11, 12, 999, 15, 998, {EOS}], got {inputs.tolist()}"
    assert targets.tolist() == [999, 13, 14, 998, 16, EOS], \
        f"targets should be <extra_id_0> c d <extra_id_1> f EOS = [999, 13, 14, 998, 16, {EOS}], got {targets.tolist()}"


@pytest.mark.task9_1
@pytest.mark.points(2)
def test_inputs_and_targets_give_back_the_text(impl):
    rng = np.random.default_rng(6)
    for _ in range(200):
        ids = rng.integers(2, 900, size=int(rng.integers(1, 120)))
        inputs, targets = to_sentinels(impl, ids, t5_like_mask(ids.size, rng))
        np.testing.assert_array_equal(reconstruct(inputs, targets, SENTINELS, EOS), ids,
            err_msg="putting each target span back in place of its sentinel must give the original text")


@pytest.mark.task9_1
@pytest.mark.points(2)
def test_one_sentinel_per_span_on_both_sides(impl):
    """len(inputs) = clean + k + 1 and len(targets) = noise + k + 1 for k noise spans: a span is merged
    into ONE sentinel, never one sentinel per token; a mask with no noise gives targets [<extra_id_0>, EOS]."""
    rng = np.random.default_rng(7)
    for _ in range(500):
        length = int(rng.integers(2, 200))
        noise = t5_like_mask(length, rng)
        inputs, targets = to_sentinels(impl, np.arange(10, 10 + length), noise)
        k, n = len(runs(noise)), int(noise.sum())
        got = int(np.isin(inputs, SENTINELS).sum()), int(np.isin(targets, SENTINELS).sum())
        assert got == (k, len(runs(~noise))), \
            (f"{k} noise spans and {len(runs(~noise))} clean spans: the inputs should hold one sentinel per noise "
             f"span and the targets one per clean span, got {got[0]} and {got[1]}")
        assert len(inputs) == length - n + k + 1, \
            f"inputs of {len(inputs)} tokens, expected clean {length - n} + spans {k} + EOS"
    inputs, targets = to_sentinels(impl, np.arange(10, 30), np.zeros(20, dtype=bool))
    assert inputs.tolist() == list(range(10, 30)) + [EOS] and targets.tolist() == [999, EOS], \
        f"no noise: inputs should be the text and EOS, targets [999, EOS]; got {inputs.tolist()}, {targets.tolist()}"


@pytest.mark.task9_1
@pytest.mark.points(1)
def test_lengths_and_short_inputs(impl):
    noise = mask_from_runs([17] * 27 + [24], [3] * 27 + [4])           # 568 tokens: 85 noise in 28 spans
    inputs, targets = to_sentinels(impl, np.arange(10, 10 + 568), noise)
    assert (len(inputs), len(targets)) == (512, 114), \
        (f"568 tokens, 85 of them noise in 28 spans, should give T5's 512 inputs and 114 targets, got "
         f"({len(inputs)}, {len(targets)})")
    inputs, targets = to_sentinels(impl, [42], [False])
    assert list(inputs) == [42, EOS] and list(targets) == [999, EOS], \
        f"one clean token [42]: inputs [42, EOS] and targets [999, EOS]; got {list(inputs)}, {list(targets)}"
    inputs, targets = to_sentinels(impl, [42, 43], [False, True])
    assert list(inputs) == [42, 999, EOS] and list(targets) == [999, 43, EOS], \
        (f"[42, 43] with the last token noise: inputs [42, 999, EOS] and targets [999, 43, EOS]; got {list(inputs)}, "
         f"{list(targets)}")
    with pytest.raises(MiniLMError):
        to_sentinels(impl, np.arange(10, 20), [0, 1, 0, 1, 0, 1, 0, 0, 0, 0], sentinel_ids=SENTINELS[:2])


# -- random_spans_helper ---------------------------------------------------------------------------

@pytest.mark.task9_1
@pytest.mark.points(2)
def test_random_spans_helper_table(impl):
    helper = impl(MOD).random_spans_helper
    assert tuple(helper(512, 0.15, 3.0)) == (568, 114), \
        f"random_spans_helper(512, 0.15, 3.0) should be (568, 114) (T5's table), got {tuple(helper(512, 0.15, 3.0))}"
    assert tuple(helper(256, 0.15, 3.0)) == (284, 58), \
        f"random_spans_helper(256, 0.15, 3.0) should be (284, 58), got {tuple(helper(256, 0.15, 3.0))}"
    assert tuple(helper(128, 0.15, 3.0)) == (141, 29), \
        f"random_spans_helper(128, 0.15, 3.0) should be (141, 29), got {tuple(helper(128, 0.15, 3.0))}"
    # round half to even: 30 raw tokens give round(4.5) = 4 noise tokens in 1 span
    assert tuple(helper(28, 0.15, 3.0)) == (30, 6), \
        ("random_spans_helper(28, 0.15, 3.0) should be (30, 6): 30 raw tokens give round(4.5) = 4 noise "
         f"tokens (round half to even), got {tuple(helper(28, 0.15, 3.0))}")
    assert tuple(helper(64, 0.15, 3.0)) == (70, 14), \
        f"random_spans_helper(64, 0.15, 3.0) should be (70, 14), got {tuple(helper(64, 0.15, 3.0))}"
