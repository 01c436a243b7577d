"""minilm's tokenizers as the files transformers' ``AutoTokenizer.from_pretrained`` reads.

``write_hf_tokenizer(tok, DIR, model_type)`` writes, beside the tokenizer's own files (``vocab.txt``
or ``vocab.json`` + ``merges.txt``, which the slow classes read):

* ``tokenizer.json``, the ``tokenizers`` library's pipeline (its documentation, "The tokenization
  pipeline"; ``hf_json.py`` reads the same format back):

  ==============  ===========================================  ======================================
  minilm          normalizer / pre-tokenizer / model            post-processor
  ==============  ===========================================  ======================================
  WordPiece       BertNormalizer (lower case, accents as the    TemplateProcessing ``[CLS] $A [SEP]``
                  tokenizer's) / BertPreTokenizer / WordPiece   (``$B:1 [SEP]:1`` for a pair)
  byte-level BPE  none / ByteLevel (GPT-2's pattern, no         RobertaProcessing ``<s> $A </s>``;
                  prefix space) / BPE with the merges           GPT-2, or no cls / sep token: ByteLevel
                                                                (no special tokens)
  ==============  ===========================================  ======================================

  The special tokens are ``added_tokens`` matched exactly in the raw text (``normalized: false``,
  no lstrip / rstrip), which is minilm's rule (``base.py``).
* ``tokenizer_config.json`` naming a transformers class that fits the family and the model
  (``BertTokenizerFast``, ``ElectraTokenizerFast``, ``DistilBertTokenizerFast``,
  ``RobertaTokenizerFast``, ``GPT2TokenizerFast``, ``BartTokenizerFast``; otherwise the generic
  ``PreTrainedTokenizerFast``, which runs ``tokenizer.json`` as written), with the roles;
* ``special_tokens_map.json``: the roles.

A tokenizer read from a ``tokenizer.json`` (``HFTokenizer``) writes that file back; a SentencePiece
tokenizer its ``.model`` under the name its transformers class reads (``spiece.model``; DeBERTa-v2 /
v3's ``spm.model``, XLM-R's ``sentencepiece.bpe.model``: ``spm_tokenizer.CLASSES``), which transformers
converts; a character tokenizer has no transformers counterpart and writes its own files only.
"""
from __future__ import annotations

import json
from pathlib import Path

from minilm.tokenizers.bpe import ByteLevelBPETokenizer
from minilm.tokenizers.wordpiece import WordPieceTokenizer

CLASSES = {("bert", "WordPiece"): "BertTokenizerFast", ("electra", "WordPiece"): "ElectraTokenizerFast",
           ("distilbert", "WordPiece"): "DistilBertTokenizerFast", ("roberta", "BPE"): "RobertaTokenizerFast",
           ("gpt2", "BPE"): "GPT2TokenizerFast", ("bart", "BPE"): "BartTokenizerFast"}


def _added_tokens(tok) -> list[dict]:
    return [{"id": tok.token_to_id(t), "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for t in sorted(tok.special_tokens, key=tok.token_to_id)]


def _template(tok, first: str, last: str) -> dict:
    a, b = tok.roles[first], tok.roles[last]
    special = {t: {"id": t, "ids": [tok.token_to_id(t)], "tokens": [t]} for t in (a, b)}
    return {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": a, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": b, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": a, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": b, "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": b, "type_id": 1}}],
            "special_tokens": special}


def wordpiece_json(tok: WordPieceTokenizer) -> dict:
    has_template = "cls_token" in tok.roles and "sep_token" in tok.roles
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": _added_tokens(tok),
            "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                           "strip_accents": tok.strip_accents, "lowercase": tok.do_lower_case},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": _template(tok, "cls_token", "sep_token") if has_template else None,
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
            "model": {"type": "WordPiece", "unk_token": tok.roles.get("unk_token", "[UNK]"),
                      "continuing_subword_prefix": "##", "max_input_chars_per_word": tok.max_input_chars_per_word,
                      "vocab": tok.get_vocab()}}


def bpe_json(tok: ByteLevelBPETokenizer, model_type: str) -> dict:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    if model_type == "gpt2" or tok.cls_id is None or tok.sep_id is None:
        post = {**byte_level, "trim_offsets": False}           # GPT-2: no special tokens around the text
    else:                                                       # as ByteLevelBPETokenizer.build_inputs
        post = {"type": "RobertaProcessing", "sep": [tok.roles["sep_token"], tok.sep_id],
                "cls": [tok.roles["cls_token"], tok.cls_id], "trim_offsets": True, "add_prefix_space": False}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": _added_tokens(tok),
            "normalizer": None, "pre_tokenizer": byte_level, "post_processor": post, "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": tok.get_vocab(), "merges": [[a, b] for a, b in tok.merges]}}


def tokenizer_config(tok, model_type: str, kind: str) -> dict:
    config = {"tokenizer_class": CLASSES.get((model_type, kind), "PreTrainedTokenizerFast"), **tok.roles,
              "clean_up_tokenization_spaces": bool(getattr(tok, "clean_up_tokenization_spaces", False))}
    extra = [t for t in tok.special_tokens if t not in tok.roles.values()]
    if extra:
        config["additional_special_tokens"] = extra
    if kind == "WordPiece":
        config.update(do_lower_case=tok.do_lower_case, strip_accents=tok.strip_accents, tokenize_chinese_chars=True)
    else:
        config.update(add_prefix_space=False, trim_offsets=True)
        config.update({k: True for k in ("add_bos_token", "add_eos_token") if getattr(tok, k, False)})
    return config


def write_hf_tokenizer(tok, directory, model_type: str | None = None) -> Path:
    """``tok``'s files for transformers in ``directory`` (see the module docstring)."""
    directory = Path(directory)
    tok.save(directory)
    if isinstance(tok, WordPieceTokenizer):
        spec, kind = wordpiece_json(tok), "WordPiece"
    elif isinstance(tok, ByteLevelBPETokenizer):
        spec, kind = bpe_json(tok, model_type or ""), "BPE"
    else:                                   # HFTokenizer, SentencePieceTokenizer, CharTokenizer: their own save
        return directory
    (directory / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False) + "\n", encoding="utf-8")
    config = tokenizer_config(tok, model_type or "", kind)
    for name, value in (("tokenizer_config.json", config), ("special_tokens_map.json", dict(tok.roles))):
        (directory / name).write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return directory
