"""What every minilm tokenizer shares: the vocabulary, the special tokens, ids ↔ tokens, files.

A tokenizer is a vocabulary (token ``i`` has id ``i``) plus a rule that cuts text into tokens of
that vocabulary. The three subclasses differ only in the rule:

* :class:`~minilm.tokenizers.char.CharTokenizer`: every character is a token;
* :class:`~minilm.tokenizers.wordpiece.WordPieceTokenizer`: BERT's WordPiece;
* :class:`~minilm.tokenizers.bpe.ByteLevelBPETokenizer`: GPT-2 / RoBERTa byte-level BPE.

Common behaviour, defined here once:

* **Special tokens** have *roles* named as in Hugging Face: ``pad_token``, ``unk_token``,
  ``cls_token``, ``sep_token``, ``mask_token``, ``bos_token``, ``eos_token``. Each role gives an
  attribute ``pad_id``, ``unk_id``, ... that is ``None`` when the tokenizer has no such token.
  ``special_ids`` lists the ids of all special tokens.
* An exact occurrence of a special token's string in the text (``"paris is the [MASK] ."``) is
  that special token; the text around it is tokenized as usual. (Case-sensitive, and no space is
  absorbed around it: Hugging Face's ``AddedToken`` with ``lstrip=rstrip=False``.)
* Ids are checked: an id outside ``[0, vocab_size)``, negative included, raises
  :class:`~autograd.errors.TokenizerError` naming the id and the vocabulary size.
* ``save(directory)`` writes plain text / JSON files; ``load(directory)`` reads them back. Never pickle.
"""
from __future__ import annotations

import json
import operator
import re
from pathlib import Path

import numpy as np

from autograd.errors import TokenizerError

ROLES = ("pad_token", "unk_token", "cls_token", "sep_token", "mask_token", "bos_token", "eos_token")
CONFIG_FILE = "tokenizer_config.json"


