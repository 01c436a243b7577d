"""Real checkpoints of every family: tiny random transformers models (tests/data/hf/, written by
tools/make_hf_fixtures.py) → ``load_pretrained`` → ``hf_logits`` equals what transformers returned,
and the tokenizer gives transformers' ids. No PyTorch or transformers needed, except by the one
test that re-derives the fixtures with them (skipped when they are absent)."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograd.errors import CheckpointError, ShapeError
from minilm.pretrained import hf_logits, load_pretrained
from tests.models.hf_fixture_tool import fixture_tool

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hf"
FIXTURES = ["gpt2", "bert", "roberta", "distilbert", "electra-discriminator", "electra-generator", "bart",
            "t5", "t5-v1_1"]
TOLERANCE = 1e-4   # max abs, float32 (the acceptance bar; measured: ≤ 1e-5)
NFKC_CASES = ["ﬁne ① ｆｕｌｌ　ｗｉｄｔｈ Ⅻ ™ ½ ㎞", "e\u0301 a\u0308 n\u0303 ḱ\u0323", "👨\u200d👩\u200d👧 🇹🇼 👍🏽",
              "Ｈｅｌｌｏ，　ｗｏｒｌｄ！", "x\u00a0y\u2003z", "tab\there  and   runs", "\u3000全角スペース", "ﾊﾝｶｸ ｶﾀｶﾅ",
              "Å Ω K"]   # the same list as tools/make_hf_fixtures_spm.py's (a student release has no tools/make_*)


def expected(name: str) -> dict:
    with np.load(DATA / name / "expected.npz", allow_pickle=False) as f:
        return dict(f)


@pytest.mark.parametrize("name", FIXTURES)
def test_logits_equal_transformers_on_a_padded_batch(name):
    model, _ = load_pretrained(DATA / name)
    e = expected(name)
    assert (e["attention_mask"] == 0).any(), "the fixture batch should hold padding"
    got = hf_logits(model, e["input_ids"], e["attention_mask"], e.get("decoder_input_ids"))
    assert got.shape == e["logits"].shape, f"{name}: logits {got.shape}, transformers gave {e['logits'].shape}"
    diff = float(np.abs(got - e["logits"]).max())
    assert diff < TOLERANCE, (f"{name}: minilm's logits differ from transformers' by {diff:.2e} (max abs) on the "
                              "padded batch: a switch (GELU form, position offset, bias, scaling) or a name is off")


@pytest.mark.parametrize("name", FIXTURES)
def test_tokenizer_ids_equal_transformers(name):
    _, tok = load_pretrained(DATA / name)
    ref = json.loads((DATA / name / "tokens.json").read_text(encoding="utf-8"))
    for text, ids in zip(ref["texts"], ref["input_ids"]):
        got = tok.encode(text, add_special_tokens=True)
        assert got == ids, f"{name}: {text!r} → {got}, transformers gave {ids}"


@pytest.mark.parametrize("name", ["gpt2", "bert", "roberta", "bart", "t5"])
def test_tokenizer_ids_equal_transformers_line_by_line(name):
    """514 lines: standard-library docstrings, then CJK, emoji, combining marks, whitespace runs,
    special-token strings and the empty string (tests/data/hf/lines.npz)."""
    from minilm.tokenizers.hf_json import load_hf_tokenizer
    tok = load_hf_tokenizer(DATA / name)
    with np.load(DATA / "lines.npz", allow_pickle=False) as f:
        texts, ids, off = f["texts"], f[f"{name}_ids"], f[f"{name}_offsets"]
    assert len(texts) >= 500
    bad = [(str(t), tok.encode(str(t), add_special_tokens=True), ids[off[k]:off[k + 1]].tolist())
           for k, t in enumerate(texts)]
    bad = [b for b in bad if b[1] != b[2]]
    assert not bad, f"{name}: {len(bad)} of {len(texts)} lines differ, first {bad[0][0]!r}: {bad[0][1]} vs {bad[0][2]}"


def test_sentencepiece_precompiled_normalizer_gives_transformers_ids(tmp_path):
    """T5's tokenizer as transformers converts a SentencePiece model (nmt_nfkc: the ``Precompiled``
    charsmap, full-width forms, ligatures, compatibility characters, combining marks), on the 514
    lines and NFKC cases (tests/data/hf/spm/, made by tools/make_hf_fixtures.py)."""
    import gzip
    from minilm.tokenizers.hf_json import load_hf_tokenizer
    spm = DATA / "spm"
    (tmp_path / "tokenizer.json").write_bytes(gzip.decompress((spm / "tokenizer.json.gz").read_bytes()))
    shutil.copy(spm / "tokenizer_config.json", tmp_path / "tokenizer_config.json")
    tok = load_hf_tokenizer(tmp_path)
    with np.load(DATA / "lines.npz", allow_pickle=False) as f:
        texts = [str(t) for t in f["texts"]]
    with np.load(spm / "ids.npz", allow_pickle=False) as f:
        ids, off = f["ids"], f["offsets"]
    texts += NFKC_CASES
    assert len(texts) == len(off) - 1
    bad = [(t, tok.encode(t, add_special_tokens=True), ids[off[k]:off[k + 1]].tolist()) for k, t in enumerate(texts)]
    bad = [b for b in bad if b[1] != b[2]]
    assert not bad, f"{len(bad)} of {len(texts)} lines differ, first {bad[0][0]!r}: {bad[0][1]} vs {bad[0][2]}"


def test_the_fixture_batch_is_the_tokenizers_own():
    """The padded batch of each fixture is what its tokenizer makes of the texts (so the logits test
    is on real tokenizer output, not arbitrary ids)."""
    _, tok = load_pretrained(DATA / "roberta")
    ref = json.loads((DATA / "roberta" / "tokens.json").read_text(encoding="utf-8"))
    e = expected("roberta")
    for row, mask, ids in zip(e["input_ids"], e["attention_mask"], ref["input_ids"]):
        assert row[mask.astype(bool)].tolist() == ids


def test_roberta_mask_takes_the_space_before_it():
    _, tok = load_pretrained(DATA / "roberta")
    with_space = tok.encode("the <mask>", add_special_tokens=False)
    assert with_space[-1] == tok.mask_id
    assert with_space == tok.encode("the<mask>", add_special_tokens=False), \
        "RoBERTa's <mask> has lstrip: the space before it belongs to it, not to a 'Ġ' token"


def test_roberta_positions_start_after_the_pad_row():
    model, _ = load_pretrained(DATA / "roberta")
    cfg = model.config
    assert (cfg.position_offset, cfg.pad_token_id, cfg.activation) == (2, 1, "gelu_exact")


def test_a_pickle_checkpoint_is_refused_with_the_conversion(tmp_path):
    shutil.copy(DATA / "bert" / "config.json", tmp_path / "config.json")
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    with pytest.raises(CheckpointError, match="pickle.*\n.*safetensors"):
        load_pretrained(tmp_path)


def test_an_unknown_model_type_is_named(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "xlm"}))   # xlnet loads now (issue 17)
    with pytest.raises(CheckpointError, match="model_type 'xlm'"):
        load_pretrained(tmp_path)


def test_seq2seq_needs_decoder_ids_and_encoders_refuse_them():
    t5, _ = load_pretrained(DATA / "t5")
    bert, _ = load_pretrained(DATA / "bert")
    ids = np.array([[5, 6, 7]])
    with pytest.raises(ShapeError, match="needs decoder_input_ids"):
        hf_logits(t5, ids)
    with pytest.raises(ShapeError, match="not an encoder-decoder"):
        hf_logits(bert, ids, decoder_input_ids=ids)
    assert hf_logits(bert, ids).shape == (1, 3, bert.config.vocab_size)   # no mask: all tokens real


def test_a_file_with_an_unknown_key_is_refused(tmp_path):
    from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(DATA / "distilbert" / f, tmp_path / f)
    arrays, _ = read_safetensors(DATA / "distilbert" / "model.safetensors")
    arrays["distilbert.extra_head.weight"] = np.zeros((2, 2), dtype=np.float32)
    write_safetensors(tmp_path / "model.safetensors", arrays, {"format": "pt"})
    with pytest.raises(CheckpointError, match="unexpected keys.*extra_head"):
        load_pretrained(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None,
                    reason="re-deriving the fixtures needs torch and transformers (tools/make_hf_fixtures.py)")
def test_fixtures_are_what_transformers_computes(tmp_path):
    """The stored arrays are what transformers computes from the stored folders, and minilm's
    exported BART / T5 folders give transformers the same logits."""
    make_hf_fixtures = fixture_tool()
    for name in FIXTURES:
        diff, same = make_hf_fixtures.check(name, DATA / name)
        assert diff < 1e-5 and same, f"{name}: transformers now gives logits {diff:.2e} away / other ids"
    with np.load(DATA / "lines.npz", allow_pickle=False) as f:
        assert make_hf_fixtures.lines_match(DATA, dict(f)), "transformers' ids of lines.npz changed"
    assert make_hf_fixtures.NFKC_CASES == NFKC_CASES
    if importlib.util.find_spec("sentencepiece") is not None:
        assert make_hf_fixtures.spm_match(DATA), "transformers' ids of spm/ changed"
    for name, diff in make_hf_fixtures.export_check(tmp_path).items():
        assert diff < TOLERANCE, f"export {name}: transformers' logits differ by {diff:.2e}"


def test_t5_v1_1_reads_an_untied_head(tmp_path):
    """A released T5 v1.1 file has an ``lm_head.weight`` of its own (transformers 5 ties it on save,
    so the fixture has none): with a head of 2·E the logits double."""
    from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(DATA / "t5-v1_1" / f, tmp_path / f)
    arrays, _ = read_safetensors(DATA / "t5-v1_1" / "model.safetensors")
    arrays["lm_head.weight"] = 2 * arrays["shared.weight"]
    write_safetensors(tmp_path / "model.safetensors", arrays, {"format": "pt"})
    model, _ = load_pretrained(tmp_path)
    e = expected("t5-v1_1")
    got = hf_logits(model, e["input_ids"], e["attention_mask"], e["decoder_input_ids"])
    np.testing.assert_allclose(got, 2 * e["logits"], atol=2 * TOLERANCE)
    assert (model.config.ffn, model.config.d_kv, model.config.tie_word_embeddings) == ("gated-gelu", 16, False)


def test_legacy_layer_norm_names_load(tmp_path):
    """TensorFlow-era files call a LayerNorm's parameters gamma / beta (as transformers accepts)."""
    from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(DATA / "roberta" / f, tmp_path / f)
    arrays, _ = read_safetensors(DATA / "roberta" / "model.safetensors")
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
               for k, v in arrays.items()}
    assert renamed.keys() != arrays.keys()
    write_safetensors(tmp_path / "model.safetensors", renamed, {"format": "pt"})
    model, _ = load_pretrained(tmp_path, tokenizer=False)
    e = expected("roberta")
    np.testing.assert_allclose(hf_logits(model, e["input_ids"], e["attention_mask"]), e["logits"], atol=TOLERANCE)


