"""The character tokenizer: every character is one token.

The smallest tokenizer that works, used by ``minilm demo`` (the six toy sentences as characters)
and for GPT training on raw text. Layout of the vocabulary: the special tokens first, in the order
given (by default ``[PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4``), then the characters in
sorted (code point) order.

A character outside the vocabulary either raises :class:`~autograd.errors.TokenizerError`
naming the characters and their positions (``unknown="error"``, the default: silent ``[UNK]`` s
hide data bugs), or becomes ``[UNK]`` (``unknown="unk"``).
"""
from __future__ import annotations

import json
from pathlib import Path

from autograd.errors import ConfigError, TokenizerError

from .base import BaseTokenizer

DEFAULT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
BERT_ROLES = {"[PAD]": "pad_token", "[UNK]": "unk_token", "[CLS]": "cls_token",
              "[SEP]": "sep_token", "[MASK]": "mask_token"}
UNKNOWN_MODES = ("error", "unk")


class CharTokenizer(BaseTokenizer):
    """Characters as tokens. ``CharTokenizer(chars)`` or ``CharTokenizer.from_texts(texts)``.

    >>> tok = CharTokenizer.from_texts(["cats eat fish"])
    >>> tok.encode("eat"), tok.cls_id
    ([8, 6, 13], 2)
    """

    def __init__(self, chars, specials=DEFAULT_SPECIALS, unknown: str = "error"):
        if unknown not in UNKNOWN_MODES:
            raise ConfigError(f"CharTokenizer: unknown={unknown!r}, expected one of {UNKNOWN_MODES}")
        specials = tuple(specials)
        if unknown == "unk" and "[UNK]" not in specials:
            raise ConfigError(f"CharTokenizer: unknown='unk' needs '[UNK]' among the specials {specials}")
        chars = list(chars)
        for c in chars:
            if not isinstance(c, str) or len(c) != 1:
                raise TokenizerError(f"CharTokenizer: expected single characters, got {c!r}")
        alphabet = sorted(set(chars) - set(specials))
        roles = {role: tok for tok, role in BERT_ROLES.items() if tok in specials}
        super().__init__([*specials, *alphabet], roles=roles, special_tokens=specials)
        self.unknown = unknown
        self.chars = tuple(alphabet)

    @classmethod
    def from_texts(cls, texts, specials=DEFAULT_SPECIALS, unknown: str = "error") -> "CharTokenizer":
        """The characters of ``texts`` (an iterable of str, or one str); occurrences of the special
        tokens' strings in the texts are not counted as characters."""
        if isinstance(texts, str):
            texts = [texts]
        probe = cls([], specials=specials)  # only to cut the texts at special tokens
        chars = set()
        for k, text in enumerate(texts):
            if not isinstance(text, str):
                raise TokenizerError(f"CharTokenizer.from_texts: text {k} is a {type(text).__name__}, expected str")
            for piece, is_special in probe.split_on_special_tokens(text):
                if not is_special:
                    chars.update(piece)
        return cls(chars, specials=specials, unknown=unknown)

    def tokenize(self, text: str) -> list[str]:
        tokens, unknown, offset = [], [], 0
        for piece, is_special in self.split_on_special_tokens(text):
            if is_special:
                tokens.append(piece)
            else:
                for k, c in enumerate(piece):
                    if c in self._token_to_id:
                        tokens.append(c)
                    else:
                        unknown.append((offset + k, c))
                        tokens.append("[UNK]")
            offset += len(piece)
        if unknown and self.unknown == "error":
            shown = ", ".join(f"{c!r} (U+{ord(c):04X}) at position {pos}" for pos, c in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise TokenizerError(
                f"CharTokenizer.tokenize: {len(unknown)} character(s) not in the vocabulary: {shown}{more}. "
                f"Build the vocabulary from texts that contain them, or use unknown='unk'")
        return tokens

    def _tokens_to_text(self, tokens: list[str]) -> str:
        return "".join(tokens)

    # ---- files -----------------------------------------------------------------------------
    def _config(self) -> dict:
        return {**super()._config(), "specials": list(self.special_tokens), "unknown": self.unknown}

    def save(self, directory) -> Path:
        """Write ``vocab.json`` (token → id) and ``tokenizer_config.json`` into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self._token_to_id, ensure_ascii=False, indent=0) + "\n"
        (directory / "vocab.json").write_text(text, encoding="utf-8")
        self._write_config(directory)
        return directory

    @classmethod
    def load(cls, directory) -> "CharTokenizer":
        """Read what :meth:`save` wrote; the ids must come out exactly as in ``vocab.json``."""
        directory = Path(directory)
        config = cls.read_config(directory, ("CharTokenizer",))
        vocab = read_vocab_json(directory / "vocab.json")
        specials = config.get("specials", [t for t in DEFAULT_SPECIALS if t in vocab])
        tok = cls([t for t in vocab if t not in specials], specials=specials,
                  unknown=config.get("unknown", "error"))
        if tok.get_vocab() != vocab:
            raise TokenizerError(f"CharTokenizer.load: {directory / 'vocab.json'} does not have the "
                                 "CharTokenizer layout (special tokens first, then sorted characters)")
        return tok


def read_vocab_json(path: Path) -> dict[str, int]:
    """A ``vocab.json`` (token → id, the ids exactly 0..n-1), in id order; TokenizerError otherwise."""
    try:
        vocab = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TokenizerError(f"load: {path} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TokenizerError(f"load: {path} is not valid JSON: {e}") from None
    if not isinstance(vocab, dict) or not all(isinstance(i, int) and not isinstance(i, bool)
                                              for i in vocab.values()):
        raise TokenizerError(f"load: {path} must be a JSON object mapping each token to an integer id")
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise TokenizerError(f"load: the ids in {path} must be exactly 0..{len(vocab) - 1}, each once")
    return dict(sorted(vocab.items(), key=lambda kv: kv[1]))
