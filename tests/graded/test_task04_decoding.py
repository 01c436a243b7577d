"""Graded tests of Task 4.2: greedy, temperature, top-k (ties kept), top-p (Hugging Face's rule: the
crossing token is kept; SPEC §8) and sampling in the order temperature → top-k → top-p → sample.

Sampling frequencies are measured over 20,000 draws with a fixed seed and must lie within 4
standard errors of the expected probabilities.
"""
import numpy as np
import pytest

from autograd.errors import ConfigError

MOD = "task04_gpt.decoding"
N_DRAWS = 20_000


def _softmax(z):
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _kept(filtered):
    return np.isfinite(np.asarray(filtered))


def _frequencies(sample_next, logits, **kw):
    """Counts of each token over N_DRAWS rows drawn in one call (one independent draw per row)."""
    rng = np.random.default_rng(kw.pop("seed", 0))
    rows = np.tile(np.asarray(logits, dtype=np.float64), (N_DRAWS, 1))
    ids = np.asarray(sample_next(rows, rng=rng, **kw))
    assert ids.shape == (N_DRAWS,)
    return np.bincount(ids, minlength=rows.shape[1])


def _assert_distribution(counts, probs, what):
    n = counts.sum()
    freq = counts / n
    se = np.sqrt(np.maximum(probs * (1 - probs), 1e-12) / n)
    bad = np.abs(freq - probs) > 4 * se
    assert not bad.any(), f"{what}: frequencies {np.round(freq, 4)} vs expected {np.round(probs, 4)}"


@pytest.mark.task4_2
@pytest.mark.points(1)
def test_greedy_and_temperature(impl):
    m = impl(MOD)
    logits = np.array([[0.1, 2.0, -1.0, 1.9], [3.0, 0.0, 0.0, -2.0]])
    assert np.asarray(m.greedy(logits)).tolist() == [1, 0]
    assert int(m.greedy(logits[0])) == 1
    keep = logits.copy()
    np.testing.assert_allclose(m.apply_temperature(logits, 0.5), logits / 0.5)
    np.testing.assert_allclose(m.apply_temperature(logits, 1.0), logits)
    np.testing.assert_array_equal(logits, keep)
    for bad in (0.0, -1.0):
        with pytest.raises(ConfigError):
            m.apply_temperature(logits, bad)


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_top_k_keeps_ties_and_clips_k(impl):
    top_k_filter = impl(MOD).top_k_filter
    logits = np.array([1.0, 3.0, 3.0, 2.0, 0.0])
    keep = logits.copy()
    assert _kept(top_k_filter(logits, 1)).tolist() == [False, True, True, False, False], \
        "both tokens tied at the largest value must survive top-1"
    assert _kept(top_k_filter(logits, 3)).tolist() == [False, True, True, True, False]
    out = np.asarray(top_k_filter(logits, 4))
    assert _kept(out).tolist() == [True, True, True, True, False]
    np.testing.assert_array_equal(out[_kept(out)], logits[_kept(out)])
    assert np.all(out[~_kept(out)] == -np.inf)
    assert _kept(top_k_filter(logits, 50)).all(), "k larger than the vocabulary keeps everything"
    assert _kept(top_k_filter(logits, None)).all() and _kept(top_k_filter(logits, 0)).all()
    rows = np.array([[0.0, 1.0, 2.0, 3.0], [5.0, 4.0, 4.0, -1.0]])
    assert _kept(top_k_filter(rows, 2)).tolist() == [[False, False, True, True], [True, True, True, False]]
    np.testing.assert_array_equal(logits, keep)


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_top_p_keeps_the_crossing_token(impl):
    top_p_filter = impl(MOD).top_p_filter
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    logits = np.log(probs)
    keep = logits.copy()
    assert _kept(top_p_filter(logits, 0.7)).tolist() == [True, True, False, False], \
        "SPEC §8: [.5, .3, .15, .05] with p=0.7 keeps 2 tokens (.5 alone is < 0.7; .3 crosses it)"
    assert _kept(top_p_filter(logits, 0.4)).tolist() == [True, False, False, False]
    assert _kept(top_p_filter(logits, 0.9)).tolist() == [True, True, True, False]
    assert _kept(top_p_filter(logits, 1.0)).all()
    assert _kept(top_p_filter(logits, 0.4, min_tokens_to_keep=3)).tolist() == [True, True, True, False]
    np.testing.assert_array_equal(logits, keep)
    # the rule works on sorted probabilities, whatever the vocabulary order; rows are independent
    order = np.array([2, 0, 3, 1])
    rows = np.stack([logits[order], np.log(np.array([0.25, 0.25, 0.3, 0.2]))])
    got = _kept(top_p_filter(rows, 0.7))
    assert got.tolist() == [[False, True, False, True], [True, True, True, False]]
    out = np.asarray(top_p_filter(rows, 0.7))
    np.testing.assert_array_equal(out[got], rows[got])


@pytest.mark.task4_2
@pytest.mark.points(1)
def test_sampling_follows_softmax_of_logits_over_temperature(impl):
    sample_next = impl(MOD).sample_next
    logits = np.array([1.0, 0.0, 2.0, -1.0, 0.5])
    for T in (1.0, 0.5, 2.0):
        counts = _frequencies(sample_next, logits, temperature=T, seed=int(T * 10))
        _assert_distribution(counts, _softmax(logits / T), f"sampling at temperature {T}")


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_sampling_with_top_k_and_top_p_renormalises_the_kept_set(impl):
    sample_next = impl(MOD).sample_next
    logits = np.array([1.0, 3.0, 3.0, 2.0, 0.0, -1.0])
    counts = _frequencies(sample_next, logits, top_k=3, seed=1)
    assert counts[[0, 4, 5]].sum() == 0, "top-k sampled a token outside the k kept"
    p = np.where([False, True, True, True, False, False], _softmax(logits), 0.0)
    _assert_distribution(counts, p / p.sum(), "top-k sampling")

    probs = np.array([0.1, 0.45, 0.05, 0.25, 0.15])
    counts = _frequencies(sample_next, np.log(probs), top_p=0.6, seed=2)
    assert counts[[0, 2, 4]].sum() == 0, "top-p sampled a token outside the nucleus"
    kept = np.array([0, 0.45, 0, 0.25, 0])
    _assert_distribution(counts, kept / kept.sum(), "top-p sampling")


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_temperature_is_applied_before_top_p(impl):
    sample_next = impl(MOD).sample_next
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    # T = 3 flattens the distribution to ≈ [.336, .283, .225, .156]: p = 0.7 then needs 3 tokens
    counts = _frequencies(sample_next, logits, temperature=3.0, top_p=0.7, seed=3)
    q = _softmax(logits / 3.0)
    assert counts[3] == 0 and counts[2] > 0, \
        "temperature must come before top-p (filtering first would keep only 2 tokens)"
    kept = np.array([q[0], q[1], q[2], 0.0])
    _assert_distribution(counts, kept / kept.sum(), "temperature 3, then top-p 0.7")
    # T = 0.4 sharpens it to ≈ [.751, .209, .037, .002]: p = 0.7 then keeps token 0 alone
    counts = _frequencies(sample_next, logits, temperature=0.4, top_p=0.7, seed=4)
    assert counts[0] == N_DRAWS, "temperature 0.4 then top-p 0.7 keeps only the most likely token"
