"""SentencePiece ``.model`` files read by hand (minilm/tokenizers/sentencepiece_model.py) and encoded
(spm_tokenizer.py): the ids equal ``sentencepiece``'s, id for id, on 520 standard-library docstring
lines and 22 hard cases, for
a Unigram model with a compiled rule table and user-defined pieces, a BPE model with byte fallback
and kept whitespace runs, and a Unigram model with the identity normaliser and no dummy prefix
(tests/data/spm/, made by tools/make_spm_fixtures.py). No ``sentencepiece`` needed, except by the
test that re-creates the fixtures (skipped without it)."""
from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import sys
from pathlib import Path

import pytest

from autograd.errors import TokenizerError
from minilm.tokenizers.hf_json import load_hf_tokenizer
from minilm.tokenizers.sentencepiece_model import parse_model
from minilm.tokenizers.spm_tokenizer import SentencePieceTokenizer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "spm"
MODELS = ("unigram", "bpe", "unigram_raw")


def stored() -> dict:
    return json.loads((DATA / "expected.json").read_text(encoding="utf-8"))


def mismatches(tok, texts, rows) -> list[str]:
    return [f"{t!r}: minilm {tok.tokenize(t)} gives {tok.encode(t)}, sentencepiece {ids}"
            for t, ids in zip(texts, rows) if tok.encode(t) != ids]


@pytest.mark.parametrize("name", MODELS)
def test_ids_equal_sentencepiece_line_by_line(name):
    expected = stored()
    assert len(expected["texts"]) >= 540
    tok = SentencePieceTokenizer.from_file(DATA / f"{name}.model")
    bad = mismatches(tok, expected["texts"], expected[name])
    assert not bad, (f"{len(bad)} of {len(expected['texts'])} texts differ from sentencepiece, e.g. "
                     + "; ".join(bad[:3]))


def test_the_fixtures_cover_the_switches():
    """Each model exercises what it is there for (else the comparison above proves less than it says)."""
    uni, bpe, raw = (parse_model((DATA / f"{n}.model").read_bytes()) for n in MODELS)
    assert (uni.model_type, uni.normalizer) == ("unigram", "user_defined")
    assert (bpe.model_type, bpe.byte_fallback) == ("bpe", True)
    assert 0 < len(uni.charsmap) < 10_000 and not bpe.charsmap and not raw.charsmap
    assert (bpe.remove_extra_whitespaces, raw.add_dummy_prefix, raw.remove_extra_whitespaces) == (False, False, False)
    assert [p for p, _, k in uni.pieces if k == 4] == ["<sep>", "<cls>"]
    expected = stored()
    ids = {n: [i for row in expected[n] for i in row] for n in MODELS}
    assert ids["unigram"].count(uni.unk_id) > 0 and ids["unigram_raw"].count(raw.unk_id) > 0
    assert sum(bpe.pieces[i][2] == 6 for i in ids["bpe"]) > 100          # byte pieces <0x..>
    tok = SentencePieceTokenizer.from_file(DATA / "unigram.model")
    assert tok.tokenize("ﬁne ① e\u0301") == ["▁f", "in", "e", "▁", "1", "▁", "é"]   # longest rule: e + U+0301 → é
    assert tok.tokenize("unknown ЖЖЖ")[-1:] == ["<unk>"]                  # three unknowns, one piece


def test_decode_gives_back_the_text():
    bpe = SentencePieceTokenizer.from_file(DATA / "bpe.model")
    for text in ("東京都 北京 서울", "emoji 🙂👍🏽", "a  b\tc"):
        assert bpe.decode(bpe.encode(text)) == text
    uni = SentencePieceTokenizer.from_file(DATA / "unigram.model")
    assert uni.decode(uni.encode("  the   quick fox ")) == "the quick fox"


def test_a_folder_with_spiece_model_gets_the_family_layout(tmp_path):
    """``load_hf_tokenizer`` (and so ``load_pretrained``) reads spiece.model when there is no
    tokenizer.json; the layout comes from tokenizer_config.json's class or config.json's model_type."""
    shutil.copy(DATA / "unigram.model", tmp_path / "spiece.model")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5"}))
    tok = load_hf_tokenizer(tmp_path)
    body = SentencePieceTokenizer.from_file(DATA / "unigram.model").encode("a cat")
    assert tok.encode("a cat", add_special_tokens=True) == body + [tok.eos_id]
    assert tok.token_to_id("<extra_id_0>") == tok.vocab_size - 1 == 400 + 99
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "XLNetTokenizer"}))
    xlnet = load_hf_tokenizer(tmp_path)
    ends = [xlnet.token_to_id("<sep>"), xlnet.token_to_id("<cls>")]
    assert xlnet.encode("a cat", add_special_tokens=True)[-2:] == ends
    assert xlnet.encode("``x''") == xlnet.encode('"x"')                  # XLNet's preprocess_text
    tok.save(tmp_path / "saved")
    back = load_hf_tokenizer(tmp_path / "saved")
    texts = stored()["texts"]
    assert [back.encode(t, add_special_tokens=True) for t in texts] == [tok.encode(t, add_special_tokens=True)
                                                                          for t in texts]