class BaseTokenizer:
    """A vocabulary with special tokens; subclasses define :meth:`_tokenize_text` and the files."""

    def __init__(self, tokens, roles: dict[str, str] | None = None, special_tokens=()):
        self._id_to_token = list(tokens)
        self._token_to_id: dict[str, int] = {}
        for i, tok in enumerate(self._id_to_token):
            if not isinstance(tok, str):
                raise TokenizerError(f"{type(self).__name__}: vocabulary entry {i} is {tok!r}, expected a str")
            if tok in self._token_to_id:
                raise TokenizerError(f"{type(self).__name__}: token {tok!r} appears twice in the "
                                     f"vocabulary (ids {self._token_to_id[tok]} and {i})")
            self._token_to_id[tok] = i
        self.roles = dict(roles or {})
        for role, tok in self.roles.items():
            if role not in ROLES:
                raise TokenizerError(f"{type(self).__name__}: unknown special-token role {role!r}; "
                                     f"expected one of {ROLES}")
            if tok not in self._token_to_id:
                raise TokenizerError(f"{type(self).__name__}: the {role} {tok!r} is not in the vocabulary")
        for role in ROLES:
            tok = self.roles.get(role)
            setattr(self, role.replace("_token", "_id"), None if tok is None else self._token_to_id[tok])
        specials = list(self.roles.values()) + [t for t in special_tokens if t not in self.roles.values()]
        for tok in specials:
            if not tok:
                raise TokenizerError(f"{type(self).__name__}: a special token cannot be the empty string")
            if tok not in self._token_to_id:
                raise TokenizerError(f"{type(self).__name__}: special token {tok!r} is not in the vocabulary")
        self.special_tokens = tuple(dict.fromkeys(specials))  # unique, in order
        longest_first = sorted(self.special_tokens, key=len, reverse=True)
        self._special_re = (re.compile("(" + "|".join(map(re.escape, longest_first)) + ")")
                            if self.special_tokens else None)

    # ---- the vocabulary --------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Number of tokens; valid ids are ``0 .. vocab_size - 1``."""
        return len(self._id_to_token)

    def __len__(self) -> int:
        return self.vocab_size

    @property
    def special_ids(self) -> list[int]:
        """Sorted ids of the special tokens (a new list: safe to keep or change)."""
        return sorted(self._token_to_id[t] for t in self.special_tokens)

    def get_vocab(self) -> dict[str, int]:
        """A copy of the token → id map."""
        return dict(self._token_to_id)

    def token_to_id(self, token: str) -> int:
        """The id of ``token``; raises TokenizerError if it is not in the vocabulary."""
        try:
            return self._token_to_id[token]
        except (KeyError, TypeError):
            raise TokenizerError(f"token_to_id: {token!r} is not in the vocabulary "
                                 f"({self.vocab_size} tokens)") from None

    def id_to_token(self, i) -> str:
        """The token with id ``i``; raises TokenizerError outside ``[0, vocab_size)``."""
        return self._id_to_token[self._check_id(i, "id_to_token")]

    def convert_tokens_to_ids(self, tokens) -> list[int]:
        """Ids of ``tokens``; an unknown token becomes ``unk_id``, or raises if there is no unk."""
        out = []
        for tok in tokens:
            i = self._token_to_id.get(tok)
            if i is None:
                if self.unk_id is None:
                    raise TokenizerError(f"convert_tokens_to_ids: {tok!r} is not in the vocabulary "
                                         f"and {type(self).__name__} has no unk_token")
                i = self.unk_id
            out.append(i)
        return out

    def convert_ids_to_tokens(self, ids) -> list[str]:
        """Tokens of ``ids`` (a list or 1-D array); raises TokenizerError on an id out of range."""
        return [self._id_to_token[i] for i in self._check_ids(ids, "convert_ids_to_tokens")]

    def _check_id(self, i, op: str) -> int:
        if isinstance(i, (bool, np.bool_)):
            raise TokenizerError(f"{op}: got the bool {i!r}, expected an integer id")
        try:
            i = operator.index(i)
        except TypeError:
            raise TokenizerError(f"{op}: got {i!r} of type {type(i).__name__}, expected an integer id") from None
        if not 0 <= i < self.vocab_size:
            raise TokenizerError(f"{op}: id {i} is outside the vocabulary: expected 0 <= id < "
                                 f"vocab_size = {self.vocab_size}")
        return i

    def _check_ids(self, ids, op: str) -> list[int]:
        if isinstance(ids, np.ndarray):
            if ids.ndim != 1:
                raise TokenizerError(f"{op}: expected a 1-D sequence of ids, got an array of shape {ids.shape}")
            ids = ids.tolist()
        elif isinstance(ids, (str, bytes)):
            raise TokenizerError(f"{op}: expected a sequence of integer ids, got {type(ids).__name__}")
        return [self._check_id(i, op) for i in ids]

    # ---- text → tokens → ids ---------------------------------------------------------------
    def split_on_special_tokens(self, text: str) -> list[tuple[str, bool]]:
        """Cut ``text`` at exact occurrences of special tokens (longest first):
        a list of ``(piece, is_special)``; the empty pieces between them are left out."""
        if not isinstance(text, str):
            raise TokenizerError(f"{type(self).__name__}: expected text as str, got {type(text).__name__}")
        if self._special_re is None:
            return [(text, False)] if text else []
        pieces = self._special_re.split(text)  # odd positions are the matched special tokens
        return [(p, k % 2 == 1) for k, p in enumerate(pieces) if p]

    def tokenize(self, text: str) -> list[str]:
        """Cut ``text`` into tokens of the vocabulary (special-token strings are kept whole)."""
        tokens = []
        for piece, is_special in self.split_on_special_tokens(text):
            tokens.extend([piece] if is_special else self._tokenize_text(piece))
        return tokens

    def _tokenize_text(self, text: str) -> list[str]:
        raise NotImplementedError

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        """Ids of ``text``; with ``add_special_tokens`` the model's single-sequence layout
        (``[CLS] … [SEP]``, or ``<s> … </s>`` for RoBERTa)."""
        ids = self.convert_tokens_to_ids(self.tokenize(text))
        return self.build_inputs(ids)[0] if add_special_tokens else ids

    def encode_pair(self, text_a: str, text_b: str) -> tuple[list[int], list[int]]:
        """``(ids, segment_ids)`` of a sentence pair in the model's layout (see :meth:`build_inputs`)."""
        return self.build_inputs(self.encode(text_a), self.encode(text_b))

    def build_inputs(self, ids_a, ids_b=None) -> tuple[list[int], list[int]]:
        """BERT layout (Devlin et al. 2019, §3; google-research/bert ``create_pretraining_data.py``):
        ``[CLS] A [SEP]`` or ``[CLS] A [SEP] B [SEP]``, with segment id 0 for ``[CLS]``, A and the
        first ``[SEP]`` and 1 for B and the last ``[SEP]``."""
        if self.cls_id is None or self.sep_id is None:
            raise TokenizerError(f"{type(self).__name__}: adding special tokens needs a cls_token and "
                                 f"a sep_token; this vocabulary has roles {sorted(self.roles)}")
        ids = [self.cls_id, *ids_a, self.sep_id]
        segments = [0] * len(ids)
        if ids_b is not None:
            ids += [*ids_b, self.sep_id]
            segments += [1] * (len(ids_b) + 1)
        return ids, segments

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """Text of ``ids``; raises TokenizerError on an id out of range (negative included)."""
        ids = self._check_ids(ids, "decode")
        special = set(self.special_ids)
        tokens = [self._id_to_token[i] for i in ids if not (skip_special_tokens and i in special)]
        return self._tokens_to_text(tokens)

    def _tokens_to_text(self, tokens: list[str]) -> str:
        raise NotImplementedError

    # ---- files -----------------------------------------------------------------------------
    def _config(self) -> dict:
        """What ``tokenizer_config.json`` holds; subclasses add their options."""
        config = {"tokenizer_class": type(self).__name__, **self.roles}
        extra = [t for t in self.special_tokens if t not in self.roles.values()]
        if extra:
            config["additional_special_tokens"] = extra
        return config

    def _write_config(self, directory: Path) -> None:
        text = json.dumps(self._config(), ensure_ascii=False, indent=2) + "\n"
        (directory / CONFIG_FILE).write_text(text, encoding="utf-8")

    @staticmethod
    def read_config(directory, expected_classes: tuple[str, ...]) -> dict:
        """``tokenizer_config.json`` of ``directory`` ({} if absent), with its roles as plain strings.
        Accepts Hugging Face's files too (a role may be written ``{"content": "[CLS]", ...}``)."""
        path = Path(directory) / CONFIG_FILE
        if not path.exists():
            return {}
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise TokenizerError(f"load: {path} is not valid JSON: {e}") from None
        if not isinstance(config, dict):
            raise TokenizerError(f"load: {path} holds a {type(config).__name__}, expected a JSON object")
        cls = config.get("tokenizer_class")
        if cls is not None and cls not in expected_classes:
            raise TokenizerError(f"load: {path} is for a {cls}; expected one of {expected_classes}")
        for key in (*ROLES, "additional_special_tokens"):
            value = config.get(key)
            if isinstance(value, dict):
                config[key] = value.get("content")
            elif isinstance(value, list):
                config[key] = [v.get("content") if isinstance(v, dict) else v for v in value]
        return config

    @staticmethod
    def roles_from_config(config: dict, defaults: dict[str, str], vocab) -> dict[str, str]:
        """Roles named in ``config`` (a ``None`` value removes one), else ``defaults`` where the
        token is in ``vocab``."""
        roles = {r: t for r, t in defaults.items() if t in vocab}
        for role in ROLES:
            if role in config:
                if config[role] is None:
                    roles.pop(role, None)
                else:
                    roles[role] = config[role]
        return roles


def json_key(path, key: str) -> str:
    """``key`` of the JSON object in ``path`` as a string ("" if the file, the object or the key is missing)."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8")).get(key, "")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""
