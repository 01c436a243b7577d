"""minilm.decoding: sampling statistics over many draws, the generation loop, beam search on
hand-made step functions whose answer is known."""
import numpy as np
import pytest

from autograd import tasks
from autograd.errors import ConfigError, ShapeError
from minilm import decoding

N = 20_000


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _within(counts, probs, k=4.0):
    n = counts.sum()
    se = np.sqrt(np.maximum(probs * (1 - probs), 1e-12) / n)
    return np.all(np.abs(counts / n - probs) <= k * se)


def test_top_k_never_samples_outside_the_k_and_renormalises():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal(12) * 2
    ids = decoding.sample_next(np.tile(logits, (N, 1)), rng=rng, top_k=4)
    counts = np.bincount(ids, minlength=12)
    top4 = np.argsort(logits)[-4:]
    assert set(np.flatnonzero(counts)) <= set(top4.tolist())
    p = np.zeros(12)
    p[top4] = _softmax(logits[top4])
    assert _within(counts, p)


def test_top_p_distribution_is_the_renormalised_nucleus():
    rng = np.random.default_rng(1)
    probs = np.array([0.02, 0.4, 0.08, 0.25, 0.05, 0.2])            # sorted: .4 .25 .2 | .08 .05 .02
    ids = decoding.sample_next(np.tile(np.log(probs), (N, 1)), rng=rng, top_p=0.8)
    counts = np.bincount(ids, minlength=6)
    nucleus = np.where(np.isin(np.arange(6), [1, 3, 5]), probs, 0.0)  # .4 + .25 + .2 = .85 >= .8
    assert counts[[0, 2, 4]].sum() == 0
    assert _within(counts, nucleus / nucleus.sum())


def test_rows_are_independent_and_filters_combine():
    rng = np.random.default_rng(2)
    rows = np.array([[0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0]])
    batch = np.repeat(rows, N // 2, axis=0)
    ids = decoding.sample_next(batch, rng=rng, temperature=2.0, top_k=3, top_p=0.9)
    for r in range(2):
        z = decoding.top_p_filter(decoding.top_k_filter(rows[r] / 2.0, 3), 0.9)
        counts = np.bincount(ids[r * N // 2:(r + 1) * N // 2], minlength=4)
        assert _within(counts, _softmax(z))


def test_sampling_follows_softmax_of_logits_over_temperature():
    logits = np.array([1.0, 0.0, 2.0, -1.0, 0.5])
    for T in (1.0, 0.5, 2.0):
        ids = decoding.sample_next(np.tile(logits, (N, 1)), rng=np.random.default_rng(int(T * 10)), temperature=T)
        assert _within(np.bincount(ids, minlength=5), _softmax(logits / T))


def test_temperature_is_applied_before_top_p():
    """sample_next's order (its docstring says why): T = 3 flattens [.5, .3, .15, .05] so that p = 0.7
    needs three tokens (top-p first would keep two); T = 0.4 sharpens it so that p = 0.7 keeps one."""
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    with tasks.trace() as seen:
        ids = decoding.sample_next(np.tile(logits, (N, 1)), rng=np.random.default_rng(3), temperature=3.0, top_p=0.7)
    assert {("task04_gpt.decoding", name) for name in ("apply_temperature", "top_k_filter", "top_p_filter",
                                                        "sample_token")} <= seen
    counts = np.bincount(ids, minlength=4)
    q = _softmax(logits / 3.0)
    assert counts[3] == 0 and counts[2] > 0
    assert _within(counts, np.array([q[0], q[1], q[2], 0.0]) / q[:3].sum())
    ids = decoding.sample_next(np.tile(logits, (N, 1)), rng=np.random.default_rng(4), temperature=0.4, top_p=0.7)
    assert (ids == 0).all()


def test_filters_reject_bad_arguments():
    z = np.zeros(4)
    with pytest.raises(ConfigError):
        decoding.top_k_filter(z, -1)
    with pytest.raises(ConfigError):
        decoding.top_p_filter(z, 0.0)
    with pytest.raises(ConfigError):
        decoding.top_p_filter(z, 1.5)
    with pytest.raises(ConfigError):
        decoding.top_p_filter(z, 0.5, min_tokens_to_keep=0)
    assert np.isfinite(decoding.top_p_filter(z, None)).all()


def test_log_probs():
    z = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0]])
    lp = decoding.log_probs(z)
    np.testing.assert_allclose(np.exp(lp).sum(-1), 1.0)
    np.testing.assert_allclose(lp[0], np.log(_softmax(z[0])))
    assert np.isfinite(lp[1, :2]).all()


