"""Graded tests of Task 11.1: static word vectors — subword pooling f, context combination g, and
``static_vectors`` (decontextualised and aggregated, per layer, with the fallback).

A fake tokenizer and a fake encoder stand in for BERT: [CLS], [SEP], every piece, every position,
every context and every layer give different vectors, so each wrong choice gives different numbers.
"""
import numpy as np
import pytest

from autograd.errors import ConfigError, ShapeError

MOD = "task11_static.pooling"
C, N_STATES = 4, 4                       # channels; hidden states 0..3 (3 layers + embeddings)
PIECES = {"dog": [10], "cat": [11, 12], "elephant": [13, 14, 15], "the": [16], "runs": [17], "sleeps": [18],
          "a": [19], ".": [20], "zebra": [21, 22]}
CLS, SEP, UNK = 1, 2, 3


class FakeTokenizer:
    cls_id, sep_id, pad_id = CLS, SEP, 0

    def encode(self, text, add_special_tokens=True):
        ids = [i for w in text.lower().split() for i in PIECES.get(w, [UNK])]
        return [CLS, *ids, SEP] if add_special_tokens else ids


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


def fake_encode(seqs):
    return [fake_hidden(s) for s in seqs]


def _pool(v, how):
    return {"mean": v.mean(0), "max": v.max(0), "min": v.min(0), "last": v[-1]}[how]


def _decontextualised(words, f, drop_specials=True):
    out = np.zeros((N_STATES, len(words), C))
    for i, w in enumerate(words):
        ids = [CLS, *PIECES[w], SEP]
        h = fake_hidden(ids)
        rows = slice(1, 1 + len(PIECES[w])) if drop_specials else slice(0, len(ids))
        for l in range(N_STATES):
            out[l, i] = _pool(h[l, rows], f)
    return out


def _aggregated(words, sentences, f, g):
    out = _decontextualised(words, f)
    for i, w in enumerate(words):
        occ = []
        for s in sentences:
            toks = s.split()
            ids, spans = [CLS], []
            for t in toks:
                spans.append((len(ids), len(ids) + len(PIECES[t])))
                ids += PIECES[t]
            ids.append(SEP)
            h = fake_hidden(ids)
            occ += [np.stack([_pool(h[l, a:b], f) for l in range(N_STATES)]) for t, (a, b) in zip(toks, spans) if t == w]
        if occ:
            occ = np.stack(occ)
            for l in range(N_STATES):
                out[l, i] = {"mean": occ[:, l].mean(0), "max": occ[:, l].max(0), "min": occ[:, l].min(0)}[g]
    return out


SENTENCES = ["the dog runs .", "the cat sleeps .", "a dog sleeps the cat .",
             "the elephant runs .", "a cat runs ."]
WORDS = ["dog", "cat", "elephant", "zebra"]          # zebra never occurs: it must fall back


@pytest.mark.task11_1
@pytest.mark.points(1)
def test_pool_subwords(impl):
    pool_subwords = impl(MOD).pool_subwords
    v = np.random.default_rng(2).normal(size=(3, 5))
    before = v.copy()
    for how in ("mean", "max", "min", "last"):
        got = pool_subwords(v, how)
        assert np.shape(got) == (5,), f"how={how}: expected one vector (C,), got shape {np.shape(got)}"
        np.testing.assert_allclose(got, _pool(v, how), err_msg=f"how={how!r}")
    np.testing.assert_array_equal(v, before, err_msg="pool_subwords changed its input")
    np.testing.assert_allclose(pool_subwords(v[:1], "mean"), v[0],
        err_msg="pool_subwords of a single sub-word should return that sub-word's vector")
    with pytest.raises(ConfigError):
        pool_subwords(v, "first")
    with pytest.raises(ShapeError):
        pool_subwords(np.zeros((0, 5)), "mean")


