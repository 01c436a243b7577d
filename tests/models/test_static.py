"""Static word vectors (minilm/downstream/static.py) and ``minilm embed --static`` on a tiny BERT."""
import json

import numpy as np
import pytest

from autograd import tasks
from autograd.errors import ConfigError
from minilm.downstream import static
from minilm.data import synthetic_corpus, word_similarity_pairs
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.tokenizers import WordPieceTokenizer
from tests.graded.test_task11_static import CLS, N_STATES, PIECES, SEP, C, _pool, fake_hidden


@pytest.fixture(scope="module")
def tiny():
    docs = synthetic_corpus(30, rng=np.random.default_rng(0))
    sentences = [s for d in docs for s in d]
    tok = WordPieceTokenizer.train(sentences, 150)
    cfg = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=24, n_layer=2, n_head=2, n_embd=16,
                     dropout=0.0)
    model = BertForPreTraining(cfg, rng=np.random.default_rng(1))
    return model, tok, sentences


def test_encoder_matches_one_sequence_at_a_time(tiny):
    model, tok, _ = tiny
    encode = static.bert_encoder(model.bert, tok.pad_id, batch_size=2)
    seqs = [tok.encode(s) for s in ("the dog runs .", "a cat", "the big red bus stops near the bridge .")]
    batched = encode(seqs)
    for s, h in zip(seqs, batched):
        alone = encode([s])[0]
        assert h.shape == (3, len(s), 16)
        np.testing.assert_allclose(h, alone, rtol=1e-4, atol=1e-5)


UNK = 3


class FakeTokenizer:
    """Words to the fake pieces of Task 11.1's graded tests, whose encoder (fake_hidden) runs them."""
    cls_id, sep_id, pad_id = CLS, SEP, 0

    def encode(self, text, add_special_tokens=True):
        ids = [i for w in text.lower().split() for i in PIECES.get(w, [UNK])]
        return [CLS, *ids, SEP] if add_special_tokens else ids


def fake_encode(seqs):
    return [fake_hidden(s) for s in seqs]


def _decontextualised(words, f):
    out = np.zeros((N_STATES, len(words), C))
    for i, w in enumerate(words):
        h = fake_hidden([CLS, *PIECES[w], SEP])
        for l in range(N_STATES):
            out[l, i] = _pool(h[l, 1:1 + len(PIECES[w])], f)
    return out


def _aggregated(words, sentences, f, g):
    out = _decontextualised(words, f)
    for i, w in enumerate(words):
        occ = []
        for toks in (s.split() for s in sentences):
            ids, spans = static.word_pieces(FakeTokenizer(), toks)
            h = fake_hidden(ids)
            occ += [np.stack([_pool(h[l, a:b], f) for l in range(N_STATES)]) for t, (a, b) in zip(toks, spans) if t == w]
        if occ:
            out[:, i] = {"mean": np.mean, "max": np.max, "min": np.min}[g](np.stack(occ), axis=0)
    return out


SENTENCES = ["the dog runs .", "the cat sleeps .", "a dog sleeps the cat .", "the elephant runs .", "a cat runs ."]
WORDS = ["dog", "cat", "elephant", "zebra"]          # zebra never occurs: it falls back


def test_word_pieces_spans_skip_the_specials():
    ids, spans = static.word_pieces(FakeTokenizer(), ["the", "elephant", "runs"])
    assert ids == [CLS, 16, 13, 14, 15, 17, SEP] and spans == [(1, 2), (2, 5), (5, 6)]


@pytest.mark.parametrize("f", ["mean", "max", "last"])
def test_static_vectors_decontextualised(f):
    with tasks.trace() as seen:
        got = static.static_vectors(["dog", "cat", "elephant"], FakeTokenizer(), fake_encode, pooling=f)
    assert ("task11_static.pooling", "pool_subwords") in seen
    np.testing.assert_allclose(got, _decontextualised(["dog", "cat", "elephant"], f), rtol=1e-12)


@pytest.mark.parametrize("f, g", [("mean", "mean"), ("last", "max"), ("max", "min")])
def test_static_vectors_aggregated_with_the_fallback(f, g):
    with tasks.trace() as seen:
        got = static.static_vectors(WORDS, FakeTokenizer(), fake_encode, SENTENCES, pooling=f, combine=g)
    assert ("task11_static.pooling", "aggregate_contexts") in seen
    assert got.shape == (N_STATES, len(WORDS), C)
    np.testing.assert_allclose(got[:, 3], _decontextualised(WORDS, f)[:, 3], rtol=1e-12)   # zebra: the fallback
    assert not np.allclose(got[:, :3], _decontextualised(WORDS, f)[:, :3])
    np.testing.assert_allclose(got, _aggregated(WORDS, SENTENCES, f, g), rtol=1e-12)


def test_similarity_scores_auc_and_gap():
    words = ["a", "b", "c", "d"]
    vecs = np.array([[1.0, 0], [0.9, 0.1], [0, 1.0], [0.1, 0.9]])
    perfect = static.similarity_scores(vecs, words, [("a", "b", 1), ("c", "d", 1), ("a", "c", 0), ("b", "d", 0)])
    assert perfect["auc"] == 1.0 and perfect["gap"] > 0.5
    flipped = static.similarity_scores(vecs, words, [("a", "b", 0), ("c", "d", 0), ("a", "c", 1), ("b", "d", 1)])
    assert flipped["auc"] == 0.0 and flipped["gap"] < 0
    with pytest.raises(ConfigError):
        static.similarity_scores(vecs, words, [("a", "b", 1)])


def test_report_table_and_plot(tiny, tmp_path):
    model, tok, sentences = tiny
    pairs = word_similarity_pairs(rng=np.random.default_rng(2), n_pairs=40)
    report = static.static_report(model.bert, tok, sentences[:60], pairs, poolings=("mean", "last"))
    rows = report["rows"]
    assert len(rows) == 2 * 2 * 3                                  # modes × poolings × layers 0..2
    assert all(0 <= r["auc"] <= 1 for r in rows)
    assert report["n_words_seen"] > 0 and report["n_layers"] == 2
    table = static.markdown_table(report)
    assert table.splitlines()[0] == "| mode | f | layer 0 | layer 1 | layer 2 |"
    assert len(table.splitlines()) == 2 + 4
    path = static.plot_report(report, tmp_path / "s.png")
    assert (tmp_path / "s.png").stat().st_size > 1000 and path.endswith("s.png")


def test_embed_static_command(tiny, tmp_path, capsys):
    from minilm.checkpoint import model_meta, save_checkpoint
    from minilm.cli import main
    model, tok, _ = tiny
    ckpt = tmp_path / "bert.npz"
    save_checkpoint(ckpt, model=model, meta={"family": "bert", **model_meta(model, model.config)}, tokenizer=tok)
    png = tmp_path / "static.png"
    assert main(["embed", "--static", "--checkpoint", str(ckpt), "--sentences", "40", "--pairs", "20",
                 "--pooling", "mean", "--out", str(png), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["mode"] for r in out["rows"]} == {"decontextualised", "aggregated"} and png.exists()
    assert main(["embed", "--static", "--checkpoint", str(ckpt), "--sentences", "40", "--pairs", "20",
                 "--pooling", "mean", "max", "--out", str(png)]) == 0
    text = capsys.readouterr().out
    assert "| aggregated | max |" in text and "| decontextualised | mean |" in text


def test_embed_without_static_explains(capsys):
    from minilm.cli import main
    assert main(["embed"]) == 1
    assert "--static" in capsys.readouterr().err
