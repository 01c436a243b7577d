"""Tokenizer folders as people download them, decoded and encoded as transformers 5 does: the text of
``decode`` on 514 lines for WordPiece, byte-level BPE and Unigram (tests/data/hf/decoded.json.gz), a
GPT-2 folder with ``vocab.json`` + ``merges.txt`` only, a DeBERTa-v3 folder with ``spm.model`` only,
and ``minilm embed`` on a BERT folder with ``tokenizer.json`` only. The fixtures are written by
tools/make_hf_fixtures_tokenizers.py; only the test that re-derives them needs transformers."""
from __future__ import annotations

import importlib.util
import json
import shutil
from functools import lru_cache

import numpy as np
import pytest

from minilm import cli
from minilm.pretrained.export_tokenizer import write_hf_tokenizer
from minilm.tokenizers import ByteLevelBPETokenizer, WordPieceTokenizer
from minilm.tokenizers.decoders import clean_up_tokenization
from minilm.tokenizers.hf_json import load_hf_tokenizer
from minilm.tokenizers.spm_tokenizer import SentencePieceTokenizer
from tests.models.hf_fixture_tool import import_tool
from tests.models.hf_lines import DATA, DECODED, line_ids, read_decoded
from tests.models.hf_lines import line_texts as lines_of
from tests.models.hf_lines import texts as all_lines
from tests.models.test_pretrained_families import NFKC_CASES


@lru_cache(maxsize=None)
def decoded() -> dict:
    return read_decoded()


@lru_cache(maxsize=None)
def texts() -> tuple[str, ...]:
    return tuple(all_lines())


def line_texts(name: str) -> tuple[str, ...]:
    return tuple(lines_of(name, NFKC_CASES))


def decode_mismatches(tok, name: str) -> list[str]:
    out = []
    for mode in ("keep", "skip"):
        for ids, want in zip(line_ids(name), decoded()[name][mode]):
            got = tok.decode(ids, skip_special_tokens=mode == "skip")
            if got != want:
                out.append(f"{mode}: {tok.convert_ids_to_tokens(ids)} → {got!r}, transformers {want!r}")
    return out


# ---- decode -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DECODED)
def test_decode_equals_transformers_line_by_line(name):
    """Before: WordPiece kept the space before punctuation (bert 188 and 192 of 514 lines equal, special
    tokens kept / skipped), Unigram dropped the spaces at both ends (t5 455/514, deberta-v2 458/523,
    xlnet 520/523 with skip_special_tokens)."""
    tok = load_hf_tokenizer(DATA / name)
    bad = decode_mismatches(tok, name)
    assert len(decoded()[name]["keep"]) == len(line_ids(name)) >= 514
    assert not bad, f"{name}: {len(bad)} of {2 * len(line_ids(name))} decodes differ from transformers', e.g. {bad[:2]}"


def test_a_vocab_txt_folder_decodes_as_transformers(tmp_path):
    """An older BERT folder (vocab.txt, no tokenizer.json): transformers 5's BertTokenizer decodes with
    the WordPiece decoder's clean-up too (before: 188/514 and 192/514)."""
    vocab = json.loads((DATA / "bert" / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    (tmp_path / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
    shutil.copy(DATA / "bert" / "tokenizer_config.json", tmp_path)
    tok = load_hf_tokenizer(tmp_path)
    assert isinstance(tok, WordPieceTokenizer) and tok.cleanup
    bad = decode_mismatches(tok, "bert")
    assert not bad, f"{len(bad)} decodes differ from transformers', e.g. {bad[:2]}"
    tok.save(tmp_path / "own")               # minilm's own save keeps its settings
    assert WordPieceTokenizer.load(tmp_path / "own").cleanup


def with_clean_up(folder: Path) -> Path:
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "clean_up_tokenization_spaces": True}))
    return folder


def test_clean_up_tokenization_spaces_from_the_config(tmp_path):
    """``clean_up_tokenization_spaces: true`` (bert-base-uncased's tokenizer_config.json) adds
    transformers' clean-up on the whole text (``" ' "`` too, which the WordPiece decoder's clean-up of
    one piece at a time never sees); transformers 5 never applies it to a BPE model, where it would
    take real spaces out (8 of roberta's lines)."""
    tok = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "don", "'", "t", "stop", ",", "it", "s",
                              "fine", "."])
    write_hf_tokenizer(tok, tmp_path / "wp", "bert")
    wp = load_hf_tokenizer(with_clean_up(tmp_path / "wp"))
    ids = wp.encode("don't stop, it's fine .", add_special_tokens=True)   # as transformers 5.24 decodes them:
    assert wp.decode(ids) == "[CLS] don't stop, it's fine. [SEP]"
    assert wp.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False) == "don ' t stop, it ' s fine."
    roberta = load_hf_tokenizer(with_clean_up(shutil.copytree(DATA / "roberta", tmp_path / "roberta")))
    want = decoded()["roberta"]["keep"]
    assert sum(clean_up_tokenization(s) != s for s in want) == 8
    assert [roberta.decode(ids) for ids in line_ids("roberta")] == want


