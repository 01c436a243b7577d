"""The tokenizer of a SentencePiece ``.model`` file (read by ``sentencepiece_model.py``), id for id
as ``sentencepiece`` encodes, and laid out as transformers' tokenizer of the family (T5, XLNet,
ALBERT / DeBERTa-v2, XLM-R).

Encoding follows ``sentencepiece_processor.cc`` / ``normalizer.cc``: (1) normalise: user-defined
pieces are kept as they are; elsewhere the *longest* key of the charsmap (``precompiled.py``'s trie)
that starts at the cursor is replaced; leading, trailing and repeated spaces are dropped
(``remove_extra_whitespaces``), ``▁`` goes in front (``add_dummy_prefix``), spaces become ``▁``;
(2) segment the whole normalised line: Unigram by Viterbi (``unigram.py``, Kudo 2018, §3) between
user-defined pieces, BPE by merging the adjacent pair whose union is the piece of highest score
(Sennrich et al. 2016, §3.1, with SentencePiece's scores as the merge ranks: Task 6.2's
``bpe_merge``); (3) an unknown character is the unknown piece (consecutive ones fused into one), or
its UTF-8 bytes ``<0x..>`` with ``byte_fallback``. Special-token strings (``</s>``, ``<extra_id_0>``)
are cut out of the text first, as transformers does (``sentencepiece`` itself would spell them out).
What the transformers class of the family adds (layout, file name, special tokens, ALBERT's and
XLNet's preprocessing, DeBERTa-v2's normaliser, the Metaspace decoder) is in ``spm_families.py``.
"""
from __future__ import annotations

from pathlib import Path

from autograd.errors import TokenizerError

from .base import BaseTokenizer, json_key
from .bpe import bpe_merge
from .decoders import metaspace_chain
from .precompiled import PrecompiledCharsmap
from .sentencepiece_model import (BYTE, MAX_MODEL_BYTES, NORMAL, UNUSED, USER_DEFINED, SentencePieceModel,
                                  parse_model)
from .spm_families import (APPEND_ORDER, CLASSES, LAYOUT_CLASS, LAYOUT_ROLES, deberta_v2_normalizer,
                           family_class, preprocessor)
from .unigram import unigram_segment

SPACE = "\u2581"                   # ▁, SentencePiece's visible space
FOLDER_FILES = ("spiece.model", "sentencepiece.bpe.model", "spm.model", "tokenizer.model")


# ---- normalisation -----------------------------------------------------------------------------

def longest_rule(cmap: PrecompiledCharsmap, key: bytes) -> tuple[int, str] | None:
    """``(bytes matched, replacement)`` of the longest key of the charsmap's trie that starts ``key``
    (darts-clone's commonPrefixSearch, as ``normalizer.cc`` uses it), or None."""
    if not len(cmap.units):
        return None
    unit = cmap._unit(0)
    node, found = (unit >> 10) << ((unit & 512) >> 6), None
    for depth, byte in enumerate(key, 1):
        node ^= byte
        unit = cmap._unit(node)
        if (unit & ((1 << 31) | 0xFF)) != byte:            # no edge with this label
            break
        node ^= (unit >> 10) << ((unit & 512) >> 6)
        if (unit >> 8) & 1:                                 # a key ends here: its value sits at the child
            found = (depth, cmap._unit(node) & ((1 << 31) - 1))
    if found is None:
        return None
    at = found[1]
    end = cmap.pool.find(b"\0", at)
    if at >= len(cmap.pool) or end < 0:
        raise TokenizerError(f"{cmap.source}: replacement at {at} runs past the {len(cmap.pool)}-byte pool")
    return found[0], cmap.pool[at:end].decode("utf-8", errors="replace")


