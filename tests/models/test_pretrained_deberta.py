"""Real DeBERTa checkpoints: v1 (``model_type="deberta"``) and v3-like v2 (``"deberta-v2"``) fixtures
(tests/data/hf/deberta*, written by tools/make_hf_fixtures.py) → ``load_pretrained`` → ``hf_logits``
equals transformers' ``DebertaForMaskedLM`` / ``DebertaV2ForMaskedLM``, and the tokenizers (GPT-2 byte
BPE; SentencePiece Unigram) give transformers' ids. Export → load_pretrained keeps the logits; the
export → transformers test runs only where transformers and torch are installed."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograd import Tensor
from autograd.errors import CheckpointError, ConfigError
from minilm.models.deberta import DebertaConfig, DebertaForMaskedLM
from minilm.models.deberta_positions import log_bucket, relative_index, slot_tables
from minilm.pretrained import export, hf_logits, load_pretrained
from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
from tests.models.hf_fixture_tool import fixture_tool

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
FIXTURES = ["deberta", "deberta-v2"]
TOLERANCE = 1e-4   # max abs, float32 (the bar; measured: 2.2e-6 (v1), 2.4e-6 (v2))
HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None


def expected(name: str) -> dict:
    with np.load(DATA / name / "expected.npz", allow_pickle=False) as f:
        return dict(f)


def copy_folder(name: str, tmp_path: Path, arrays: dict | None = None, config: dict | None = None) -> Path:
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(DATA / name / f, tmp_path / f)
    hf = json.loads((DATA / name / "config.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({**hf, **(config or {})}), encoding="utf-8")
    if arrays is None:
        arrays, _ = read_safetensors(DATA / name / "model.safetensors")
    write_safetensors(tmp_path / "model.safetensors", arrays, {"format": "pt"})
    return tmp_path


@pytest.mark.parametrize("name", FIXTURES)
def test_logits_equal_transformers_on_a_padded_batch(name):
    model, _ = load_pretrained(DATA / name)
    e = expected(name)
    assert (e["attention_mask"] == 0).any(), "the fixture batch should hold padding"
    assert e["input_ids"].shape[1] > 2 * model.config.max_relative_positions, "distances beyond k should occur"
    got = hf_logits(model, e["input_ids"], e["attention_mask"])
    assert got.shape == e["logits"].shape
    diff = float(np.abs(got - e["logits"]).max())
    assert diff < TOLERANCE, f"{name}: minilm's logits differ from transformers' by {diff:.2e} on the padded batch"


@pytest.mark.parametrize("name", FIXTURES)
def test_tokenizer_ids_equal_transformers(name):
    _, tok = load_pretrained(DATA / name)
    ref = json.loads((DATA / name / "tokens.json").read_text(encoding="utf-8"))
    for text, ids in zip(ref["texts"], ref["input_ids"]):
        assert tok.encode(text, add_special_tokens=True) == ids, f"{name}: {text!r}"
    e = expected(name)
    for row, mask, ids in zip(e["input_ids"], e["attention_mask"], ref["input_ids"]):
        assert row[mask.astype(bool)].tolist() == ids       # the batch is the tokenizer's own output


@pytest.mark.parametrize("name", FIXTURES)
def test_tokenizer_ids_equal_transformers_line_by_line(name):
    """The 514 lines of lines.npz (docstrings, CJK, emoji, combining marks, whitespace runs, the empty
    string) and the NFKC cases: v1's byte BPE and v2's Unigram (Replace, NFC, Strip, Metaspace 'always')."""
    from .test_pretrained_families import NFKC_CASES
    _, tok = load_pretrained(DATA / name)
    with np.load(DATA / "lines.npz", allow_pickle=False) as f:
        texts = [str(t) for t in f["texts"]] + NFKC_CASES
    with np.load(DATA / name / "line_ids.npz", allow_pickle=False) as f:
        ids, off = f["ids"], f["offsets"]
    assert len(texts) == len(off) - 1 >= 500
    bad = [(t, tok.encode(t, add_special_tokens=True), ids[off[k]:off[k + 1]].tolist()) for k, t in enumerate(texts)]
    bad = [b for b in bad if b[1] != b[2]]
    assert not bad, f"{name}: {len(bad)} of {len(texts)} lines differ, first {bad[0][0]!r}: {bad[0][1]} vs {bad[0][2]}"


def test_the_loader_sets_the_released_switches():
    v1, _ = load_pretrained(DATA / "deberta", tokenizer=False)
    v2, _ = load_pretrained(DATA / "deberta-v2", tokenizer=False)
    for m in (v1, v2):
        c = m.config
        assert (c.rel_index, c.emd, c.padding, c.activation) == ("released", False, "released", "gelu_exact")
    assert (v1.config.rel_norm, v1.config.position_biased_input, v1.config.embedding_size) == ("none", True, 16)
    assert not v1.config.share_att_key and v1.config.position_buckets == 0
    c = v2.config
    assert (c.rel_norm, c.share_att_key, c.position_buckets, c.max_relative_positions) == ("layer_norm", True, 4, 8)
    assert c.rel_span == 4 and v2.rel_embeddings.weight.shape == (8, 32)


@pytest.mark.parametrize("name", FIXTURES)
def test_the_paper_index_would_be_measurably_wrong(name):
    """The fixtures tell the forms apart: with the paper's position-to-content index (or, v3, without
    the log buckets) the logits move far beyond the tolerance (measured 0.79 and 3.1); minilm's own
    pad-row handling changes the padded positions only."""
    model, _ = load_pretrained(DATA / name, tokenizer=False)
    e = expected(name)
    real = e["attention_mask"].astype(bool)
    model.config.rel_index = "paper"
    paper = hf_logits(model, e["input_ids"], e["attention_mask"])
    assert np.abs(paper - e["logits"])[real].max() > 100 * TOLERANCE
    model.config.rel_index, model.config.padding = "released", "keys"
    keys = hf_logits(model, e["input_ids"], e["attention_mask"])
    assert np.abs(keys - e["logits"])[real].max() < TOLERANCE
    assert np.abs(keys - e["logits"])[~real].max() > 100 * TOLERANCE
    if model.config.position_buckets:   # the same 8-row table indexed by plain clipping at ±4
        model.config.position_buckets, model.config.max_relative_positions = 0, 4
        plain = hf_logits(model, e["input_ids"], e["attention_mask"])
        assert np.abs(plain - e["logits"])[real].max() > 100 * TOLERANCE


def _rename_head(arrays: dict, to_legacy: bool) -> dict:
    pairs = {"lm_predictions.lm_head.dense.": "cls.predictions.transform.dense.",
             "lm_predictions.lm_head.LayerNorm.": "cls.predictions.transform.LayerNorm.",
             "lm_predictions.lm_head.bias": "cls.predictions.bias"}
    out = {}
    for key, value in arrays.items():
        for cur, legacy in pairs.items():
            src, dst = (cur, legacy) if to_legacy else (legacy, cur)
            if key.startswith(src):
                key = dst + key[len(src):]
        if not to_legacy and key.startswith("cls.predictions.decoder."):
            continue
        out[key] = value
    if to_legacy:   # an untied save also writes the decoder, a copy of the word embeddings and the bias
        out["cls.predictions.decoder.weight"] = out["deberta.embeddings.word_embeddings.weight"]
        out["cls.predictions.decoder.bias"] = out["cls.predictions.bias"]
    return out


@pytest.mark.parametrize("name", FIXTURES)
def test_both_head_names_load(tmp_path, name):
    """Released checkpoints name the head ``lm_predictions.lm_head.*``; transformers' class with
    ``legacy=true`` (its default) ``cls.predictions.*``. Either name gives the same logits."""
    arrays, _ = read_safetensors(DATA / name / "model.safetensors")
    legacy = any(k.startswith("cls.predictions.") for k in arrays)
    renamed = _rename_head(arrays, to_legacy=not legacy)
    assert renamed.keys() != arrays.keys()
    model, _ = load_pretrained(copy_folder(name, tmp_path, renamed), tokenizer=False)
    e = expected(name)
    np.testing.assert_allclose(hf_logits(model, e["input_ids"], e["attention_mask"]), e["logits"], atol=TOLERANCE)


def test_v3_extras_are_skipped_and_unknown_keys_refused(tmp_path):
    """deberta-v3 files carry a replaced-token head (``mask_predictions.*``) and an unused absolute
    table; transformers skips both, and so does minilm. Anything else unknown is refused."""
    arrays, _ = read_safetensors(DATA / "deberta-v2" / "model.safetensors")
    extra = {**arrays, "mask_predictions.dense.weight": np.zeros((32, 32), np.float32),
             "mask_predictions.classifier.bias": np.zeros(1, np.float32),
             "deberta.embeddings.position_embeddings.weight": np.zeros((40, 32), np.float32)}
    model, _ = load_pretrained(copy_folder("deberta-v2", tmp_path, extra), tokenizer=False)
    e = expected("deberta-v2")
    np.testing.assert_allclose(hf_logits(model, e["input_ids"], e["attention_mask"]), e["logits"], atol=TOLERANCE)
    extra["deberta.encoder.conv.conv.weight"] = np.zeros((32, 32, 3), np.float32)
    write_safetensors(tmp_path / "model.safetensors", extra, {"format": "pt"})
    with pytest.raises(CheckpointError, match="unexpected keys.*conv"):
        load_pretrained(tmp_path, tokenizer=False)


@pytest.mark.parametrize("change, message", [
    ({"conv_kernel_size": 3}, "conv_kernel_size.*convolution"),
    ({"relative_attention": False}, "relative_attention is false"),
    ({"pos_att_type": "p2p"}, "pos_att_type"),
    ({"type_vocab_size": 2}, "type_vocab_size"),
    ({"hidden_act": "relu"}, "hidden_act"),
])
def test_configs_minilm_cannot_compute_are_refused(tmp_path, change, message):
    with pytest.raises(CheckpointError, match=message):
        load_pretrained(copy_folder("deberta-v2", tmp_path, config=change), tokenizer=False)


def test_a_file_without_an_mlm_head_is_refused(tmp_path):
    arrays, _ = read_safetensors(DATA / "deberta" / "model.safetensors")
    body = {k: v for k, v in arrays.items() if not k.startswith("cls.")}
    with pytest.raises(CheckpointError, match="no MLM head"):
        load_pretrained(copy_folder("deberta", tmp_path, body), tokenizer=False)


def test_log_buckets_match_transformers():
    """make_log_bucket_position(r, 4, 8) and (256, 512) of transformers 5.24, at a few distances."""
    r = np.array([-40, -9, -8, -7, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 7, 8, 9, 40])
    assert log_bucket(r, 4, 8).tolist() == [-5, -4, -4, -3, -3, -3, -3, -2, -1, 0, 1, 2, 3, 3, 3, 4, 4, 5]
    r = np.array([0, 127, 128, 129, 200, 511, 512, 1000, -1000])
    assert log_bucket(r, 256, 512).tolist() == [0, 127, 128, 129, 169, 255, 256, 317, -317]


def test_paper_and_released_indices():
    cfg = DebertaConfig(vocab_size=10, max_relative_positions=3, n_embd=8, n_head=2)
    c2p, p2c = relative_index(5, 5, cfg)
    i, j = np.meshgrid(np.arange(5), np.arange(5), indexing="ij")
    assert (c2p == np.clip(i - j + 3, 0, 5)).all() and (p2c == np.clip(j - i + 3, 0, 5)).all()
    cfg.rel_index = "released"
    c2p_r, p2c_r = relative_index(5, 5, cfg)
    assert (c2p_r == c2p).all() and (p2c_r == c2p).all()


@pytest.mark.parametrize("switches", [dict(rel_index="released"), dict(position_buckets=4, max_relative_positions=8),
                                      dict(rel_index="released", position_buckets=4, max_relative_positions=8),
                                      dict(rel_index="released", max_relative_positions=9)])
def test_the_graded_slot_computes_every_form_from_reindexed_tables(switches):
    """The library never repeats Task 12.4: any switch setting goes through ``deberta_scores`` with
    tables of 2T rows (``slot_tables``). Checked against the terms written out entry by entry."""
    from minilm.models.deberta import deberta_scores
    rng = np.random.default_rng(0)
    cfg = DebertaConfig(**{**dict(vocab_size=10, max_relative_positions=3, n_embd=8, n_head=2), **switches})
    T, d, K = 9, 4, cfg.rel_span
    q, k = rng.normal(size=(2, 2, T, d)), rng.normal(size=(2, 2, T, d))
    qr, kr = rng.normal(size=(2, 2 * K, d)), rng.normal(size=(2, 2 * K, d))
    got = deberta_scores(Tensor(q), Tensor(k), *slot_tables(Tensor(qr), Tensor(kr), T, cfg))[0].data
    c2p, p2c = relative_index(T, T, cfg)
    want = np.zeros((2, 2, T, T))
    for i in range(T):
        for j in range(T):
            want[:, :, i, j] = (q[:, :, i] * k[:, :, j]).sum(-1) + (q[:, :, i] * kr[None, :, c2p[i, j]]).sum(-1) \
                + (k[:, :, j] * qr[None, :, p2c[i, j]]).sum(-1)
    np.testing.assert_allclose(got, want / np.sqrt(3 * d), atol=1e-5)


def test_the_teaching_model_is_unchanged_by_default():
    c = DebertaConfig(vocab_size=10)
    assert (c.rel_index, c.emd, c.rel_norm, c.position_buckets, c.pos_att_type, c.activation, c.padding) == \
        ("paper", True, "layer_norm", 0, ("c2p", "p2c"), "gelu", "keys")
    with pytest.raises(ConfigError, match="rel_index"):
        DebertaConfig(vocab_size=10, rel_index="other")
    with pytest.raises(ConfigError, match="pos_att_type"):
        DebertaConfig(vocab_size=10, pos_att_type=("p2p",))
    with pytest.raises(ConfigError, match="max_relative_positions > 3"):
        DebertaConfig(vocab_size=10, position_buckets=4, max_relative_positions=3)


RELEASED = dict(rel_index="released", emd=False, activation="gelu_exact", padding="released")
VARIANTS = {   # each a minilm DeBERTa that transformers can compute
    "v3-like": dict(share_att_key=True, position_buckets=4, max_relative_positions=8),
    "separate-keys": dict(rel_norm="none", position_biased_input=True),
    "c2p-only": dict(pos_att_type=("c2p",), embedding_size=12),
}


def _fresh(variant: str) -> DebertaForMaskedLM:
    rng = np.random.default_rng(5)
    cfg = DebertaConfig(**{**dict(vocab_size=40, max_position_embeddings=20, max_relative_positions=3, n_layer=2,
                                  n_head=2, n_embd=16, n_inner=24), **RELEASED, **VARIANTS[variant]})
    model = DebertaForMaskedLM(cfg, rng=rng)
    for p in model.parameters():   # large weights, so that a wrong name or index shows
        p.data += rng.normal(0, 0.2, p.shape).astype(p.data.dtype)
    return model.eval()


BATCH = np.array([[2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 3], [2, 14, 15, 16, 3, 0, 0, 0, 0, 0, 0]])


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_export_then_load_pretrained_gives_the_same_logits(tmp_path, variant):
    model = _fresh(variant)
    mask = (BATCH != 0).astype(np.int64)
    before = hf_logits(model, BATCH, mask)
    folder = export(model, tmp_path / variant)
    assert json.loads((folder / "config.json").read_text())["model_type"] == "deberta-v2"
    back, tok = load_pretrained(folder)
    assert tok is None
    np.testing.assert_allclose(hf_logits(back, BATCH, mask), before, atol=1e-5)


def test_the_paper_form_is_not_exported(tmp_path):
    model = DebertaForMaskedLM(DebertaConfig(vocab_size=20, n_embd=16, n_head=2), rng=np.random.default_rng(0))
    with pytest.raises(ConfigError, match="rel_index='paper'.*emd=True"):
        export(model, tmp_path / "x")


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="needs torch and transformers (tools/make_hf_fixtures.py)")
def test_transformers_agrees_with_the_fixtures_and_the_exports(tmp_path):
    """The stored arrays are what transformers computes from the stored folders, and transformers'
    AutoModelForMaskedLM gives minilm's logits on its exported folders (a loaded v1 / v3 fixture written
    back in the v2 format included)."""
    import torch
    import transformers as tf
    make_hf_fixtures = fixture_tool()
    for name in FIXTURES:
        diff, same = make_hf_fixtures.check(name, DATA / name)
        assert diff < 1e-5 and same, f"{name}: transformers now gives logits {diff:.2e} away / other ids"
        assert make_hf_fixtures.xlnet_lines_match(DATA / name), f"{name}: transformers' ids of line_ids.npz changed"
    mask = (BATCH != 0).astype(np.int64)
    for variant in VARIANTS:
        model = _fresh(variant)
        ours = hf_logits(model, BATCH, mask)
        theirs = tf.AutoModelForMaskedLM.from_pretrained(export(model, tmp_path / variant)).eval()
        with torch.no_grad():
            logits = theirs(input_ids=torch.tensor(BATCH), attention_mask=torch.tensor(mask)).logits.numpy()
        diff = float(np.abs(logits - ours).max())
        assert diff < TOLERANCE, f"export {variant}: transformers' logits differ by {diff:.2e}"
    for name in FIXTURES:   # a loaded v1 or v3 folder, written back in the v2 format, keeps its logits
        model, _ = load_pretrained(DATA / name, tokenizer=False)
        e = expected(name)
        theirs = tf.AutoModelForMaskedLM.from_pretrained(export(model, tmp_path / f"re-{name}")).eval()
        with torch.no_grad():
            logits = theirs(input_ids=torch.tensor(e["input_ids"]),
                            attention_mask=torch.tensor(e["attention_mask"])).logits.numpy()
        diff = float(np.abs(logits - e["logits"]).max())
        assert diff < TOLERANCE, f"{name} → export → transformers: logits differ by {diff:.2e}"


def test_the_released_form_trains():
    """Every switch is made of Tensor operations: the gradient reaches every parameter."""
    model = _fresh("v3-like").train()
    labels = np.where(BATCH > 4, BATCH, -100)
    out = model(BATCH, (BATCH != 0).astype(np.int64), labels)
    out["loss"].backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or not np.abs(p.grad).sum() > 0]
    assert not missing, f"no gradient for {missing}"
