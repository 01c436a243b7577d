"""Graded tests of Task 11.1: static word vectors — subword pooling f over a word's pieces at every
layer, and context combination g with the fallback for a word never seen.

A fake tokenizer and a fake encoder stand in for BERT: [CLS], [SEP], every piece, every position,
every context and every layer give different vectors, so each wrong choice gives different numbers.
The two recipes that call f and g (``minilm.downstream.static.static_vectors``: tokenize, encode,
pool every occurrence, combine) are library code, tested in tests/models/test_static.py.
"""
import warnings

import numpy as np
import pytest

from autograd.errors import ConfigError, ShapeError

MOD = "task11_static.pooling"
C, N_STATES = 4, 4                       # channels; hidden states 0..3 (3 layers + embeddings)
PIECES = {"dog": [10], "cat": [11, 12], "elephant": [13, 14, 15], "the": [16], "runs": [17], "sleeps": [18],
          "a": [19], ".": [20], "zebra": [21, 22]}
CLS, SEP = 1, 2


_E = np.random.default_rng(0).normal(size=(30, C))
_P = np.random.default_rng(1).normal(size=(40, C))


def fake_hidden(ids):
    """(N_STATES, T, C): state l mixes the token, its position and (from l ≥ 1) the whole context."""
    ids = np.asarray(ids)
    x = _E[ids] + 0.1 * _P[:len(ids)]                                   # (T, C)
    states = [x]
    for l in range(1, N_STATES):
        x = np.tanh(1.5 * x + 0.5 * x.mean(axis=0) + 0.2 * l)
        states.append(x)
    return np.stack(states)


def _pool(v, how):
    return {"mean": v.mean(0), "max": v.max(0), "min": v.min(0), "last": v[-1]}[how]


def _sentence(words):
    """[CLS] pieces… [SEP] for a whitespace-split sentence, and each word's span of pieces."""
    ids, spans = [CLS], []
    for w in words:
        spans.append((len(ids), len(ids) + len(PIECES[w])))
        ids += PIECES[w]
    return ids + [SEP], spans


def _pooled(h, span, f):
    """f over the pieces of ``span`` at every state: (N_STATES, C)."""
    a, b = span
    return np.stack([_pool(h[l, a:b], f) for l in range(N_STATES)])


@pytest.mark.task11_1
@pytest.mark.points(2)
def test_pool_subwords(impl):
    pool_subwords = impl(MOD).pool_subwords
    ids, spans = _sentence("the elephant runs .".split())               # elephant: 3 pieces at 2..4
    h = fake_hidden(ids)                                                 # (4, 8, C)
    before = h.copy()
    for how in ("mean", "max", "min", "last"):
        got = np.asarray(pool_subwords(h, spans[1], how))
        assert got.shape == (N_STATES, C), \
            (f"how={how}: one vector per state, (L+1, C) = {(N_STATES, C)}, got {got.shape}: reduce over the "
             "pieces (axis 1 of states[:, start:end]), not over the layers or the channels")
        if how == "last" and np.allclose(got, h[:, spans[1][1]]):
            pytest.fail("how='last' took the position after the word: end is exclusive, the last piece is end - 1")
        np.testing.assert_allclose(got, _pooled(h, spans[1], how), rtol=1e-12,
                                   err_msg=f"how={how!r}: f over the 3 pieces of 'elephant' (positions 2..4), "
                                           "at every state")
    np.testing.assert_array_equal(h, before, err_msg="pool_subwords changed its input")
    np.testing.assert_allclose(pool_subwords(h, spans[0], "max"), h[:, 1],
                               err_msg="the pooling of a one-piece word is that piece's vector")
    with pytest.raises(ConfigError):
        pool_subwords(h, spans[1], "first")
    with pytest.raises(ShapeError):
        pool_subwords(h, (3, 3), "mean")


