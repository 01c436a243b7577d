"""Graded tests of Task 4.2: greedy, temperature, top-k (ties kept), top-p (Hugging Face's rule: the
crossing token is kept; ``TopPLogitsWarper``) and sampling in the order temperature → top-k → top-p → sample.

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
    assert ids.shape == (N_DRAWS,), \
        (f"sample_next on ({N_DRAWS}, {rows.shape[1]}) logits should return one id per row, shape ({N_DRAWS},), "
         f"got {ids.shape}")
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
    got = np.asarray(m.greedy(logits)).tolist()
    assert got == [1, 0], \
        f"greedy on two rows should pick the arg-max of each row, [1, 0], got {got} (argmax over axis -1)"
    assert int(m.greedy(logits[0])) == 1, "greedy on one (V,) row should return its arg-max, 1"
    keep = logits.copy()
    got = np.asarray(m.apply_temperature(logits, 0.5))
    np.testing.assert_array_equal(logits, keep, err_msg=("apply_temperature modified its input in place: "
                                                         "return logits / T"))
    if np.allclose(got, logits * 0.5):
        pytest.fail("apply_temperature(logits, 0.5) multiplied by T: the logits are divided by the temperature")
    np.testing.assert_allclose(got, logits / 0.5, err_msg="apply_temperature(logits, 0.5) should be logits / 0.5")
    np.testing.assert_allclose(m.apply_temperature(logits, 1.0), logits,
                               err_msg="apply_temperature(logits, 1.0) should leave the logits unchanged")
    np.testing.assert_array_equal(logits, keep, err_msg="apply_temperature modified its input in place")
    for bad in (0.0, -1.0):
        with pytest.raises(ConfigError):
            m.apply_temperature(logits, bad)


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_top_k_keeps_ties_and_clips_k(impl):
    top_k_filter = impl(MOD).top_k_filter
    logits = np.array([1.0, 3.0, 3.0, 2.0, 0.0])
    keep = logits.copy()
    # first, on its own: a filter that writes −inf into its input confuses every later check
    top_k_filter(logits, 1)
    np.testing.assert_array_equal(logits, keep, err_msg="top_k_filter modified its input in place (the caller's "
                                                        "logits now hold −inf): filter a copy, np.array(logits)")
    got = _kept(top_k_filter(logits, 1)).tolist()
    assert got == [False, True, True, False, False], \
        f"both tokens tied at the largest value must survive top-1: [1, 3, 3, 2, 0] keeps {got}, expected the two 3s"
    got = _kept(top_k_filter(logits, 3)).tolist()
    assert got == [False, True, True, True, False], \
        f"top-3 of [1, 3, 3, 2, 0] keeps every logit ≥ the 3rd largest (2): expected [F, T, T, T, F], got {got}"
    out = np.asarray(top_k_filter(logits, 4))
    assert _kept(out).tolist() == [True, True, True, True, False], \
        f"top-4 of [1, 3, 3, 2, 0] should drop only the 0, kept {_kept(out).tolist()}"
    np.testing.assert_array_equal(out[_kept(out)], logits[_kept(out)],
                                  err_msg="top_k_filter must leave the kept logits unchanged")
    assert np.all(out[~_kept(out)] == -np.inf), f"filtered logits must be −inf, got {out[~_kept(out)]}"
    assert _kept(top_k_filter(logits, 50)).all(), "k larger than the vocabulary keeps everything"
    assert _kept(top_k_filter(logits, None)).all() and _kept(top_k_filter(logits, 0)).all(), \
        "k = None or k = 0 means no filter: every logit must be kept"
    rows = np.array([[0.0, 1.0, 2.0, 3.0], [5.0, 4.0, 4.0, -1.0]])
    got = _kept(top_k_filter(rows, 2)).tolist()
    assert got == [[False, False, True, True], [True, True, True, False]], \
        (f"top-2 on two rows must use each row's own 2nd largest value (with [..., None]): expected "
         f"[[F, F, T, T], [T, T, T, F]], got {got}")
    np.testing.assert_array_equal(logits, keep, err_msg="top_k_filter modified its input in place")


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_top_p_keeps_the_crossing_token(impl):
    top_p_filter = impl(MOD).top_p_filter
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    logits = np.log(probs)
    keep = logits.copy()
    top_p_filter(logits, 0.7)
    np.testing.assert_array_equal(logits, keep, err_msg="top_p_filter modified its input in place: filter a copy")
    got = _kept(top_p_filter(logits, 0.7)).tolist()
    if got == [True, False, False, False]:
        pytest.fail("[.5, .3, .15, .05] with p=0.7 kept only .5: Hugging Face's rule keeps the token that crosses p "
                    "(remove the tokens whose ascending cumulative sum is ≤ 1 − p)")
    assert got == [True, True, False, False], \
        ("Hugging Face's rule: [.5, .3, .15, .05] with p=0.7 keeps 2 tokens (.5 alone is < 0.7; .3 crosses "
         f"it), got {got}")
    got = _kept(top_p_filter(logits, 0.4)).tolist()
    assert got == [True, False, False, False], f"[.5, .3, .15, .05] with p=0.4 keeps .5 alone, got {got}"
    got = _kept(top_p_filter(logits, 0.9)).tolist()
    assert got == [True, True, True, False], f"[.5, .3, .15, .05] with p=0.9 keeps 3 tokens, got {got}"
    assert _kept(top_p_filter(logits, 1.0)).all(), "top_p_filter with p=1 must keep every token"
    got = _kept(top_p_filter(logits, 0.4, min_tokens_to_keep=3)).tolist()
    assert got == [True, True, True, False], \
        f"p=0.4 with min_tokens_to_keep=3 keeps the 3 most probable tokens, got {got}"
    np.testing.assert_array_equal(logits, keep, err_msg="top_p_filter modified its input in place")
    # the exact boundary: four equal logits have probabilities .25 each, cumulative .25, .5, .75, 1 exactly
    flat = np.zeros(4)
    for p, n_kept in ((0.5, 2), (0.75, 3)):
        n = int(_kept(top_p_filter(flat, p)).sum())
        assert n == n_kept, \
            (f"four equal tokens (.25 each), p={p}: the tail with cumulative sum ≤ 1 − p = {1 - p} is removed, so "
             f"{n_kept} stay; yours kept {n}" + (": compare with <=, not <" if n == n_kept + 1 else ""))
    # the rule works on sorted probabilities, whatever the vocabulary order; rows are independent
    order = np.array([2, 0, 3, 1])
    rows = np.stack([logits[order], np.log(np.array([0.25, 0.25, 0.3, 0.2]))])
    got = _kept(top_p_filter(rows, 0.7))
    assert got.tolist() == [[False, True, False, True], [True, True, True, False]], \
        (f"two (shuffled) rows with p=0.7: each row is sorted, filtered and un-sorted on its own; expected "
         f"[[F, T, F, T], [T, T, T, F]], got {got.tolist()} (undo the sort with put_along_axis / argsort(order))")
    out = np.asarray(top_p_filter(rows, 0.7))
    np.testing.assert_array_equal(out[got], rows[got], err_msg="top_p_filter must leave the kept logits unchanged")


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
    assert counts[[0, 4, 5]].sum() == 0, \
        "top_k=3 on [1, 3, 3, 2, 0, -1] sampled a token outside the 3 kept (ids 1, 2, 3): apply top_k_filter first"
    p = np.where([False, True, True, True, False, False], _softmax(logits), 0.0)
    _assert_distribution(counts, p / p.sum(), "top-k sampling")

    probs = np.array([0.1, 0.45, 0.05, 0.25, 0.15])
    counts = _frequencies(sample_next, np.log(probs), top_p=0.6, seed=2)
    assert counts[[0, 2, 4]].sum() == 0, \
        "top_p=0.6 on probabilities [.1, .45, .05, .25, .15] sampled outside the nucleus {1, 3}: apply top_p_filter"
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