class SentencePieceNormalizer:
    """``normalizer.cc``'s Normalize: the charsmap's rules, then the whitespace options."""

    def __init__(self, model: SentencePieceModel, user_defined: list[str], where: str):
        self.model = model
        self.cmap = PrecompiledCharsmap(model.charsmap, f"{where}: precompiled_charsmap") if model.charsmap else None
        self.user_defined = sorted(user_defined, key=len, reverse=True)

    def _prefix(self, text: str, pos: int) -> tuple[str, int]:
        """The normalised form of what starts at ``pos`` and how many characters it consumes."""
        for piece in self.user_defined:                    # kept verbatim, longest first
            if text.startswith(piece, pos):
                return piece, len(piece)
        if self.cmap is not None:
            key = text[pos:pos + 16].encode("utf-8")        # the rules' keys are a few characters long
            rule = longest_rule(self.cmap, key)
            if rule is not None:
                return rule[1], len(key[:rule[0]].decode("utf-8", errors="ignore"))
        return text[pos], 1

    def __call__(self, text: str) -> str:
        m, pos, out = self.model, 0, []
        if not text:
            return ""
        space = SPACE if m.escape_whitespaces else " "
        while m.remove_extra_whitespaces and pos < len(text):   # leading spaces go
            s, k = self._prefix(text, pos)
            if s != " ":
                break
            pos += k
        if m.add_dummy_prefix and not m.whitespace_suffix:
            out.append(space)
        prev_space = m.remove_extra_whitespaces
        while pos < len(text):
            s, k = self._prefix(text, pos)
            if prev_space:
                s = s.lstrip(" ")                           # a run of spaces becomes one
            if s:
                out.append(s.replace(" ", space))
                prev_space = m.remove_extra_whitespaces and s.endswith(" ")
            pos += k
        normalized = "".join(out)
        if m.remove_extra_whitespaces:
            normalized = normalized.rstrip(space)
        if m.add_dummy_prefix and m.whitespace_suffix:
            normalized += space
        return normalized


# ---- the tokenizer -----------------------------------------------------------------------------

FAIRSEQ_HEAD = ["<s>", "<pad>", "</s>", "<unk>"]