@pytest.mark.task11_1
@pytest.mark.points(2)
def test_pool_subwords_reads_the_word_not_the_specials(impl):
    """Decontextualised: [CLS] w₁ … w_k [SEP], pooled over w₁ … w_k only, at every state."""
    pool_subwords = impl(MOD).pool_subwords
    for w in ("cat", "elephant"):
        ids, [span] = _sentence([w])
        h = fake_hidden(ids)
        for f in ("mean", "max", "last"):
            got, want = np.asarray(pool_subwords(h, span, f)), _pooled(h, span, f)
            assert got.shape == want.shape, \
                f"pool_subwords of {w!r} alone, f={f}: expected (L+1, C) = {want.shape}, got {got.shape}"
            if np.allclose(got, want, rtol=1e-12):
                continue
            if np.allclose(got, h[:, 0]):
                pytest.fail("the static vector is h[CLS]: pool the word's own pieces (positions 1..k) instead")
            if np.allclose(got, _pooled(h, (0, len(ids)), f)):
                pytest.fail(f"f={f}: [CLS] and [SEP] were pooled with the pieces of {w!r}: pool the span only")
            if np.allclose(got[:-1], want[1:]) or np.allclose(got[1:], want[:-1]):
                pytest.fail("the states are shifted by one: row l must come from hidden state l (0 = embeddings)")
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{w!r} alone, f={f}")


@pytest.mark.task11_1
@pytest.mark.points(1)
def test_layer_zero_is_the_embedding_output(impl):
    """Row 0 of a one-piece word is exactly the encoder's state 0 at position 1, and so on up."""
    h = fake_hidden([CLS, 10, SEP])                                    # [CLS] dog [SEP]
    got = np.asarray(impl(MOD).pool_subwords(h, (1, 2), "mean"))
    assert got.shape == (N_STATES, C), f"expected one row per hidden state, (L+1, C) = {(N_STATES, C)}, got {got.shape}"
    for l in range(N_STATES):
        np.testing.assert_allclose(got[l], h[l, 1], err_msg=f"state {l}")


@pytest.mark.task11_1
@pytest.mark.points(1)
def test_aggregate_contexts(impl):
    aggregate_contexts = impl(MOD).aggregate_contexts
    occ = np.random.default_rng(3).normal(size=(6, N_STATES, C))       # n = 6 occurrences
    fallback = np.full((N_STATES, C), 9.0)
    for how, ref in (("mean", occ.mean(0)), ("max", occ.max(0)), ("min", occ.min(0))):
        got = np.asarray(aggregate_contexts(occ, fallback, how))
        assert got.shape == (N_STATES, C), \
            (f"how={how}: one vector per state, (L+1, C) = {(N_STATES, C)}, got {got.shape}: combine over the "
             "occurrences (axis 0), not the layers")
        np.testing.assert_allclose(got, ref, err_msg=f"how={how!r}: g over the 6 occurrences at every state")
    with pytest.raises(ConfigError):
        aggregate_contexts(occ, fallback, "last")


@pytest.mark.task11_1
@pytest.mark.points(1)
def test_aggregate_contexts_falls_back_for_a_word_never_seen(impl):
    aggregate_contexts = impl(MOD).aggregate_contexts
    fallback = np.random.default_rng(4).normal(size=(N_STATES, C))     # the decontextualised vector
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")                                # the mean of nothing warns
        got = np.asarray(aggregate_contexts(np.zeros((0, N_STATES, C)), fallback, "mean"))
    assert np.all(np.isfinite(got)), \
        "a word with no occurrence got a non-finite vector (the mean of nothing): return the fallback instead"
    if np.allclose(got, 0):
        pytest.fail("a word with no occurrence got a zero vector: return its decontextualised vector (fallback)")
    np.testing.assert_array_equal(got, fallback, err_msg="a word never seen keeps its decontextualised vector")
    one = np.random.default_rng(5).normal(size=(1, N_STATES, C))
    np.testing.assert_allclose(aggregate_contexts(one, fallback, "max"), one[0],
                               err_msg="a word seen once: g of one occurrence is that occurrence, not the fallback")
