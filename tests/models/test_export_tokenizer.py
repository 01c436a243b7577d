"""minilm's own tokenizers → ``tokenizer.json`` + ``tokenizer_config.json`` naming transformers' classes
(minilm/pretrained/export_tokenizer.py): minilm reads its own ``tokenizer.json`` back with identical
ids, and ``AutoTokenizer`` gives the ids minilm gives (skipped without transformers), on the 514
standard-library docstring lines and hard cases of tests/data/hf/lines.npz."""
from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from minilm.pretrained.export_tokenizer import write_hf_tokenizer
from minilm.tokenizers import ByteLevelBPETokenizer, WordPieceTokenizer
from minilm.tokenizers.hf_json import HFTokenizer, load_hf_tokenizer

ROOT = Path(__file__).resolve().parents[2]
HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
# (family, tokenizer kind, the transformers class written, whether transformers adds the special tokens)
CASES = [("bert", "uncased", "BertTokenizerFast", True), ("electra", "cased", "ElectraTokenizerFast", True),
         ("roberta", "bpe", "RobertaTokenizerFast", True), ("gpt2", "bpe", "GPT2TokenizerFast", False),
         ("t5", "cased", "PreTrainedTokenizerFast", True)]


@lru_cache(maxsize=None)
def lines() -> tuple[str, ...]:
    with np.load(ROOT / "tests" / "data" / "hf" / "lines.npz", allow_pickle=False) as f:
        texts = tuple(str(t) for t in f["texts"])
    return texts + ("[CLS] [MASK] <mask> <s></s> [SEP]", "a<mask>b [UNK]x")


@lru_cache(maxsize=None)
def minilm_tokenizer(kind: str):
    texts = lines()[:400]
    if kind == "bpe":
        return ByteLevelBPETokenizer.train(texts, vocab_size=600)
    return WordPieceTokenizer.train(texts, vocab_size=600, do_lower_case=kind == "uncased")


def ids(tok, specials: bool) -> list[list[int]]:
    return [tok.encode(t, add_special_tokens=specials) for t in lines()]


@pytest.mark.parametrize("family,kind,cls,specials", CASES)
def test_minilm_reads_its_own_tokenizer_json_back(tmp_path, family, kind, cls, specials):
    tok = minilm_tokenizer(kind)
    write_hf_tokenizer(tok, tmp_path, family)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["tokenizer_class"] == cls
    assert json.loads((tmp_path / "special_tokens_map.json").read_text(encoding="utf-8")) == tok.roles
    back = load_hf_tokenizer(tmp_path)
    assert isinstance(back, HFTokenizer) and back.vocab_size == tok.vocab_size
    assert len(lines()) >= 500
    for add in (False, True):
        if add and not specials:
            continue
        ours, theirs = ids(tok, add), ids(back, add)
        bad = [t for t, a, b in zip(lines(), ours, theirs) if a != b]
        assert not bad, f"{len(bad)} lines differ after the tokenizer.json round trip, e.g. {bad[:2]}"
    pair = tok.encode_pair("a b", "c") if specials and family != "gpt2" else None
    if pair is not None:
        assert back.encode_pair("a b", "c") == pair


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="AutoTokenizer needs transformers")
@pytest.mark.parametrize("family,kind,cls,specials", CASES)
def test_auto_tokenizer_gives_minilms_ids(tmp_path, family, kind, cls, specials):
    import transformers as tf
    tok = minilm_tokenizer(kind)
    write_hf_tokenizer(tok, tmp_path, family)
    theirs = tf.AutoTokenizer.from_pretrained(tmp_path)
    # transformers 5 may answer with an alias (ElectraTokenizerFast is its BertTokenizer): the ids decide
    expected = ids(tok, specials)
    bad = [(t, theirs(t)["input_ids"], e) for t, e in zip(lines(), expected) if theirs(t)["input_ids"] != e]
    assert not bad, f"{family}: {len(bad)} of {len(expected)} lines differ from transformers, e.g. {bad[:2]}"


