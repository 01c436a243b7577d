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
