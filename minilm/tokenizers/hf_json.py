"""``tokenizer.json``, the file Hugging Face's ``save_pretrained`` writes, read without ``tokenizers``.

The file describes a pipeline (the ``tokenizers`` library's documentation, "The tokenization
pipeline"), which :class:`HFTokenizer` runs in the same order:

1. **added tokens** (``added_tokens``): the special strings are cut out of the raw text first; one
   with ``lstrip`` also takes the whitespace before it (RoBERTa's ``<mask>``), ``rstrip`` after it;
2. **normalizer**: BERT's (clean-up, CJK spacing, lower case, accents), Lowercase, NFC/NFD/NFKC/NFKD,
   Strip, StripAccents (XLNet's, after NFKD), Replace, Prepend, SentencePiece's Precompiled charsmap
   (``precompiled.py``), or a Sequence;
3. **pre-tokenizer** and **model**: WordPiece after ``BertPreTokenizer`` (minilm's
   :class:`WordPieceTokenizer`, Task 5.1), byte-level BPE after ``ByteLevel`` (minilm's
   :class:`ByteLevelBPETokenizer`, Task 6.2; ``add_prefix_space`` honoured), or Unigram after
   ``WhitespaceSplit`` / ``Metaspace`` (SentencePiece's model: the segmentation of highest total
   log-probability, found by Viterbi, ``unigram.py``);
4. **post-processor**: ``TemplateProcessing``, ``RobertaProcessing``, ``BertProcessing``, ``ByteLevel``
   (no change to the ids), or a Sequence: where ``[CLS]``/``<s>``/``</s>`` go.

``decode`` runs the file's **decoder** (WordPiece, Metaspace, ByteLevel: ``decoders.py``) and then, when
``tokenizer_config.json`` sets ``clean_up_tokenization_spaces``, transformers' clean-up: the text
transformers 5's ``decode`` gives.

One class reads its file otherwise: transformers 5's ``DebertaV2Tokenizer`` builds its own normalizer
around the file's Precompiled rules (``spm_families.deberta_v2_normalizer``), so a ``tokenizer.json``
that transformers 4 saved, whose normalizer also strips the left, gives the ids transformers 5 gives.

Anything else in the file is a TokenizerError naming the component, never a silent difference.
``load_hf_tokenizer(DIR)`` picks ``tokenizer.json``, else ``vocab.txt`` / ``vocab.json`` + ``merges.txt``.
"""
from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from autograd.errors import TokenizerError

from .base import ROLES, BaseTokenizer
from .class_roles import default_roles
from .bpe import ByteLevelBPETokenizer
from .decoders import clean_up_tokenization, run_decoder
from .precompiled import PrecompiledCharsmap
from .spm_families import deberta_v2_normalizer, family_class
from .unigram import unigram_segment
from .wordpiece import WordPieceTokenizer

MAX_FILE_BYTES = 64 * 2 ** 20   # a tokenizer.json beyond this is refused, not read into memory


def _normalizer(spec, path):
    """The normalizer as a str → str function (None: identity); BERT's returns its options instead."""
    if spec is None:
        return lambda s: s
    kind = spec.get("type")
    if kind == "Sequence":
        steps = [_normalizer(s, path) for s in spec["normalizers"]]

        def run(s):
            for f in steps:
                s = f(s)
            return s
        return run
    if kind == "Lowercase":
        return str.lower
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return lambda s: unicodedata.normalize(kind, s)
    if kind == "Strip":
        left, right = spec.get("strip_left", True), spec.get("strip_right", True)
        return lambda s: s.lstrip() if left and not right else s.rstrip() if right and not left else s.strip()
    if kind == "Replace":
        pattern = spec["pattern"]
        rx = re.compile(pattern["Regex"]) if "Regex" in pattern else re.compile(re.escape(pattern["String"]))
        return lambda s: rx.sub(spec["content"].replace("\\", "\\\\"), s)
    if kind == "Prepend":
        return lambda s: spec["prepend"] + s if s else s
    if kind == "StripAccents":   # tokenizers drops every combining mark (General_Category M*)
        return lambda s: "".join(c for c in s if not unicodedata.category(c).startswith("M"))
    if kind == "Precompiled":
        return PrecompiledCharsmap.from_base64(spec["precompiled_charsmap"], f"{path}: Precompiled").normalize
    raise TokenizerError(f"{path}: normalizer {kind!r} is not one minilm reads (BertNormalizer, Lowercase, NF*, "
                         "Strip, StripAccents, Replace, Prepend, Precompiled, Sequence)")