# ---- GPT-2 with vocab.json + merges.txt ----------------------------------------------------------------
def test_gpt2_vocab_and_merges_give_transformers_ids():
    """openai-community/gpt2's files without tokenizer.json: GPT2Tokenizer's special tokens (all
    ``<|endoftext|>``) and its layout, which adds nothing (before: add_special_tokens=True raised)."""
    tok = load_hf_tokenizer(DATA / "gpt2-vocab-merges")
    assert isinstance(tok, ByteLevelBPETokenizer)
    assert {r: tok.roles.get(r) for r in ("bos_token", "eos_token", "unk_token")} == dict.fromkeys(
        ("bos_token", "eos_token", "unk_token"), "<|endoftext|>")
    for add in (True, False):
        bad = [t for t, ids in zip(texts(), line_ids("gpt2")) if tok.encode(t, add_special_tokens=add) != ids]
        assert not bad, f"add_special_tokens={add}: {len(bad)} lines differ from transformers, e.g. {bad[:2]}"
    assert len(line_ids("gpt2")) == len(texts())
    full = load_hf_tokenizer(DATA / "gpt2")                              # the tokenizer.json of the same model
    text = "one<|endoftext|>two <|endoftext|>"
    assert tok.encode(text, add_special_tokens=True) == full.encode(text, add_special_tokens=True)
    assert tok.decode(tok.encode(text), skip_special_tokens=True) == "onetwo "
    assert tok.encode_pair("a", "b") == (tok.encode("a") + tok.encode("b"), [0] * len(tok.encode("a")) + [1])


def test_gpt2_add_bos_token_from_the_config(tmp_path):
    folder = shutil.copytree(DATA / "gpt2-vocab-merges", tmp_path / "g")
    (folder / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": True, "add_eos_token": True,
                                                              "tokenizer_class": "GPT2Tokenizer"}))
    tok = load_hf_tokenizer(folder)
    end = tok.token_to_id("<|endoftext|>")
    assert tok.encode("hello", add_special_tokens=True) == [end, *tok.encode("hello"), end]


def test_deberta_vocab_and_merges_give_transformers_ids():
    """microsoft/deberta-base's files: DebertaTokenizer's [CLS] … [SEP] (before: no special tokens,
    0/523 lines). Its [MASK] keeps the space before it: transformers 5 builds the class without lstrip."""
    tok = load_hf_tokenizer(DATA / "deberta-vocab-merges")
    assert (tok.cls_id, tok.mask_id) == (tok.token_to_id("[CLS]"), tok.token_to_id("[MASK]"))
    rows = line_ids("deberta-vocab-merges")
    bad = [t for t, ids in zip(line_texts("deberta"), rows) if tok.encode(t, add_special_tokens=True) != ids]
    assert len(rows) == len(line_texts("deberta")) and not bad, f"{len(bad)} lines differ, e.g. {bad[:2]}"
    assert tok.convert_ids_to_tokens(tok.encode("a [MASK]")) == ["a", "Ġ", "[MASK]"]


# ---- DeBERTa-v3 with spm.model -------------------------------------------------------------------------
def test_deberta_v3_spm_model_gives_transformers_ids():
    """microsoft/deberta-v3-*'s files: spm.model, whose pieces hold no [MASK] (DebertaV2Tokenizer appends
    it after them), normalised as transformers 5.25 does: the file's rules, then its own whitespace rules.
    Before: no mask token and SentencePiece's rules, 513/514 lines and 6/9 NFKC cases; then NFC in place of
    the rules, as transformers 5.0-5.24 did, which 5.25 reads otherwise on 3 of the 9 NFKC cases."""
    tok = load_hf_tokenizer(DATA / "deberta-v3-spm")
    assert isinstance(tok, SentencePieceTokenizer) and tok.tokenizer_class == "DebertaV2Tokenizer"
    assert tok.mask_id == tok.vocab_size - 1 == 300 and tok.id_to_token(tok.mask_id) == "[MASK]"
    lines = texts() + tuple(NFKC_CASES)
    bad = [t for t, ids in zip(lines, line_ids("deberta-v3-spm")) if tok.encode(t, add_special_tokens=True) != ids]
    assert len(line_ids("deberta-v3-spm")) == len(lines) and not bad, \
        f"{len(bad)} of {len(lines)} lines differ from transformers, e.g. {bad[:2]}"