def _fresh_seq2seq(kind: str):
    """A minilm-built BART or T5 (the teaching defaults) with every weight moved off its init."""
    from minilm.models.bart import Bart, BartConfig
    from minilm.models.t5 import T5, T5Config
    rng = np.random.default_rng(3)
    if kind == "bart":
        model = Bart(BartConfig(vocab_size=50, n_embd=16, n_head=2, n_layer=2, n_decoder_layer=1, max_positions=20),
                     rng=rng)
    elif kind == "t5":
        model = T5(T5Config(vocab_size=50, n_embd=16, n_head=2, n_layer=1, num_buckets=8, max_distance=16), rng=rng)
    else:   # T5 v1.1's switches
        model = T5(T5Config(vocab_size=50, n_embd=16, n_head=2, n_layer=2, n_decoder_layer=1, num_buckets=8,
                            max_distance=16, ffn="gated-gelu", d_kv=12, tie_word_embeddings=False), rng=rng)
    for p in model.parameters():
        p.data += rng.normal(0, 0.05, p.shape).astype(p.data.dtype)
    return model.eval()


@pytest.mark.parametrize("kind", ["bart", "t5", "t5-v1_1"])
def test_export_then_load_pretrained_gives_the_same_logits(tmp_path, kind):
    """A model minilm trains (BART with positions from row 0 and the tanh GELU; T5 v1.0 and v1.1)
    → ``export`` → ``load_pretrained``: the logits do not move (transformers reads the same folder:
    docs/pretrained.md, "Every family")."""
    from minilm.pretrained import export
    model = _fresh_seq2seq(kind)
    ids = np.array([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]])
    mask = (ids != 0).astype(np.int64)
    dec = np.array([[3, 11, 12], [3, 13, 14]])
    before = hf_logits(model, ids, mask, dec)
    back, tok = load_pretrained(export(model, tmp_path / kind))
    assert tok is None
    np.testing.assert_allclose(hf_logits(back, ids, mask, dec), before, atol=1e-5)


