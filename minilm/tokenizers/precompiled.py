"""SentencePiece's ``precompiled_charsmap``: the normalizer of T5, XLNet, ALBERT, DeBERTa-v3 (nmt_nfkc).

SentencePiece compiles its normalisation rules (NFKC plus a few extras) into one blob
(``sentencepiece/src/normalizer.cc``; ``tokenizers`` calls it ``Precompiled``)::

    uint32 n (little-endian)  |  n bytes: a double-array trie (darts-clone), uint32 units  |  pool

The trie maps a UTF-8 byte string to an offset into the pool, where the replacement text sits,
NUL-terminated. A unit packs: ``has_leaf`` = bit 8, ``value`` = the low 31 bits, ``label`` = the
low 8 bits and bit 31, ``offset`` = (unit >> 10) << ((unit & 512) >> 6). Walking the trie byte by
byte (``node ^= offset; node ^= byte``, the label must equal the byte) visits every prefix of the
key that has a leaf.

Normalising a text follows ``tokenizers`` (``spm_precompiled``): for each grapheme cluster shorter
than 6 bytes whose bytes have a prefix in the trie, write the replacement of the *first* (shortest)
prefix found; otherwise do the same character by character, copying characters with no entry.
Grapheme clusters are approximated here by a base character followed by its combining marks,
variation selectors, emoji modifiers and zero-width-joiner sequences (Unicode's full rules, UAX #29,
differ only on rarer sequences).

The blob comes from a file: every offset is checked against the sizes, so a malformed charsmap is a
TokenizerError, never an IndexError or a read past the end.
"""
from __future__ import annotations

import base64
import binascii
import struct
import unicodedata

import numpy as np

from autograd.errors import TokenizerError

ZWJ = "\u200d"


def _extends(c: str) -> bool:
    """Whether ``c`` continues the grapheme cluster before it."""
    o = ord(c)
    return (unicodedata.category(c) in ("Mn", "Mc", "Me") or c == ZWJ or 0xFE00 <= o <= 0xFE0F
            or 0xE0100 <= o <= 0xE01EF or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F)


def graphemes(text: str) -> list[str]:
    out = []
    for c in text:
        if out and (_extends(c) or out[-1].endswith(ZWJ)):
            out[-1] += c
        else:
            out.append(c)
    return out


class PrecompiledCharsmap:
    """``normalize(text)`` as SentencePiece's compiled rules say; built from the base64 string of a
    ``tokenizer.json`` (``from_base64``) or the raw bytes of a ``.model`` file's normalizer spec."""

    def __init__(self, blob: bytes, source="precompiled_charsmap"):
        if len(blob) < 4:
            raise TokenizerError(f"{source}: {len(blob)} bytes, too short for a charsmap (a 4-byte trie size first)")
        (n,) = struct.unpack("<I", blob[:4])
        if n % 4 or n > len(blob) - 4:
            raise TokenizerError(f"{source}: trie size {n} does not fit the {len(blob)}-byte blob (a multiple of 4, "
                                 "at most the rest of the blob)")
        self.units = np.frombuffer(blob[4:4 + n], dtype="<u4").astype(np.int64)
        self.pool = blob[4 + n:]
        self.source = source
        self._cache: dict[str, str | None] = {}

    @classmethod
    def from_base64(cls, text: str, source="precompiled_charsmap") -> "PrecompiledCharsmap":
        try:
            return cls(base64.b64decode(text, validate=True), source)
        except (binascii.Error, ValueError) as e:
            raise TokenizerError(f"{source}: not base64 ({e})") from None

    def _unit(self, i: int) -> int:
        if not 0 <= i < len(self.units):
            raise TokenizerError(f"{self.source}: the trie points at unit {i} of {len(self.units)}")
        return int(self.units[i])

    def _first_prefix_value(self, key: bytes) -> int | None:
        """The pool offset of the shortest prefix of ``key`` in the trie, or None."""
        if not len(self.units):
            return None
        unit = self._unit(0)
        node = (unit >> 10) << ((unit & 512) >> 6)
        for byte in key:
            node ^= byte
            unit = self._unit(node)
            if (unit & ((1 << 31) | 0xFF)) != byte:    # label mismatch: no such edge
                return None
            node ^= (unit >> 10) << ((unit & 512) >> 6)
            if (unit >> 8) & 1:                          # has a leaf: the value sits at the child
                return self._unit(node) & ((1 << 31) - 1)
        return None

    def transform(self, chunk: str) -> str | None:
        """The replacement of ``chunk`` (a grapheme or one character), or None if it has none."""
        if chunk in self._cache:
            return self._cache[chunk]
        at = self._first_prefix_value(chunk.encode("utf-8"))
        out = None
        if at is not None:
            end = self.pool.find(b"\0", at)
            if at >= len(self.pool) or end < 0:
                raise TokenizerError(f"{self.source}: replacement at {at} runs past the {len(self.pool)}-byte pool")
            out = self.pool[at:end].decode("utf-8", errors="replace")
        if len(self._cache) < 100_000:
            self._cache[chunk] = out
        return out

    def normalize(self, text: str) -> str:
        out = []
        for g in graphemes(text):
            if len(g.encode("utf-8")) < 6:
                norm = self.transform(g)
                if norm is not None:
                    out.append(norm)
                    continue
            for c in g:
                norm = self.transform(c)
                out.append(c if norm is None else norm)
        return "".join(out)
