"""Graded tests of Task 4.2: greedy, temperature, top-k (ties kept), top-p (Hugging Face's rule: the
crossing token is kept; ``TopPLogitsWarper``) and the draw from the filtered logits (``sample_token``).

Sampling frequencies are measured over 20,000 draws with a fixed seed and must lie within 4
standard errors of the expected probabilities. The order temperature → top-k → top-p → sample is
the library's (``minilm.decoding.sample_next``), tested in tests/models/test_decoding.py.
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


def _frequencies(sample_token, logits, seed=0):
    """Counts of each token over N_DRAWS rows drawn in one call (one independent draw per row)."""
    rows = np.tile(np.asarray(logits, dtype=np.float64), (N_DRAWS, 1))
    ids = np.asarray(sample_token(rows, rng=np.random.default_rng(seed)))
    assert ids.shape == (N_DRAWS,), \
        (f"sample_token on ({N_DRAWS}, {rows.shape[1]}) logits should return one id per row, shape ({N_DRAWS},), "
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
def test_sampling_follows_softmax_of_the_logits(impl):
    sample_token = impl(MOD).sample_token
    logits = np.array([1.0, 0.0, 2.0, -1.0, 0.5])
    counts = _frequencies(sample_token, logits, seed=1)
    if counts.max() == N_DRAWS:
        pytest.fail(f"all {N_DRAWS} rows drew token {counts.argmax()} (the arg-max is 2): draw from softmax(logits), "
                    "with one u per row (rng.random((N, 1))), not the arg-max and not one u for the whole batch")
    _assert_distribution(counts, _softmax(logits), "sampling from [1, 0, 2, -1, 0.5]")
    for T in (0.5, 2.0):         # the logits the library passes after dividing by a temperature
        counts = _frequencies(sample_token, logits / T, seed=int(T * 10))
        _assert_distribution(counts, _softmax(logits / T), f"sampling from logits / {T}")
    with np.errstate(all="ignore"):
        counts = _frequencies(sample_token, logits + 1000.0, seed=3)
    _assert_distribution(counts, _softmax(logits), "sampling from [1001, 1000, 1002, 999, 1000.5] (softmax is "
                         "shift-invariant: subtract each row's max before exp, or exp overflows)")


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_sampling_never_draws_a_filtered_token(impl):
    sample_token = impl(MOD).sample_token
    logits = np.array([1.0, 3.0, 3.0, 2.0, 0.0, -1.0])
    filtered = np.where([False, True, True, True, False, False], logits, -np.inf)   # what top-k 3 leaves
    counts = _frequencies(sample_token, filtered, seed=1)
    assert counts[[0, 4, 5]].sum() == 0, \
        (f"a token whose logit is -inf was drawn {counts[[0, 4, 5]].sum()} times: its probability is "
         "exp(-inf) = 0")
    p = np.where(np.isfinite(filtered), _softmax(logits), 0.0)
    _assert_distribution(counts, p / p.sum(), "sampling after top-k (the kept tokens renormalised)")

    probs = np.array([0.1, 0.45, 0.05, 0.25, 0.15])
    nucleus = np.where([False, True, False, True, False], np.log(probs), -np.inf)   # what top-p 0.6 leaves
    counts = _frequencies(sample_token, nucleus, seed=2)
    assert counts[[0, 2, 4]].sum() == 0, "sampled a token outside the nucleus {1, 3} (its logit is -inf)"
    kept = np.array([0, 0.45, 0, 0.25, 0])
    _assert_distribution(counts, kept / kept.sum(), "sampling after top-p (the nucleus renormalised)")
    last = np.array([-np.inf, -np.inf, -np.inf, 0.5])
    counts = _frequencies(sample_token, last, seed=3)
    assert counts[3] == N_DRAWS, \
        (f"only the last token is finite, yet others were drawn: counts {counts.tolist()} (does your cumulative "
         "sum end at exactly 1, and do you count the entries ≤ u?)")


@pytest.mark.task4_2
@pytest.mark.points(2)
def test_each_row_is_its_own_draw(impl):
    sample_token = impl(MOD).sample_token
    rows = np.log(np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]))
    batch = np.tile(rows, (N_DRAWS // 2, 1))                          # rows 0, 1, 0, 1, ...
    ids = np.asarray(sample_token(batch, rng=np.random.default_rng(5)))
    assert ids.shape == (N_DRAWS,), f"(N, V) logits give (N,) ids, got shape {ids.shape}"
    for r in range(2):
        _assert_distribution(np.bincount(ids[r::2], minlength=3), np.exp(rows[r]),
                             f"row {r} (softmax over that row alone)")
    same = np.tile(rows[:1], (N_DRAWS, 1))
    ids = np.asarray(sample_token(same, rng=np.random.default_rng(6)))
    agree = float(np.mean(ids[0::2] == ids[1::2]))
    expected = float((np.exp(rows[0]) ** 2).sum())                   # two independent draws agree with Σ p²
    assert abs(agree - expected) < 0.03, \
        (f"two rows with the same logits gave the same token {agree:.1%} of the time, independent draws agree "
         f"{expected:.1%}: draw one u per row (rng.random((N, 1))), not one for the whole batch")
    one = sample_token(rows[1], rng=np.random.default_rng(7))
    assert np.shape(one) == () and 0 <= int(one) < 3, f"a (V,) row gives one id, a 0-d array; got {one!r}"
    a = np.asarray(sample_token(batch, rng=np.random.default_rng(8)))
    state = np.random.get_state()
    np.random.seed(0)                                                # moves NumPy's global generator only
    b = np.asarray(sample_token(batch, rng=np.random.default_rng(8)))
    np.random.set_state(state)
    assert np.array_equal(a, b), \
        "the same rng seed gave different tokens: draw with the rng argument only, never np.random"