# ---- every family's tokenizer, as minilm read it from a Hugging Face folder -----------------------------
HF = ROOT / "tests" / "data" / "hf"
SPM = ROOT / "tests" / "data" / "spm" / "unigram.model"
# (folder or .model file, model_type of the export); the .model file goes in as the family's spiece.model
FOLDERS = [("bert", "bert"), ("distilbert", "distilbert"), ("electra-generator", "electra"), ("roberta", "roberta"),
           ("gpt2", "gpt2"), ("gpt2-vocab-merges", "gpt2"), ("bart", "bart"), ("t5", "t5"), ("xlnet", "xlnet"),
           ("deberta", "deberta-v2"), ("deberta-vocab-merges", "deberta-v2"), ("deberta-v2", "deberta-v2"),
           ("deberta-v3-spm", "deberta-v2"),
           (SPM, "t5"), (SPM, "xlnet")]
FILES = {"deberta-v2": "spm.model", "t5": "spiece.model", "xlnet": "spiece.model"}   # transformers' VOCAB_FILES_NAMES


def hf_folder(source, model_type: str, tmp_path):
    """The tokenizer of a fixture folder, or of a bare .model file in a folder whose config names the family."""
    if isinstance(source, str):
        return load_hf_tokenizer(HF / source)
    folder = tmp_path / "source"
    folder.mkdir(parents=True)
    (folder / "spiece.model").write_bytes(source.read_bytes())
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    return load_hf_tokenizer(folder)


def test_sentencepiece_tokenizers_go_out_under_the_name_their_class_reads(tmp_path):
    """DebertaV2Tokenizer reads spm.model, T5's and XLNet's read spiece.model; a DeBERTa-v3 tokenizer
    written as spiece.model loaded in transformers as 7 special tokens and gave other ids on every line."""
    for source, model_type in [("deberta-v3-spm", "deberta-v2"), (SPM, "t5"), (SPM, "xlnet")]:
        tok = hf_folder(source, model_type, tmp_path / model_type)
        out = write_hf_tokenizer(tok, tmp_path / model_type / "out", model_type)
        assert sorted(p.name for p in out.iterdir()) == sorted([FILES[model_type], "tokenizer_config.json"])
        config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert config["tokenizer_class"] == tok.tokenizer_class
        back = load_hf_tokenizer(out)
        assert [back.encode(t, add_special_tokens=True) for t in lines()] == ids(tok, True)
    assert config == {"tokenizer_class": "XLNetTokenizer", **tok.roles}
    dv3 = json.loads((tmp_path / "deberta-v2" / "out" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert dv3["mask_token"] == "[MASK]" and dv3["do_lower_case"] is False      # the hub's options kept


@pytest.mark.parametrize("source,model_type", FOLDERS,
                         ids=[f"{s if isinstance(s, str) else 'spm'}-{m}" for s, m in FOLDERS])
def test_every_exported_tokenizer_reloads_in_transformers(tmp_path, source, model_type):
    """``AutoTokenizer`` on what minilm exports gives minilm's ids and decodes them to minilm's text, on
    the 514 lines (transformers 5 has no slow SentencePiece classes left to check as well). Before:
    deberta-v3-spm 0/514 (written as spiece.model), gpt2- and deberta-vocab-merges 0/514 (minilm's
    encode raised), the WordPiece and Unigram decodes as in test_hf_tokenizer_folders.py."""
    tf = pytest.importorskip("transformers")
    tok = hf_folder(source, model_type, tmp_path)
    out = write_hf_tokenizer(tok, tmp_path / "out", model_type)
    theirs = tf.AutoTokenizer.from_pretrained(out)
    texts = lines()[:514]
    bad = [(t, theirs(t)["input_ids"], e) for t, e in zip(texts, ids(tok, True)) if theirs(t)["input_ids"] != e]
    assert not bad, f"{len(bad)} of {len(texts)} lines differ from transformers, e.g. {bad[:2]}"
    for ids_ in ids(tok, True)[:514]:
        for skip in (False, True):
            assert tok.decode(ids_, skip_special_tokens=skip) == theirs.decode(ids_, skip_special_tokens=skip)