def _saved_by_transformers_4(folder, target):
    """``folder``'s spm.model as transformers 4 saves it (4.57's DebertaV2Converter, checked against a
    folder 4.57.1 wrote): tokenizer.json with the pieces as a Unigram vocabulary, [MASK] added after
    them, and the normalizer Strip(both sides), the file's Precompiled rules, Replace(" {2,}" → " ")."""
    import base64
    from minilm.tokenizers.sentencepiece_model import parse_model
    model = parse_model((folder / "spm.model").read_bytes())
    pieces = [[p, float(score)] for p, score, _ in model.pieces]
    names = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, t in enumerate(names)] + \
        [{"id": len(pieces), "content": "[MASK]", "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": True}]
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    template = [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}}]
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "Strip", "strip_left": True, "strip_right": True},
                {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(model.charsmap).decode("ascii")},
                {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [meta]},
            "post_processor": {"type": "TemplateProcessing", "single": template, "pair": template,
                               "special_tokens": {t: {"id": t, "ids": [names.index(t)], "tokens": [t]}
                                                  for t in ("[CLS]", "[SEP]")}},
            "decoder": meta, "model": {"type": "Unigram", "unk_id": model.unk_id, "vocab": pieces,
                                       "byte_fallback": False}}
    target.mkdir()
    (target / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    config = {"tokenizer_class": "DebertaV2Tokenizer", "do_lower_case": False, "split_by_punct": False,
              "mask_token": "[MASK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
              "unk_token": "[UNK]", "bos_token": "[CLS]", "eos_token": "[SEP]"}
    (target / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return target


def test_deberta_v3_tokenizer_json_saved_by_transformers_4_reads_as_transformers_5_reads_it(tmp_path):
    """transformers 5 rebuilds DebertaV2Tokenizer's normalizer and keeps only the Precompiled rules of a
    tokenizer.json's: on a folder saved by 4.57.1 it gives the ids of the spm.model folder (5.25.0: the
    same on every line and NFKC case). Read as written, the file's Strip on the left took a leading
    ideographic space, which transformers keeps (an [UNK] here)."""
    tok = load_hf_tokenizer(_saved_by_transformers_4(DATA / "deberta-v3-spm", tmp_path / "v4"))
    lines = texts() + tuple(NFKC_CASES)
    bad = [t for t, ids in zip(lines, line_ids("deberta-v3-spm")) if tok.encode(t, add_special_tokens=True) != ids]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ from transformers, e.g. {bad[:2]}"
    # transformers 5.25.0's tokens on the folder 4.57.1 saved: this .model's rules leave U+3000 as it is
    ideographic = tok.convert_ids_to_tokens(tok.encode("\u3000ideographic space", add_special_tokens=True))
    assert ideographic == ["[CLS]", "\u2581", "[UNK]", *"ide", "og", *"raphic", "\u2581", *"space", "[SEP]"]


# ---- the commands on a folder with tokenizer.json only -------------------------------------------------
def test_embed_reads_tokenizer_json_when_there_is_no_vocab_txt(capsys, tmp_path):
    """transformers 5 saves a BERT with tokenizer.json and no vocab.txt (before: ``minilm embed`` stopped
    with "no vocab.txt"); the same vocabulary as vocab.txt gives the same embeddings."""
    assert not (DATA / "bert" / "vocab.txt").exists()
    runs = []
    for folder in (DATA / "bert", tmp_path / "bert"):
        if folder != DATA / "bert":
            shutil.copytree(DATA / "bert", folder)
            vocab = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
            (folder / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
        code = cli.main(["embed", str(folder), "the cats eat fish.", "Hello world!", "--json"])
        out = capsys.readouterr()
        assert code == 0, out.err
        runs.append(json.loads(out.out))
    assert runs[0]["tokens"] == runs[1]["tokens"] and runs[0]["tokens"][0][0] == "[CLS]"
    np.testing.assert_allclose(runs[0]["embeddings"], runs[1]["embeddings"], atol=1e-6)
    from minilm.pretrained.static_words import load_static_encoder
    pretrained, _, _ = load_static_encoder(DATA / "bert")                # embed --static: the BERT path
    assert pretrained is not None


# ---- the fixtures are what transformers computes ----------------------------------------------------------
def _transformers_version() -> tuple[int, ...]:
    from importlib.metadata import version
    return tuple(int(p) for p in version("transformers").split(".")[:2] if p.isdigit())


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                    reason="re-deriving the fixtures needs transformers (tools/make_hf_fixtures_tokenizers.py)")
def test_fixtures_are_what_transformers_decodes():
    if _transformers_version() < (5, 25):   # deberta-v3-spm's ids are 5.25's: the spm.model's rules, not NFC
        pytest.skip("the fixtures are transformers 5.25's; 5.0-5.24 normalise DeBERTa-v2's spm.model with NFC")
    problems = import_tool("make_hf_fixtures_tokenizers").check(DATA)
    assert not problems, "transformers now decodes or encodes otherwise: " + "; ".join(problems)