def _precompiled(spec, path):
    """The Precompiled rules of a normalizer entry (alone or in a Sequence), or None."""
    steps = (spec or {}).get("normalizers", [spec] if spec else [])
    found = [s for s in steps if s.get("type") == "Precompiled" and s.get("precompiled_charsmap")]
    return PrecompiledCharsmap.from_base64(found[0]["precompiled_charsmap"], f"{path}: Precompiled") if found else None


def _pre_tokenizers(spec) -> list[dict]:
    if spec is None:
        return []
    return [s for p in spec["pretokenizers"] for s in _pre_tokenizers(p)] if spec["type"] == "Sequence" else [spec]


class HFTokenizer(BaseTokenizer):
    """A tokenizer described by a ``tokenizer.json``; ``encode(text, add_special_tokens=True)`` gives
    the ids that transformers' ``tokenizer(text)["input_ids"]`` gives."""

    def __init__(self, spec: dict, config: dict | None = None, path="tokenizer.json", defaults: dict | None = None):
        self.path = path
        model, config = spec.get("model") or {}, config or {}
        self.spec, self.config = spec, config      # written back as they were by save()
        self.kind = model.get("type")
        added = spec.get("added_tokens") or []
        if self.kind in ("WordPiece", "BPE"):
            table = dict(model["vocab"])
            self.scores = None
        elif self.kind == "Unigram":
            table = {piece: i for i, (piece, _) in enumerate(model["vocab"])}
            self.scores = {piece: float(score) for piece, score in model["vocab"]}
            self.unk_id_unigram = model.get("unk_id")
        else:
            raise TokenizerError(f"{path}: model type {self.kind!r}; minilm reads WordPiece, BPE and Unigram")
        for t in added:
            table.setdefault(t["content"], t["id"])
        tokens = [None] * (max(table.values()) + 1 if table else 0)
        for tok, i in table.items():
            tokens[i] = tok
        if any(t is None for t in tokens):
            raise TokenizerError(f"{path}: the vocabulary skips id {tokens.index(None)}")
        present = set(tokens)
        roles = {r: config[r] if isinstance(config[r], str) else config[r].get("content")
                 for r in ROLES if config.get(r) is not None}
        roles = {r: t for r, t in {**(defaults or {}), **roles}.items() if t in present}   # the file's win
        specials = [t["content"] for t in added if t.get("special")]
        super().__init__(tokens, roles=roles, special_tokens=specials)
        self._skipped = {table[t] for t in specials}       # what decode(skip_special_tokens=True) leaves out
        # every added token is cut out whole, special or not (a non-special one that asks to be
        # matched after normalisation is matched on the raw text here: the same for the files we read)
        self.added = sorted(added, key=lambda t: -len(t["content"]))
        self._added_re = None
        if self.added:
            parts = [("\\s*" if t.get("lstrip") else "") + re.escape(t["content"]) + ("\\s*" if t.get("rstrip") else "")
                     for t in self.added]
            self._added_re = re.compile("(" + "|".join(parts) + ")")
        self._setup_pipeline(spec, model, path)
        self.post = spec.get("post_processor")

    def _setup_pipeline(self, spec, model, path):
        allowed = {"dropout": (None,), "byte_fallback": (False,), "end_of_word_suffix": (None, ""),
                   "continuing_subword_prefix": ("##",) if self.kind == "WordPiece" else (None, "")}
        odd = {k: model[k] for k, ok in allowed.items() if k in model and model[k] not in ok}
        if odd:
            raise TokenizerError(f"{path}: {self.kind} model options {odd}; minilm reads the defaults of the "
                                 "released GPT-2 / BERT / RoBERTa / T5 tokenizers")
        norm = spec.get("normalizer")
        pre = _pre_tokenizers(spec.get("pre_tokenizer"))
        kinds = [p["type"] for p in pre]
        self.add_prefix_space = False
        if self.kind == "WordPiece":
            if kinds not in (["BertPreTokenizer"], []) or (norm is not None and norm.get("type") != "BertNormalizer"):
                raise TokenizerError(f"{path}: WordPiece after {norm and norm.get('type')} / {kinds}; minilm reads "
                                     "BertNormalizer + BertPreTokenizer")
            norm = norm or {}
            if not norm.get("clean_text", True) or not norm.get("handle_chinese_chars", True):
                raise TokenizerError(f"{path}: BertNormalizer with clean_text or handle_chinese_chars off; "
                                     "minilm's WordPiece always does both (as BERT)")
            self.inner = WordPieceTokenizer(self._id_to_token, do_lower_case=norm.get("lowercase", True),
                                            strip_accents=norm.get("strip_accents"),
                                            max_input_chars_per_word=model.get("max_input_chars_per_word", 100),
                                            roles={"unk_token": model.get("unk_token", "[UNK]")})
            self.normalize = lambda s: s       # BERT's normalizer runs inside the WordPiece tokenizer
        elif self.kind == "BPE":
            if kinds != ["ByteLevel"]:
                raise TokenizerError(f"{path}: BPE after pre-tokenizers {kinds}; minilm reads byte-level BPE "
                                     "(pre_tokenizer ByteLevel)")
            if not pre[0].get("use_regex", True):
                raise TokenizerError(f"{path}: ByteLevel with use_regex false; minilm splits with GPT-2's pattern")
            self.add_prefix_space = bool(pre[0].get("add_prefix_space", False))
            merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model.get("merges", [])]
            self.inner = ByteLevelBPETokenizer(self._id_to_token, merges, roles={})
            self.normalize = _normalizer(norm, path)
        else:  # Unigram
            if not set(kinds) <= {"WhitespaceSplit", "Metaspace"} or "Metaspace" not in kinds:
                raise TokenizerError(f"{path}: Unigram after pre-tokenizers {kinds}; minilm reads WhitespaceSplit "
                                     "+ Metaspace")
            meta = next(p for p in pre if p["type"] == "Metaspace")
            self.meta_char = meta.get("replacement", "\u2581")
            self.meta_prepend = meta.get("prepend_scheme", "always" if meta.get("add_prefix_space", True) else "never")
            self.meta_split = meta.get("split", True)
            self.whitespace_split = "WhitespaceSplit" in kinds
            self.inner = None
            if family_class(self.config.get("tokenizer_class") or "") == "DebertaV2Tokenizer":
                # transformers 5's DebertaV2Tokenizer builds its own normalizer (tokenization_deberta_v2.py) and
                # keeps only the Precompiled rules of the file's: a file saved by transformers 4 (Strip on both
                # sides, then the rules) is read as the class reads it, not as it is written
                self.normalize = deberta_v2_normalizer(self.config, str(path), _precompiled(norm, path))
            else:
                self.normalize = _normalizer(norm, path)

    # ---- text → tokens ---------------------------------------------------------------------
    def split_on_special_tokens(self, text: str) -> list[tuple[str, bool]]:
        if not isinstance(text, str):
            raise TokenizerError(f"HFTokenizer: expected text as str, got {type(text).__name__}")
        if self._added_re is None:
            return [(text, False)] if text else []
        pieces = self._added_re.split(text)   # odd positions: a special token with the space it strips
        return [(p.strip() if k % 2 else p, k % 2 == 1) for k, p in enumerate(pieces) if p]

    def _tokenize_text(self, text: str) -> list[str]:
        text = self.normalize(text)
        if self.kind == "WordPiece":
            return self.inner._tokenize_text(text)
        if self.kind == "BPE":
            if self.add_prefix_space and not text.startswith(" "):
                text = " " + text
            return self.inner._tokenize_text(text)
        return self._unigram(text)

    def _unigram(self, text: str) -> list[str]:
        """WhitespaceSplit (optional), then Metaspace: spaces become ▁, a ▁ goes in front, and with
        ``split`` each ▁ starts a new piece (``"▁a▁▁b"`` → ``▁a``, ``▁``, ``▁b``); then Viterbi."""
        m = self.meta_char
        unk = self._id_to_token[self.unk_id_unigram] if self.unk_id_unigram is not None else None
        out = []
        for k, word in enumerate(text.split() if self.whitespace_split else [text]):
            word = word.replace(" ", m)
            if not word:   # nothing left after the normalizer (e.g. DeBERTa-v3's Strip of " "): no ▁ either
                continue
            if (self.meta_prepend == "always" or (self.meta_prepend == "first" and k == 0)) and not word.startswith(m):
                word = m + word
            pieces = [p for p in re.split(f"(?={re.escape(m)})", word) if p] if self.meta_split else [word]
            for piece in pieces:
                out.extend(unigram_segment(piece, self.scores, unk_token=unk))
        return out

    # ---- ids → text ----------------------------------------------------------------------------
    def _tokens_to_text(self, tokens: list[str]) -> str:
        byte_level = self.inner._tokens_to_text if self.kind == "BPE" else None
        return run_decoder(self.spec.get("decoder"), tokens, byte_level, self.path)

    def decode(self, ids, skip_special_tokens: bool = False, clean_up_tokenization_spaces: bool | None = None) -> str:
        """What transformers 5's ``decode`` gives: the tokens of ``ids`` (without the special added tokens
        if asked) through the file's decoder, then transformers' clean-up if ``clean_up_tokenization_spaces``
        (None: as ``tokenizer_config.json`` says, else False) and the model is not BPE, which
        transformers 5 never cleans up."""
        ids = [i for i in self._check_ids(ids, "decode") if not (skip_special_tokens and i in self._skipped)]
        text = self._tokens_to_text([self._id_to_token[i] for i in ids])
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = bool(self.config.get("clean_up_tokenization_spaces", False))
        bpe_too = self.config.get("clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output")
        return clean_up_tokenization(text) if clean_up_tokenization_spaces and (self.kind != "BPE" or bpe_too) else text

    # ---- the post-processor ------------------------------------------------------------------
    def build_inputs(self, ids_a, ids_b=None) -> tuple[list[int], list[int]]:
        """The model's layout of one sequence or a pair, and the type (segment) ids, as the
        ``post_processor`` of the file says."""
        steps = [self.post] if self.post is None or self.post["type"] != "Sequence" else self.post["processors"]
        ids, types = list(ids_a) + list(ids_b or []), [0] * len(ids_a) + [1] * len(ids_b or [])
        for step in steps:
            if step is None or step["type"] == "ByteLevel":
                continue
            kind = step["type"]
            if kind == "TemplateProcessing":
                template = step["single"] if ids_b is None else step["pair"]
                ids, types = [], []
                for item in template:
                    if "SpecialToken" in item:
                        special = step["special_tokens"][item["SpecialToken"]["id"]]
                        ids += special["ids"]
                        types += [item["SpecialToken"]["type_id"]] * len(special["ids"])
                    else:
                        seq = ids_a if item["Sequence"]["id"] == "A" else ids_b
                        ids += list(seq)
                        types += [item["Sequence"]["type_id"]] * len(seq)
            elif kind in ("RobertaProcessing", "BertProcessing"):
                cls, sep = step["cls"][1], step["sep"][1]
                ids = [cls, *ids_a, sep]
                if ids_b is not None:
                    ids += ([sep] if kind == "RobertaProcessing" else []) + [*ids_b, sep]
                n_a = len(ids_a) + 2
                types = [0] * n_a + [0 if kind == "RobertaProcessing" else 1] * (len(ids) - n_a)
            else:
                raise TokenizerError(f"{self.path}: post-processor {kind!r} is not one minilm reads")
        return ids, types

    def __repr__(self) -> str:
        return f"HFTokenizer({self.kind}, vocab_size={self.vocab_size})"

    def save(self, directory) -> Path:
        """``tokenizer.json`` and ``tokenizer_config.json`` as they were read (transformers reads them)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "tokenizer.json").write_text(json.dumps(self.spec, ensure_ascii=False) + "\n", encoding="utf-8")
        config = self.config or {"tokenizer_class": "PreTrainedTokenizerFast", **self.roles}
        (directory / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n",
                                                         encoding="utf-8")
        return directory

    @classmethod
    def from_file(cls, path, config_path=None, defaults: dict | None = None) -> "HFTokenizer":
        """``defaults``: roles the class has when ``tokenizer_config.json`` does not name them
        (``class_roles.py``)."""
        path = Path(path)
        if path.stat().st_size > MAX_FILE_BYTES:
            raise TokenizerError(f"{path}: {path.stat().st_size} bytes, more than the {MAX_FILE_BYTES} minilm reads")
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
            config = json.loads(Path(config_path).read_text(encoding="utf-8")) if config_path else {}
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise TokenizerError(f"{path}: not a readable JSON file: {e}") from None
        if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
            raise TokenizerError(f"{path}: expected an object with a 'model' entry (a tokenizers file)")
        try:
            return cls(spec, config, path, defaults)
        except (KeyError, TypeError, ValueError) as e:
            raise TokenizerError(f"{path}: malformed tokenizer file ({type(e).__name__}: {e})") from None


def load_hf_tokenizer(directory):
    """The tokenizer of a Hugging Face folder: ``tokenizer.json`` (+ ``tokenizer_config.json`` for the
    roles), else ``vocab.txt`` (WordPiece), ``vocab.json`` + ``merges.txt`` (BPE) or a SentencePiece
    ``.model`` (``spiece.model`` …: ``spm_tokenizer.py``); None if none."""
    directory = Path(directory)
    config = directory / "tokenizer_config.json"
    if (directory / "tokenizer.json").is_file():
        return HFTokenizer.from_file(directory / "tokenizer.json", config if config.is_file() else None,
                                     default_roles(directory))
    if (directory / "vocab.txt").is_file():
        return WordPieceTokenizer.load(directory)
    if (directory / "vocab.json").is_file() and (directory / "merges.txt").is_file():
        return ByteLevelBPETokenizer.load(directory)
    from .spm_tokenizer import load_sentencepiece
    return load_sentencepiece(directory)
