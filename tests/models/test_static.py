"""Static word vectors (minilm/downstream/static.py) and ``minilm embed --static`` on a tiny BERT."""
import json

import numpy as np
import pytest

from autograd.errors import ConfigError
from minilm.downstream import static
from minilm.data import synthetic_corpus, word_similarity_pairs
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.tokenizers import WordPieceTokenizer


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