@pytest.mark.task11_1
@pytest.mark.points(1)
def test_aggregate_contexts(impl):
    aggregate_contexts = impl(MOD).aggregate_contexts
    v = np.random.default_rng(3).normal(size=(6, 4))
    for how, ref in (("mean", v.mean(0)), ("max", v.max(0)), ("min", v.min(0))):
        np.testing.assert_allclose(aggregate_contexts(v, how), ref, err_msg=f"how={how!r}")
    with pytest.raises(ConfigError):
        aggregate_contexts(v, "last")
    with pytest.raises(ShapeError):
        aggregate_contexts(np.zeros((0, 4)), "mean")


@pytest.mark.task11_1
@pytest.mark.points(2)
def test_decontextualised_pools_the_pieces_without_specials(impl):
    static_vectors = impl(MOD).static_vectors
    words = ["dog", "cat", "elephant"]
    for f in ("mean", "max", "last"):
        got = np.asarray(static_vectors(words, FakeTokenizer(), fake_encode, pooling=f))
        assert got.shape == (N_STATES, len(words), C), f"expected (L+1, W, C) = {(N_STATES, len(words), C)}"
        cls_rows = np.stack([np.stack([fake_hidden([CLS, *PIECES[w], SEP])[l, 0] for w in words])
                             for l in range(N_STATES)])
        if np.allclose(got[1:], cls_rows[1:]):
            pytest.fail("the static vector is h[CLS]: pool the word's own pieces (positions 1..k) instead")
        if np.allclose(got, _decontextualised(words, f, drop_specials=False)):
            pytest.fail(f"f={f}: [CLS] and [SEP] were pooled with the pieces: strip them first")
        ref = _decontextualised(words, f)
        if np.allclose(got[:-1], ref[1:]) or np.allclose(got[1:], ref[:-1]):
            pytest.fail("the layers are shifted by one: out[l] must come from hidden state l (0 = embeddings)")
        np.testing.assert_allclose(got, ref, rtol=1e-10, err_msg=f"decontextualised vectors, f={f}")


@pytest.mark.task11_1
@pytest.mark.points(2)
def test_aggregated_over_occurrences_with_fallback(impl):
    static_vectors = impl(MOD).static_vectors
    for f, g in (("mean", "mean"), ("last", "max"), ("max", "min")):
        got = np.asarray(static_vectors(WORDS, FakeTokenizer(), fake_encode, SENTENCES, pooling=f, combine=g))
        assert got.shape == (N_STATES, len(WORDS), C), \
            f"static_vectors should be (states, words, C) = {(N_STATES, len(WORDS), C)}, got {got.shape}"
        assert np.all(np.isfinite(got)), "a word that never occurs got a non-finite vector: fall back instead"
        decon = _decontextualised(WORDS, f)
        if np.allclose(got[:, :3], decon[:, :3]):
            pytest.fail("the corpus was ignored: aggregated vectors combine the words' occurrences in the sentences")
        zebra = WORDS.index("zebra")
        if np.allclose(got[:, zebra], 0):
            pytest.fail("'zebra' never occurs and got a zero vector: fall back to its decontextualised vector")
        np.testing.assert_allclose(got[:, zebra], decon[:, zebra], rtol=1e-10,
                                   err_msg="a word never seen falls back to its decontextualised vector")
        ref = _aggregated(WORDS, SENTENCES, f, g)
        if np.allclose(got[:-1], ref[1:]) or np.allclose(got[1:], ref[:-1]):
            pytest.fail("the layers are shifted by one: out[l] must come from hidden state l (0 = embeddings)")
        np.testing.assert_allclose(got, ref, rtol=1e-10, err_msg=f"aggregated vectors, f={f}, g={g}")


@pytest.mark.task11_1
@pytest.mark.points(1)
def test_layer_zero_is_the_embedding_output(impl):
    """Layer 0 of a decontextualised one-piece word is exactly the encoder's state 0 at position 1."""
    static_vectors = impl(MOD).static_vectors
    got = np.asarray(static_vectors(["dog"], FakeTokenizer(), fake_encode, pooling="mean"))
    h = fake_hidden([CLS, 10, SEP])
    for l in range(N_STATES):
        np.testing.assert_allclose(got[l, 0], h[l, 1], err_msg=f"layer {l}")
