"""What transformers' tokenizer classes of the SentencePiece families do around a ``.model`` file.

transformers 5 converts a ``.model`` into a ``tokenizers`` pipeline, one per class
(``models/*/tokenization_*.py``); ``spm_tokenizer.py`` runs SentencePiece itself, and this file holds
the family's part:

* the layout of a sequence or a pair, the file name the class reads (its ``VOCAB_FILES_NAMES``), and
  its default special tokens, which transformers appends after the pieces when the ``.model`` has no
  such piece (DeBERTa-v3's ``[MASK]``), in the order of ``SPECIAL_TOKENS_ATTRIBUTES``;
* ALBERT's and XLNet's ``preprocess_text`` before SentencePiece's normaliser;
* DeBERTa-v2's normaliser: the ``.model``'s compiled rules, as ``tokenizers``' Precompiled applies them,
  then its own whitespace rules (transformers 5.25; 5.0-5.24 used NFC in place of the rules).
"""
from __future__ import annotations

import re
import unicodedata

from autograd.errors import TokenizerError

# transformers' classes of the SentencePiece families: how each lays out one sequence / a pair around the
# pieces ("t5": A </s> (B </s>); "cls_sep": [CLS] A [SEP] (B [SEP]); "xlnet": A <sep> (B <sep>) <cls>;
# "fairseq": <s> A </s> (</s> B </s>) with fairseq's four tokens in front of the pieces, XLM-R), and the
# name of the file it reads (its VOCAB_FILES_NAMES: DebertaV2Tokenizer finds no spiece.model)
CLASSES = {"T5Tokenizer": ("t5", "spiece.model"), "AlbertTokenizer": ("cls_sep", "spiece.model"),
           "DebertaV2Tokenizer": ("cls_sep", "spm.model"), "XLNetTokenizer": ("xlnet", "spiece.model"),
           "XLMRobertaTokenizer": ("fairseq", "sentencepiece.bpe.model")}
MODEL_TYPES = {"t5": "T5Tokenizer", "mt5": "T5Tokenizer", "umt5": "T5Tokenizer", "albert": "AlbertTokenizer",
               "deberta-v2": "DebertaV2Tokenizer", "xlnet": "XLNetTokenizer", "xlm-roberta": "XLMRobertaTokenizer"}
LAYOUT_CLASS = {"t5": "T5Tokenizer", "cls_sep": "DebertaV2Tokenizer", "xlnet": "XLNetTokenizer",
                "fairseq": "XLMRobertaTokenizer"}
LAYOUT_ROLES = {"cls_sep": {"cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"},
                "xlnet": {"cls_token": "<cls>", "sep_token": "<sep>", "mask_token": "<mask>"},
                "fairseq": {"cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}}
# the order in which transformers appends a role's token that the .model lacks (SPECIAL_TOKENS_ATTRIBUTES)
APPEND_ORDER = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def family_class(kind: str) -> str:
    """transformers' class of a SentencePiece family, from a tokenizer class or a model_type ("" if none)."""
    return kind.removesuffix("Fast") if kind.removesuffix("Fast") in CLASSES else MODEL_TYPES.get(kind, "")


# ALBERT's and XLNet's tokenizers' defaults (transformers' tokenization_albert.py / _xlnet.py)
PREPROCESS = {"xlnet": {"remove_space": True, "keep_accents": False, "do_lower_case": False},
              "albert": {"remove_space": True, "keep_accents": False, "do_lower_case": True}}


def preprocessor(config: dict, kind: str = ""):
    """ALBERT's and XLNet's ``preprocess_text``, with their defaults or what tokenizer_config.json says:
    ``remove_space`` (collapse whitespace; ``` `` ``` and ``''`` become ``"``), ``keep_accents`` false
    (NFKD, marks dropped), ``do_lower_case``. Other families: none of these."""
    family = PREPROCESS.get(kind.lower().removesuffix("tokenizerfast").removesuffix("tokenizer"), {})
    options = {k: config.get(k, v) for k, v in family.items()}
    remove_space, keep_accents = options.get("remove_space", False), options.get("keep_accents", True)
    lower = options.get("do_lower_case", False)

    def run(text: str) -> str:
        if remove_space:
            text = " ".join(text.strip().split()).replace("``", '"').replace("''", '"')
        if not keep_accents:
            text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
        return text.lower() if lower else text
    return run


WHITESPACE_RUNS = re.compile(r"\s{2,}|[\n\r\t]")
SPACE_RUNS = re.compile(r" {2,}")


def deberta_v2_normalizer(config: dict, where: str = ".model", charsmap=None):
    """transformers 5's DebertaV2Tokenizer before its Unigram model: Lowercase (if ``do_lower_case``);
    then, when the ``.model`` has compiled rules (``charsmap``, a ``PrecompiledCharsmap``), those rules
    as ``tokenizers``' Precompiled applies them (``ｆｕｌｌ`` → ``full`` under nmt_nfkc, as in
    SentencePiece), Strip(right), Replace(`` {2,}`` → one space); without rules, Replace(``\\s{2,}|[\\n\\r\\t]``
    → one space), NFC, Strip(right); then Metaspace: spaces → ``▁``, one ``▁`` in front.
    (transformers 5.0-5.24 took the second branch for every ``.model``, so ``ｆｕｌｌ`` stayed full-width
    there.) ``split_by_punct`` is refused."""
    if config.get("split_by_punct"):
        raise TokenizerError(f"{where}: DebertaV2Tokenizer with split_by_punct: minilm does not split at "
                             "punctuation first (transformers' Punctuation pre-tokenizer)")
    lower = bool(config.get("do_lower_case", False))

    def run(text: str) -> str:
        text = text.lower() if lower else text
        if charsmap is not None:
            text = SPACE_RUNS.sub(" ", charsmap.normalize(text).rstrip())
        else:
            text = unicodedata.normalize("NFC", WHITESPACE_RUNS.sub(" ", text)).rstrip()
        text = text.replace(" ", "\u2581")
        return text if not text or text.startswith("\u2581") else "\u2581" + text
    return run