def test_a_malformed_charsmap_is_refused():
    import base64
    import struct

    from autograd.errors import TokenizerError
    from minilm.tokenizers.precompiled import PrecompiledCharsmap
    for blob in (b"", struct.pack("<I", 1000) + b"\0" * 8, struct.pack("<I", 6) + b"\0" * 8):
        with pytest.raises(TokenizerError, match="charsmap|trie size"):
            PrecompiledCharsmap(blob)
    units = struct.pack("<4I", 1 << 10, 0, 0, 0)         # the root points at unit 1; "a" walks off the end
    cmap = PrecompiledCharsmap(struct.pack("<I", len(units)) + units + b"x\0")
    with pytest.raises(TokenizerError, match="points at unit 96 of 4"):
        cmap.normalize("a")
    assert cmap.normalize("\x02") == "\x02"               # unit 3: label 0 ≠ 2, no entry, copied
    with pytest.raises(TokenizerError, match="not base64"):
        PrecompiledCharsmap.from_base64("@@not base64@@")
    assert PrecompiledCharsmap.from_base64(base64.b64encode(struct.pack("<I", 0)).decode()).normalize("é") == "é"


def test_unigram_viterbi_takes_the_most_probable_cut():
    from minilm.tokenizers.unigram import unigram_segment
    scores = {"▁hug": -2.0, "s": -1.0, "▁hugs": -4.0, "▁": -1.0, "h": -3.0, "u": -3.0, "g": -3.0, "<unk>": 0.0}
    assert unigram_segment("▁hugs", scores) == ["▁hug", "s"]            # −3 beats ▁hugs (−4) and ▁ h u g s
    assert unigram_segment("▁hugzz", scores, unk_token="<unk>") == ["▁hug", "<unk>"]   # unknowns fused