# ---- the generation loop --------------------------------------------------------------------------

def _counter(V):
    """next_logits that always predicts (last token + 1) mod V, and records the window lengths."""
    seen = []

    def next_logits(ids):
        seen.append(ids.shape[1])
        out = np.full((ids.shape[0], V), -5.0)
        out[np.arange(ids.shape[0]), (ids[:, -1] + 1) % V] = 5.0
        return out
    return next_logits, seen


def test_generate_tokens_greedy_eos_and_context():
    next_logits, seen = _counter(6)
    out = decoding.generate_tokens(next_logits, np.array([[0], [3]]), 5, greedy=True, context=3)
    np.testing.assert_array_equal(out, [[0, 1, 2, 3, 4, 5], [3, 4, 5, 0, 1, 2]])
    assert max(seen) == 3, "the model never sees more than `context` tokens"
    next_logits, seen = _counter(6)
    out = decoding.generate_tokens(next_logits, np.array([[2], [0]]), 10, greedy=True, eos_id=4)
    np.testing.assert_array_equal(out, [[2, 3, 4, 4, 4], [0, 1, 2, 3, 4]])
    assert len(seen) == 4, "the loop stops once every row has produced EOS"
    with pytest.raises(ConfigError, match="rng"):
        decoding.generate_tokens(next_logits, np.array([[0]]), 1)
    with pytest.raises(ShapeError):
        decoding.generate_tokens(next_logits, np.array([0]), 1, greedy=True)



def test_generate_tokens_process_runs_before_each_choice():
    next_logits, _ = _counter(6)
    calls = []

    def ban_three(logits, ids, step):                    # a logits processor: token 3 never chosen
        calls.append((ids.shape[1], step))
        logits = logits.copy()
        logits[:, 3] = -np.inf
        return logits
    out = decoding.generate_tokens(next_logits, np.array([[1]]), 3, greedy=True, process=ban_three)
    assert 3 not in out[0, 1:].tolist(), f"the processor banned token 3, yet the loop chose it: {out}"
    assert calls == [(1, 0), (2, 1), (3, 2)], "process sees the whole sequence so far and the step number"

# ---- beam search ----------------------------------------------------------------------------------

def _tree(table):
    """step_fn from {prefix of generated tokens: next-token probabilities}; prompt = [9]."""
    def step_fn(ids):
        return np.log(np.array([table[tuple(row[1:].tolist())] for row in ids]))
    return step_fn


def test_beam_search_finds_what_greedy_misses():
    EOS, A, B = 0, 1, 2
    table = {(): [1e-12, 0.6, 0.4],                # greedy takes A (0.6) ...
             (A,): [0.5, 0.25, 0.25],              # ... but A is followed by a coin toss
             (B,): [0.9, 0.05, 0.05]}              # B EOS has 0.36 > A EOS's 0.30
    for prefix in [(A, A), (A, B), (B, A), (B, B)]:
        table[prefix] = [1.0, 1e-9, 1e-9]
    step_fn = _tree(table)
    best = decoding.beam_search(step_fn, [9], num_beams=2, max_new_tokens=3, eos_id=EOS, length_penalty=0.0)
    assert best[0][1].tolist() == [9, B, EOS]
    np.testing.assert_allclose(best[0][0], np.log(0.4 * 0.9))
    assert best[1][1].tolist() == [9, A, EOS]
    greedy = decoding.beam_search(step_fn, [9], num_beams=1, max_new_tokens=3, eos_id=EOS, length_penalty=0.0)
    assert greedy[0][1].tolist() == [9, A, EOS]


def test_beam_search_edge_cases():
    step_fn = _tree({(): [0.5, 0.3, 0.2], (1,): [0.1, 0.1, 0.8], (2,): [0.2, 0.2, 0.6],
                     (0,): [0.3, 0.3, 0.4]})
    assert decoding.beam_search(step_fn, [9], num_beams=2, max_new_tokens=0)[0][1].tolist() == [9]
    res = decoding.beam_search(step_fn, [9], num_beams=2, max_new_tokens=1, eos_id=None)
    assert [r[1].tolist() for r in res] == [[9, 0], [9, 1]]
    np.testing.assert_allclose([r[0] for r in res], np.log([0.5, 0.3]))
    with pytest.raises(ConfigError):
        decoding.beam_search(step_fn, [9], num_beams=0, max_new_tokens=1)
    with pytest.raises(ShapeError):
        decoding.beam_search(lambda ids: np.zeros((1, 3)), [9], num_beams=2, max_new_tokens=1)