def test_load_pretrained_reads_the_model_file_of_a_checkpoint(tmp_path):
    from minilm.pretrained import load_pretrained
    hf = ROOT / "tests" / "data" / "hf" / "t5"
    for f in ("config.json", "model.safetensors"):
        shutil.copy(hf / f, tmp_path / f)
    shutil.copy(DATA / "unigram.model", tmp_path / "spiece.model")
    _, tok = load_pretrained(tmp_path)
    assert isinstance(tok, SentencePieceTokenizer) and tok.layout == "t5"


def _field(number: int, wire: int, payload: bytes) -> bytes:
    key = bytes([number << 3 | wire])
    return key + (bytes([len(payload)]) + payload if wire == 2 else payload)


def test_a_truncated_or_malformed_file_is_a_tokenizer_error(tmp_path, monkeypatch):
    raw = (DATA / "unigram.model").read_bytes()
    for cut in range(0, len(raw), 61):            # never another exception, whatever the cut
        try:
            parse_model(raw[:cut], "cut")
        except TokenizerError:
            pass
    minus_one = b"\xff" * 9 + b"\x01"             # an int32 -1: ten bytes of two's complement
    no_bos_eos = _field(2, 2, b"\xc8\x02" + minus_one + b"\xd0\x02" + minus_one)   # bos_id = eos_id = -1
    piece = _field(1, 2, _field(1, 2, b"<unk>") + _field(3, 0, b"\x02")) + no_bos_eos
    cases = {b"": "no pieces", b"\xff" * 12: "longer than 10 bytes", raw[:1] + b"\x7f" + raw[2:40]: "claims 127 bytes",
             b"\x0b\x00": "wire type 3", b"\x00\x01": "field number 0",
             _field(1, 2, _field(1, 2, b"\xff\xfe")): "not UTF-8", piece + _field(2, 2, b"\xc0\x02\x05"): "unk_id = 5",
             _field(1, 2, _field(1, 2, b"a") + b"\x15\x00"): "needs 4 bytes",
             piece + _field(3, 2, _field(2, 2, struct.pack("<I", 99) + b"\0" * 4)): "trie size 99"}
    for blob, message in cases.items():
        with pytest.raises(TokenizerError, match=message):
            SentencePieceTokenizer(parse_model(blob, "bad.model"))
    model = parse_model(piece)
    assert (model.pieces, model.bos_id, model.eos_id) == ([("<unk>", 0.0, 2)], -1, -1)
    monkeypatch.setattr("minilm.tokenizers.spm_tokenizer.MAX_MODEL_BYTES", 100)
    (tmp_path / "spiece.model").write_bytes(raw)
    with pytest.raises(TokenizerError, match="more than the 100"):
        SentencePieceTokenizer.from_file(tmp_path / "spiece.model")


@pytest.mark.skipif(importlib.util.find_spec("sentencepiece") is None,
                    reason="re-creating the fixtures needs sentencepiece (tools/make_spm_fixtures.py)")
def test_fixtures_are_what_sentencepiece_computes(tmp_path):
    """The stored ids are what sentencepiece gives now; freshly trained models (this machine's
    standard library) agree with minilm too."""
    if not (ROOT / "tools" / "make_spm_fixtures.py").is_file():
        pytest.skip("tools/make_spm_fixtures.py is not in this copy (a student release leaves tools/make_* out)")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_spm_fixtures
    finally:
        sys.path.pop(0)
    assert make_spm_fixtures.check(DATA) == {n: 0 for n in MODELS}
    if not make_spm_fixtures.stdlib_files():
        pytest.skip("no /usr/lib/python3*/*.py to train on")
    make_spm_fixtures.write(tmp_path)
    fresh = json.loads((tmp_path / "expected.json").read_text(encoding="utf-8"))
    for name in MODELS:
        tok = SentencePieceTokenizer.from_file(tmp_path / f"{name}.model")
        assert not mismatches(tok, fresh["texts"], fresh[name]), name
