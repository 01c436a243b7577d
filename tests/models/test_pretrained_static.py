"""Static word vectors from the real all-MiniLM-L6-v2 (minilm/pretrained/static_words.py,
minilm/downstream/static.py, ``minilm embed --static DIR``) and the pooler ≠ h[CLS] demonstration.

Skipped when the model package is absent. Small on purpose: the corpus is 60 synthetic sentences
and one subword pooling, so the file runs in a few seconds on two cores."""
import json

import numpy as np
import pytest

from autograd.errors import CheckpointError
from minilm.downstream import static
from minilm.data import synthetic_corpus, word_similarity_pairs

from tests.helpers import MINILM_L6_DIR as MODEL_DIR, needs_minilm_l6

pytestmark = needs_minilm_l6


@pytest.fixture(scope="module")
def loaded():
    from minilm.pretrained.static_words import load_static_bert
    return load_static_bert(MODEL_DIR)


@pytest.fixture(scope="module")
def corpus():
    docs = synthetic_corpus(20, rng=np.random.default_rng([0, 21]))
    return [s for d in docs for s in d][:60]


@pytest.fixture(scope="module")
def pairs():
    return word_similarity_pairs(rng=np.random.default_rng([0, 22]), n_pairs=120)


@pytest.fixture(scope="module")
def report(loaded, corpus, pairs):
    _, bert, tok = loaded
    return static.static_report(bert, tok, corpus, pairs, poolings=("mean",))


def test_every_pair_word_is_in_the_real_vocabulary(loaded, pairs):
    _, _, tok = loaded
    unk = tok.unk_id
    for a, b, _ in pairs:
        for w in (a, b):
            ids = tok.encode(w, add_special_tokens=False)
            assert ids and unk not in ids, w


def test_vectors_have_one_set_per_layer(loaded, corpus):
    _, bert, tok = loaded
    encode = static.cached_encoder(static.bert_encoder(bert, tok.pad_id))
    words = ["dog", "cat", "singer", "violinist"]
    dec = static.static_vectors(words, tok, encode, None, pooling="mean")
    agg = static.static_vectors(words, tok, encode, corpus, pooling="mean")
    assert dec.shape == agg.shape == (7, 4, 384)                    # embeddings + 6 layers, W words, C
    assert np.isfinite(dec).all() and np.isfinite(agg).all()
    # a word of the corpus gets its contexts' mean, not its vector alone (at layer 0 too: the
    # embedding output includes the position); a word never seen falls back to the word alone
    seen = [any(w in s.split() for s in corpus) for w in words]
    assert any(seen) and not all(seen)
    for i, was_seen in enumerate(seen):
        assert np.allclose(agg[:, i], dec[:, i]) != was_seen, words[i]


def test_report_rows_and_aggregated_beats_chance(report, pairs):
    rows = report["rows"]
    assert report["n_layers"] == 6 and report["n_words_seen"] > 0
    assert len(rows) == 2 * 1 * 7                                   # modes × poolings × layers 0..6
    assert all(0.0 <= r["auc"] <= 1.0 for r in rows)
    agg = [r for r in rows if r["mode"] == "aggregated"]
    # chance is 0.5; the real model separates dog/cat from dog/singer clearly at some layer
    assert max(r["auc"] for r in agg) > 0.75
    assert max(r["gap"] for r in agg) > 0.05


def test_pooler_output_is_not_cls(loaded):
    from minilm.pretrained.static_words import POOLER_TEXTS, pooler_vs_cls
    pretrained, _, _ = loaded
    r = pooler_vs_cls(pretrained, POOLER_TEXTS[:3])
    assert not r["missing_pooler"] and len(r["cos_pooler_cls"]) == 3
    # tanh(W h + b) is a different vector from h: nearly orthogonal here, and inside (-1, 1)
    assert max(abs(c) for c in r["cos_pooler_cls"]) < 0.5
    assert all(n > 1.0 for n in r["norm_cls"])
    out = pretrained.encode(["A dog runs."])
    assert np.abs(out["pooler_output"]).max() < 1.0
    np.testing.assert_allclose(out["pooler_output"], np.tanh(
        out["last_hidden_state"][:, 0] @ pretrained.bert.pooler.dense.weight.data.T
        + pretrained.bert.pooler.dense.bias.data), atol=1e-5)


def test_embed_static_on_the_folder(tmp_path, capsys):
    from minilm.cli import main
    png = tmp_path / "static.png"
    assert main(["embed", "--static", str(MODEL_DIR), "--sentences", "24", "--pairs", "40",
                 "--pooling", "mean", "--out", str(png), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["layer"] for r in out["rows"]} == set(range(7)) and png.stat().st_size > 1000
    assert len(out["pooler_vs_cls"]["cos_pooler_cls"]) == 5


def test_embed_static_refuses_two_models_or_texts(tmp_path, capsys):
    from minilm.cli import main
    assert main(["embed", "--static", str(MODEL_DIR), "--checkpoint", str(tmp_path / "x.npz")]) == 1
    assert "expected one model" in capsys.readouterr().err
    assert main(["embed", "--static", str(MODEL_DIR), "some text"]) == 1
    assert "no texts" in capsys.readouterr().err


def test_folder_without_vocabulary_is_refused(tmp_path):
    from minilm.pretrained.static_words import load_static_bert
    for name in ("config.json", "model.safetensors"):
        (tmp_path / name).symlink_to(MODEL_DIR / name)
    with pytest.raises(CheckpointError, match="vocab.txt"):
        load_static_bert(tmp_path)


def test_english_words_split_and_pooling_matters(loaded):
    """The second word set: every word several pieces, all pairs, and f changes the vectors."""
    from minilm.pretrained.static_words import english_pairs, english_sentences, english_words
    _, bert, tok = loaded
    words, pairs = english_words(), english_pairs()
    assert len(words) == len(set(words)) == 30 and len(english_sentences()) == 180
    assert len(pairs) == 435 and sum(p[2] for p in pairs) == 75
    for w in words:
        ids = tok.encode(w, add_special_tokens=False)
        assert len(ids) >= 2 and tok.unk_id not in ids, w
    encode = static.cached_encoder(static.bert_encoder(bert, tok.pad_id))
    vecs = {f: static.static_vectors(words, tok, encode, None, pooling=f) for f in ("last", "max")}
    assert not np.allclose(vecs["last"], vecs["max"])
    # the last layer's vectors of the word's last piece separate the categories well above chance
    assert static.similarity_scores(vecs["last"][6], words, pairs)["auc"] > 0.7