class SentencePieceTokenizer(BaseTokenizer):
    """The tokenizer of a ``.model`` file: ``tokenize`` gives SentencePiece's pieces, ``encode`` its ids
    (``layout`` None) or, with a layout, the ids transformers' tokenizer of that family gives."""

    def __init__(self, model: SentencePieceModel, layout: str | None = None, *, raw: bytes = b"",
                 where: str = ".model", config: dict | None = None, kind: str = ""):
        config = config or {}
        if model.model_type not in ("unigram", "bpe") or (model.model_type == "unigram" and model.byte_fallback):
            raise TokenizerError(f"{where}: a {model.model_type} model{' with byte_fallback' * model.byte_fallback}"
                                 "; minilm reads unigram (without byte_fallback) and bpe models")
        self.model, self.layout, self.raw, self.where = model, layout, raw, where
        self.tokenizer_class = family_class(kind) or LAYOUT_CLASS.get(layout, "SentencePieceTokenizer")
        self.options = {k: v for k, v in config.items() if k not in (*APPEND_ORDER, "tokenizer_class",
                                                                     "additional_special_tokens")}
        pieces = [p for p, _, _ in model.pieces]
        tokens = pieces
        if layout == "fairseq":      # fairseq's dictionary: four tokens, then piece k at id k + 1 (k >= 3)
            clash = [p for p in pieces[3:] if p in FAIRSEQ_HEAD + ["<mask>"]]
            if clash:
                raise TokenizerError(f"{where}: piece {clash[0]!r} after the first three clashes with fairseq's "
                                     f"tokens {FAIRSEQ_HEAD + ['<mask>']} (XLM-R's model has none of them there)")
            tokens = FAIRSEQ_HEAD + pieces[3:] + ["<mask>"]
        n_extra = int(config.get("extra_ids", 100)) if layout == "t5" else 0    # T5's sentinels, last id first
        extra = [f"<extra_id_{k}>" for k in reversed(range(n_extra))]
        tokens = tokens + [t for t in extra if t not in set(tokens)]
        ids = {r: getattr(model, r.replace("_token", "_id"))
               for r in ("unk_token", "bos_token", "eos_token", "pad_token")}
        defaults = {r: pieces[i] for r, i in ids.items() if i >= 0}
        defaults.update(LAYOUT_ROLES.get(layout, {}))
        if layout == "fairseq":
            defaults.update(bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>")
        wanted = {**defaults, **{r: config[r] for r in APPEND_ORDER if r in config}}
        tokens = tokens + list(dict.fromkeys(wanted[r] for r in APPEND_ORDER      # DeBERTa-v3's [MASK]: after
                                             if wanted.get(r) and wanted[r] not in set(tokens)))   # the pieces
        roles = self.roles_from_config(config, defaults, set(tokens))
        kinds = {p: k for p, _, k in model.pieces}
        self.user_defined = [p for p, k in kinds.items() if k == USER_DEFINED]
        specials = extra + [t for t in config.get("additional_special_tokens") or [] if t in set(tokens)]
        super().__init__(tokens, roles=roles, special_tokens=specials)
        self.unk_piece = pieces[model.unk_id]
        self.scores = {p: s for p, s, k in model.pieces if k == NORMAL}           # Viterbi's pieces
        self.merge_scores = {p: s for p, s, k in model.pieces if k in (NORMAL, USER_DEFINED, UNUSED)}
        self.unused = {p for p, k in kinds.items() if k == UNUSED}
        self.byte_pieces = {p: int(p[3:5], 16) for p, k in kinds.items() if k == BYTE}
        self._ranks = self._ranks_used = None      # BPE's merge ranks, built on first use
        if self.tokenizer_class == "DebertaV2Tokenizer":   # transformers' own pipeline, around the file's rules
            rules = PrecompiledCharsmap(model.charsmap, f"{where}: precompiled_charsmap") if model.charsmap else None
            self.normalize = deberta_v2_normalizer(config, where, rules)
        else:
            self.normalize = SentencePieceNormalizer(model, self.user_defined, where)
        self.preprocess = preprocessor(config, kind)

    # ---- text → pieces ---------------------------------------------------------------------------
    def _split_user_defined(self, text: str) -> list[tuple[str, bool]]:
        """``text`` cut at user-defined pieces (longest first): ``[(part, is_user_defined)]``."""
        parts, pos, start = [], 0, 0
        longest = sorted(self.user_defined, key=len, reverse=True)
        while pos < len(text):
            hit = next((u for u in longest if text.startswith(u, pos)), None)
            if hit is None:
                pos += 1
                continue
            parts += [(text[start:pos], False)] * (pos > start) + [(hit, True)]
            pos = start = pos + len(hit)
        return parts + [(text[start:], False)] * (len(text) > start)

    def _tokenize_text(self, text: str) -> list[str]:
        normalized = self.normalize(self.preprocess(text))
        parts = self._split_user_defined(normalized) if self.user_defined else [(normalized, False)]
        if self.model.model_type == "unigram":
            out = []
            for part, is_user in parts:
                out += [part] if is_user else unigram_segment(part, self.scores, unk_token=self.unk_piece)
            return out
        return self._bpe(parts)

    def _bpe(self, parts: list[tuple[str, bool]]) -> list[str]:
        """SentencePiece's BPE (``bpe_model.cc``) through Task 6.2's ``bpe_merge``: the pair whose union
        is a piece merges first, highest score first. SentencePiece merges one occurrence at a time,
        leftmost first, ``bpe_merge`` every occurrence of the pair: the same pieces, since a piece's
        score is below its parts' (a BPE piece is learned after them). An unused piece left at the end
        is merged again without the unused pieces (``bpe_model.cc`` splits it back the same way)."""
        if self._ranks is None:
            order = sorted(((-score, piece) for piece, score in self.merge_scores.items() if len(piece) > 1))
            pairs = [(p[:k], p[k:]) for _, p in order for k in range(1, len(p))]
            self._ranks = {pair: rank for rank, pair in enumerate(pairs)}    # a pair makes one piece
            self._ranks_used = {pair: r for pair, r in self._ranks.items() if "".join(pair) not in self.unused}
        symbols = [s for part, is_user in parts for s in ([part] if is_user else list(part))]
        out = []
        for s in bpe_merge(symbols, self._ranks):
            out += bpe_merge(list(s), self._ranks_used) if s in self.unused else [s]
        return self._unknowns(out)

    def _unknowns(self, symbols: list[str]) -> list[str]:
        """A symbol that is no piece: its bytes ``<0x..>`` (byte_fallback), else the unknown piece,
        consecutive ones fused (``sentencepiece_processor.cc``)."""
        out, last_unk = [], False
        for s in symbols:
            known = s in self.merge_scores
            if not known and self.byte_pieces:
                out += [f"<0x{b:02X}>" for b in s.encode("utf-8")]
            elif not known:
                if not last_unk:
                    out.append(self.unk_piece)
            else:
                out.append(s)
            last_unk = not known
        return out

    # ---- ids → text, layouts, files ----------------------------------------------------------------
    def _tokens_to_text(self, tokens: list[str]) -> str:
        if self.tokenizer_class in CLASSES:        # transformers 5 decodes a family's pieces with Metaspace
            return "".join(metaspace_chain(tokens, SPACE, self.model.add_dummy_prefix))
        raw = bytearray()
        for t in tokens:
            raw += bytes([self.byte_pieces[t]]) if t in self.byte_pieces else t.encode("utf-8")
        text = raw.decode("utf-8", errors="replace").replace(SPACE, " ")
        return text[1:] if self.model.add_dummy_prefix and text.startswith(" ") else text

    def build_inputs(self, ids_a, ids_b=None) -> tuple[list[int], list[int]]:
        a, b = list(ids_a), None if ids_b is None else list(ids_b)
        if self.layout in (None, "cls_sep"):
            if self.layout is None:
                return a + (b or []), [0] * len(a) + [1] * len(b or [])
            return super().build_inputs(a, b)
        if self.layout == "t5":
            ids = a + [self.eos_id] + ([] if b is None else b + [self.eos_id])
            return ids, [0] * len(ids)
        if self.layout == "xlnet":
            first = a + [self.sep_id]
            second = [] if b is None else b + [self.sep_id]
            return first + second + [self.cls_id], [0] * len(first) + [1] * len(second) + [2]
        ids = [self.cls_id, *a, self.sep_id] + ([] if b is None else [self.sep_id, *b, self.sep_id])
        return ids, [0] * len(ids)

    def _config(self) -> dict:
        config = {**self.options, **super()._config(), "tokenizer_class": self.tokenizer_class}
        if self.layout == "t5":
            config["extra_ids"] = sum(t.startswith("<extra_id_") for t in self.special_tokens)
            config.pop("additional_special_tokens", None)
        return config

    def save(self, directory) -> Path:
        """The ``.model`` file as it was read, under the name its transformers class reads (``spiece.model``,
        DeBERTa-v2's ``spm.model``, XLM-R's ``sentencepiece.bpe.model``), and ``tokenizer_config.json``
        (the options read, the class, the roles)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / CLASSES.get(self.tokenizer_class, ("", "spiece.model"))[1]).write_bytes(self.raw)
        self._write_config(directory)
        return directory

    @classmethod
    def from_file(cls, path, layout: str | None = None, config: dict | None = None,
                  kind: str = "") -> "SentencePieceTokenizer":
        path = Path(path)
        try:
            size = path.stat().st_size
            if size > MAX_MODEL_BYTES:
                raise TokenizerError(f"{path}: {size} bytes, more than the {MAX_MODEL_BYTES} minilm reads")
            raw = path.read_bytes()
        except OSError as e:
            raise TokenizerError(f"{path}: cannot be read: {e}") from None
        return cls(parse_model(raw, str(path)), layout, raw=raw, where=str(path), config=config, kind=kind)

    def __repr__(self) -> str:
        return f"SentencePieceTokenizer({self.model.model_type}, layout={self.layout}, vocab_size={self.vocab_size})"


def load_sentencepiece(directory):
    """The SentencePiece tokenizer of a Hugging Face folder (``spiece.model``, ``sentencepiece.bpe.model``,
    ``spm.model``, ``tokenizer.model``), laid out as its ``tokenizer_config.json`` class or
    ``config.json`` model_type says (another family: no layout, the bare pieces); None if the folder
    has no ``.model`` file."""
    directory = Path(directory)
    path = next((directory / f for f in FOLDER_FILES if (directory / f).is_file()), None)
    if path is None:
        return None
    kind = json_key(directory / "tokenizer_config.json", "tokenizer_class")
    config = BaseTokenizer.read_config(directory, (kind,))       # any class: the class table decides
    kind = family_class(kind) or family_class(json_key(directory / "config.json", "model_type"))
    return SentencePieceTokenizer.from_file(path, CLASSES.get(kind, (None,))[0], config, kind)
