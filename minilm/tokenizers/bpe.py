"""Byte-level BPE, the tokenizer of GPT-2 and RoBERTa (Radford et al. 2019 §2.2; openai/gpt-2, src/encoder.py).

``text`` → special tokens cut out whole → GPT-2 pre-tokens (``pretokenize.py``) → each pre-token's
UTF-8 bytes, written with the byte map (space → ``Ġ``) → BPE merges, lowest rank first (cached
per pre-token) → ids. The byte map, the merge loop and merge training are Task 6.2
(``solutions/task06_roberta/bpe.py``).

Layout of a trained vocabulary: the special tokens first (RoBERTa's order by default:
``<s>=0, <pad>=1, </s>=2, <unk>=3, <mask>=4``), then the 256 byte symbols in byte order, then one
token per merge in the order learned. Since every byte has a token, every string encodes without
``<unk>``, and ``decode(encode(text)) == text`` for every string that is valid Unicode.

**Lone surrogates** (``"\\ud800"``: a Python ``str`` may hold one, but it is not a Unicode
character and has no UTF-8 encoding) make ``encode`` raise :class:`~autograd.errors.TokenizerError`
naming the position, as GPT-2's encoder (a ``UnicodeEncodeError``) and Hugging Face's Rust
tokenizer do; minilm does not invent bytes for them. ``decode`` of ids whose bytes are not valid
UTF-8 (e.g. half of a multi-byte character) gives U+FFFD for the bad bytes (``errors="replace"``).

Files: ``vocab.json`` (token → id), ``merges.txt`` (GPT-2 format: a ``#version: 0.2`` header, then
one merge ``left right`` per line, line k = rank k) and ``tokenizer_config.json`` (the roles of the
special tokens). :meth:`ByteLevelBPETokenizer.load` also reads Hugging Face GPT-2 / RoBERTa / BART /
DeBERTa folders, with what transformers' class of the family (``tokenizer_class``, else
``config.json``'s ``model_type``) has by default: its special tokens where the config names none
(GPT-2's ``<|endoftext|>`` as bos, eos and unk; DeBERTa's ``[CLS]`` …). Their mask token keeps the
space before it: transformers 5 builds these classes from ``vocab.json`` + ``merges.txt`` without
``lstrip`` (roberta-base's ``<mask>`` takes it because its ``tokenizer.json`` says so: ``hf_json.py``).

``add_special_tokens`` lays a sequence out as transformers does: ``<s> A </s>`` (RoBERTa, BART: a
tokenizer with a cls and a sep token), else GPT-2's ``A`` — nothing added, unless
``add_bos_token`` / ``add_eos_token`` (``tokenizer_config.json``) put ``<|endoftext|>`` around it.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from autograd import tasks
from autograd.errors import ConfigError, TokenizerError

from .base import BaseTokenizer, json_key
from .char import read_vocab_json
from .pretokenize import gpt2_pretokenize

bytes_to_unicode = tasks.bind("task06_roberta.bpe", "bytes_to_unicode")  # Task 6.2: solutions/task06_roberta/bpe.py
bpe_merge = tasks.bind("task06_roberta.bpe", "bpe_merge")  # Task 6.2: same file
train_merges = tasks.bind("task06_roberta.bpe", "train_merges")  # Task 6.2: same file

ROBERTA_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
ROBERTA_ROLES = {"bos_token": "<s>", "cls_token": "<s>", "pad_token": "<pad>", "eos_token": "</s>",
                 "sep_token": "</s>", "unk_token": "<unk>", "mask_token": "<mask>"}
GPT2_ROLES = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
DEBERTA_ROLES = {"bos_token": "[CLS]", "cls_token": "[CLS]", "eos_token": "[SEP]", "sep_token": "[SEP]",
                 "unk_token": "[UNK]", "pad_token": "[PAD]", "mask_token": "[MASK]"}
FAMILY_ROLES = {"gpt2": GPT2_ROLES, "roberta": ROBERTA_ROLES, "bart": ROBERTA_ROLES, "deberta": DEBERTA_ROLES}
HF_CLASSES = ("ByteLevelBPETokenizer", "RobertaTokenizer", "RobertaTokenizerFast", "GPT2Tokenizer",
              "GPT2TokenizerFast", "BartTokenizer", "BartTokenizerFast", "DebertaTokenizer", "DebertaTokenizerFast")
MERGES_HEADER = "#version: 0.2"
CACHE_LIMIT = 100_000  # pre-tokens remembered by one tokenizer (the cache is cleared when full)


class ByteLevelBPETokenizer(BaseTokenizer):
    """Byte-level BPE over ``vocab`` (a token list in id order, or a token → id dict) and
    ``merges`` (pairs, rank = position). Usually made by :meth:`train` or :meth:`load`."""

    def __init__(self, vocab, merges, *, roles: dict[str, str] | None = None, additional_special_tokens=(),
                 add_bos_token: bool = False, add_eos_token: bool = False):
        if isinstance(vocab, dict):
            vocab = [tok for tok, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
        vocab = list(vocab)
        if roles is None:  # RoBERTa's names, where the vocabulary has them
            present = set(vocab)
            roles = {role: tok for role, tok in ROBERTA_ROLES.items() if tok in present}
        super().__init__(vocab, roles=roles, special_tokens=additional_special_tokens)
        self.merges = [tuple(pair) for pair in merges]
        for k, pair in enumerate(self.merges):
            if len(pair) != 2 or not all(isinstance(s, str) and s for s in pair):
                raise TokenizerError(f"ByteLevelBPETokenizer: merge {k} is {pair!r}, expected two non-empty strings")
        self.ranks = {pair: k for k, pair in enumerate(self.merges)}
        self.byte_encoder = bytes_to_unicode()  # byte (0..255) -> printable character
        self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
        self._cache: dict[str, list[str]] = {}
        self.add_bos_token, self.add_eos_token = bool(add_bos_token), bool(add_eos_token)   # GPT-2's layout only

    def __repr__(self) -> str:
        return f"ByteLevelBPETokenizer(vocab_size={self.vocab_size}, merges={len(self.merges)})"

    # ---- text ↔ tokens ---------------------------------------------------------------------
    def tokenize(self, text: str) -> list[str]:
        if isinstance(text, str):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as e:
                raise TokenizerError(
                    f"ByteLevelBPETokenizer: the text holds a lone surrogate U+{ord(text[e.start]):04X} at "
                    f"position {e.start}, which has no UTF-8 bytes; expected valid Unicode text") from None
        return super().tokenize(text)

    def pretokenize(self, text: str) -> list[str]:
        """GPT-2's pre-tokens of ``text``, byte-mapped (``" world"`` → ``"Ġworld"``)."""
        return ["".join(self.byte_encoder[b] for b in piece.encode("utf-8")) for piece in gpt2_pretokenize(text)]

    def _tokenize_text(self, text: str) -> list[str]:
        tokens = []
        for word in self.pretokenize(text):
            pieces = self._cache.get(word)
            if pieces is None:
                pieces = list(bpe_merge(word, self.ranks))
                if len(self._cache) >= CACHE_LIMIT:
                    self._cache.clear()
                self._cache[word] = pieces
            tokens.extend(pieces)
        return tokens

    def _tokens_to_text(self, tokens: list[str]) -> str:
        special = set(self.special_tokens)
        out, buffer = [], bytearray()
        for tok in tokens:
            if tok in special:  # special tokens are written as they are, not through the byte map
                out.append(buffer.decode("utf-8", errors="replace"))
                buffer.clear()
                out.append(tok)
                continue
            for c in tok:
                b = self.byte_decoder.get(c)
                buffer.extend(c.encode("utf-8") if b is None else (b,))  # a foreign vocab's odd char: as is
        out.append(buffer.decode("utf-8", errors="replace"))
        return "".join(out)

    def build_inputs(self, ids_a, ids_b=None) -> tuple[list[int], list[int]]:
        """RoBERTa layout: ``<s> A </s>`` or ``<s> A </s></s> B </s>``, segment ids all 0 (RoBERTa has
        no segment embedding to speak of: one type). Without a cls and a sep token, GPT-2's: ``A`` or
        ``A B`` (segments 0 and 1), each with bos / eos in front / behind only if ``add_bos_token`` /
        ``add_eos_token`` (transformers' GPT2Tokenizer, ``update_post_processor``)."""
        if self.cls_id is not None and self.sep_id is not None:
            ids = [self.cls_id, *ids_a, self.sep_id]
            if ids_b is not None:
                ids += [self.sep_id, *ids_b, self.sep_id]
            return ids, [0] * len(ids)
        bos = [self.bos_id] if self.add_bos_token and self.bos_id is not None else []
        eos = [self.eos_id] if self.add_eos_token and self.eos_id is not None else []
        first, second = bos + list(ids_a) + eos, [] if ids_b is None else bos + list(ids_b) + eos
        return first + second, [0] * len(first) + [1] * len(second)

    # ---- training ----------------------------------------------------------------------------
    @classmethod
    def train(cls, texts, vocab_size: int, min_frequency: int = 2,
              special_tokens=ROBERTA_SPECIALS) -> "ByteLevelBPETokenizer":
        """Learn ``vocab_size - len(special_tokens) - 256`` merges from ``texts`` (Task 6.2's
        ``train_merges`` over the byte-mapped pre-token counts). Deterministic: ties between equally
        frequent pairs go to the pair that sorts first. Special-token strings in the texts are not
        counted. A merge whose string is already a token adds no new id (rare), so the vocabulary
        can come out slightly smaller than ``vocab_size``."""
        if isinstance(texts, str):
            texts = [texts]
        special_tokens = tuple(dict.fromkeys(special_tokens))
        num_merges = vocab_size - len(special_tokens) - 256
        if num_merges < 0:
            raise ConfigError(f"ByteLevelBPETokenizer.train: vocab_size={vocab_size} is too small: it needs "
                              f"{len(special_tokens)} special tokens + 256 byte symbols = "
                              f"{len(special_tokens) + 256} at least")
        byte_map = bytes_to_unicode()
        alphabet = [byte_map[b] for b in range(256)]
        roles = {role: tok for role, tok in ROBERTA_ROLES.items() if tok in special_tokens}
        probe = cls([*special_tokens, *alphabet], [], roles=roles, additional_special_tokens=special_tokens)
        counts = Counter()
        for text in texts:
            for piece, is_special in probe.split_on_special_tokens(text):
                if not is_special:
                    counts.update(probe.pretokenize(piece))
        merges = train_merges(dict(sorted(counts.items())), num_merges, min_frequency=min_frequency)
        vocab = dict.fromkeys([*special_tokens, *alphabet, *(a + b for a, b in merges)])
        return cls(list(vocab), merges, roles=roles, additional_special_tokens=special_tokens)

    # ---- files -----------------------------------------------------------------------------
    def save(self, directory) -> Path:
        """Write ``vocab.json``, ``merges.txt`` and ``tokenizer_config.json`` into ``directory``."""
        directory = Path(directory)
        for a, b in self.merges:
            if any(c.isspace() for c in a + b):
                raise TokenizerError(f"ByteLevelBPETokenizer.save: merge ({a!r}, {b!r}) holds whitespace "
                                     "and cannot be written as a line of merges.txt")
        directory.mkdir(parents=True, exist_ok=True)
        vocab_text = json.dumps(self._token_to_id, ensure_ascii=False) + "\n"
        (directory / "vocab.json").write_text(vocab_text, encoding="utf-8")
        merges_text = "".join(f"{a} {b}\n" for a, b in self.merges)
        (directory / "merges.txt").write_text(f"{MERGES_HEADER}\n{merges_text}", encoding="utf-8")
        self._write_config(directory)
        return directory

    @classmethod
    def from_files(cls, vocab_file, merges_file, *, roles: dict[str, str] | None = None,
                   additional_special_tokens=()) -> "ByteLevelBPETokenizer":
        """A tokenizer from a GPT-2-format ``vocab.json`` and ``merges.txt``."""
        return cls(read_vocab_json(Path(vocab_file)), read_merges(merges_file), roles=roles,
                   additional_special_tokens=additional_special_tokens)

    @classmethod
    def load(cls, directory) -> "ByteLevelBPETokenizer":
        """Read what :meth:`save` wrote, or a Hugging Face GPT-2 / RoBERTa tokenizer folder (the roles
        its config names, else its class's: GPT-2's when the class or ``config.json`` says so)."""
        directory = Path(directory)
        config = cls.read_config(directory, HF_CLASSES)
        vocab = read_vocab_json(directory / "vocab.json")
        kind = config.get("tokenizer_class") or json_key(directory / "config.json", "model_type")
        defaults = FAMILY_ROLES.get(kind.lower().removesuffix("tokenizerfast").removesuffix("tokenizer"), ROBERTA_ROLES)
        roles = cls.roles_from_config(config, defaults, vocab)
        extra = [t for t in config.get("additional_special_tokens") or [] if t in vocab]
        return cls(vocab, read_merges(directory / "merges.txt"), roles=roles, additional_special_tokens=extra,
                   add_bos_token=bool(config.get("add_bos_token")), add_eos_token=bool(config.get("add_eos_token")))


def read_merges(path) -> list[tuple[str, str]]:
    """The merges of a GPT-2 ``merges.txt``: an optional ``#version`` first line, then ``left right``
    per line (rank = line index after the header); blank lines are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        raise TokenizerError(f"load: {path} does not exist") from None
    except UnicodeDecodeError as e:
        raise TokenizerError(f"load: {path} is not UTF-8 text: {e}") from None
    merges = []
    for k, line in enumerate(lines):
        if (k == 0 and line.startswith("#version")) or not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise TokenizerError(f"load: {path} line {k + 1} is {line!r}, expected two symbols 'left right'")
        merges.append((parts[0], parts[1]))
    return merges
