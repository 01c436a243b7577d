"""Graded tests of Task 4.3: beam search with a length penalty and EOS (Hugging Face's algorithm,
src/transformers/generation/beam_search.py), on hand-made step functions whose answers are known or found by exhaustive search."""
import numpy as np
import pytest

MOD = "task04_gpt.beam_search"


def _markov(probs):
    """step_fn whose next-token log-probabilities depend on the last token only: probs[last]."""
    table = np.log(np.asarray(probs, dtype=np.float64))
    return lambda ids: table[np.asarray(ids)[:, -1]]


def _exhaustive(step_fn, start, V, eos, max_new, lp):
    """Every hypothesis (ended by EOS, or by reaching max_new tokens), scored Σ log p / L^lp."""
    hyps = []

    def walk(seq, total, n):
        logp = step_fn(np.array([seq]))[0]
        for v in range(V):
            t = total + logp[v]
            if v == eos or n + 1 == max_new:
                hyps.append((t / (n + 1) ** lp, seq + [v]))
            else:
                walk(seq + [v], t, n + 1)
    walk(list(start), 0.0, 0)
    return sorted(hyps, key=lambda h: -h[0])


def _as_lists(result):
    return [(float(s), np.asarray(ids).tolist()) for s, ids in result]


@pytest.mark.task4_3
@pytest.mark.points(2)
def test_beams_are_distinct_and_the_best(impl):
    beam_search = impl(MOD).beam_search
    rng = np.random.default_rng(0)
    V = 6
    per_step = [np.log(np.exp(z) / np.exp(z).sum()) for z in rng.standard_normal((3, V)) * 1.5]

    def step_fn(ids):                        # the same for every beam; changes with the step
        return np.tile(per_step[ids.shape[1] - 1], (ids.shape[0], 1))

    got = _as_lists(beam_search(step_fn, [7], num_beams=4, max_new_tokens=3, eos_id=None))
    seqs = [tuple(s) for _, s in got]
    assert len(got) == 4, f"beam_search with num_beams=4 should return 4 hypotheses, got {len(got)}"
    assert len(set(seqs)) == 4, f"duplicate beams {seqs}: beams 1..K-1 must start at −1e9, not 0"
    want = _exhaustive(step_fn, [7], V, None, 3, 1.0)[:4]
    assert [s for _, s in got] == [s for _, s in want], \
        (f"the 4 beams after 3 steps should be the 4 best sequences of an exhaustive search, {[s for _, s in want]}, "
         f"got {seqs}")
    np.testing.assert_allclose([s for s, _ in got], [s for s, _ in want], rtol=1e-9,
        err_msg="the beams are right but their scores differ from the sum of their tokens' log-probabilities")


@pytest.mark.task4_3
@pytest.mark.points(2)
def test_length_penalty_changes_the_winner(impl):
    beam_search = impl(MOD).beam_search
    EOS, A, B = 0, 1, 2
    step_fn = _markov([[1 / 3, 1 / 3, 1 / 3],       # after EOS (never used)
                       [0.05, 0.90, 0.05],          # after A: A again is likely
                       [0.40, 0.45, 0.15]])         # after the prompt B: EOS at once is 0.40
    # length_penalty = 0: the plain sum; stopping at once (log 0.40) beats A A A A (log 0.45 + 3 log 0.9)
    got = _as_lists(beam_search(step_fn, [B], num_beams=2, max_new_tokens=4, eos_id=EOS, length_penalty=0.0))
    assert got[0][1] == [B, EOS], \
        ("with length_penalty=0 scores are the plain sum Σ log p: stopping at once (B EOS, log 0.40) beats "
         f"B A A A A; the best was {got[0][1]}")
    np.testing.assert_allclose(got[0][0], np.log(0.40), rtol=1e-9,
        err_msg=f"with length_penalty=0 the score of B EOS should be log 0.40 = {np.log(0.40):.4f}, got {got[0][0]}")
    # length_penalty = 1: the mean log-probability per token; A A A A wins
    got = _as_lists(beam_search(step_fn, [B], num_beams=2, max_new_tokens=4, eos_id=EOS, length_penalty=1.0))
    assert got[0][1] == [B, A, A, A, A], "with length_penalty=1 scores are Σ log p / L"
    np.testing.assert_allclose(got[0][0], (np.log(0.45) + 3 * np.log(0.9)) / 4, rtol=1e-9,
        err_msg=("with length_penalty=1 the score of B A A A A should be (log .45 + 3 log .9) / 4: divide "
                 "by the generated length"))


@pytest.mark.task4_3
@pytest.mark.points(2)
def test_eos_hypotheses_are_finished_not_extended(impl):
    beam_search = impl(MOD).beam_search
    EOS, A, B = 0, 1, 2
    step_fn = _markov([[0.01, 0.01, 0.98],          # after EOS: only a wrong search ever looks here
                       [0.80, 0.10, 0.10],          # after A: EOS is likely
                       [0.05, 0.90, 0.05]])         # after the prompt B: A is likely
    got = _as_lists(beam_search(step_fn, [B], num_beams=2, max_new_tokens=5, eos_id=EOS, length_penalty=1.0))
    assert got[0][1] == [B, A, EOS], f"best hypothesis {got[0][1]}: B A EOS must be finished at EOS"
    np.testing.assert_allclose(got[0][0], (np.log(0.9) + np.log(0.8)) / 2, rtol=1e-9,
                               err_msg="score = Σ log p / L with L = generated tokens, EOS included")
    for _, ids in got:
        assert EOS not in ids[:-1], f"hypothesis {ids} continues after EOS"
    assert len(got) == 2, f"num_beams=2 should return 2 finished hypotheses, got {len(got)}"


@pytest.mark.task4_3
@pytest.mark.points(1)
@pytest.mark.parametrize("length_penalty", [0.0, 1.0, 2.0])
def test_wide_beam_equals_exhaustive_search(impl, length_penalty):
    beam_search = impl(MOD).beam_search
    rng = np.random.default_rng(int(length_penalty * 10) + 1)
    V, EOS = 3, 0
    tables = np.log(rng.dirichlet(np.ones(V) * 2, size=(4, V)))   # (step, last token, next token)

    def step_fn(ids):                        # depends on the step and the last token: no ties
        return tables[ids.shape[1] - 1][ids[:, -1]]
    got = _as_lists(beam_search(step_fn, [1], num_beams=32, max_new_tokens=4, eos_id=EOS,
                                length_penalty=length_penalty))
    want = _exhaustive(step_fn, [1], V, EOS, 4, length_penalty)[:10]
    assert [s for _, s in got[:10]] == [s for _, s in want], \
        (f"num_beams=32 over 3 tokens × 4 steps (length_penalty={length_penalty}) must find the exhaustive "
         "search's 10 best sequences in order")
    np.testing.assert_allclose([s for s, _ in got[:10]], [s for s, _ in want], rtol=1e-9,
        err_msg=(f"length_penalty={length_penalty}: the sequences are right but the scores differ from Σ "
                 "log p / L^length_penalty"))
