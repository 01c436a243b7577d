"""SentencePiece's ``.model`` file (``spiece.model`` of T5, XLNet, ALBERT; ``spm.model`` of DeBERTa-v3),
read by hand: no ``sentencepiece`` or ``protobuf`` package, and no trust in the file.

The file is one protocol-buffer message, ``ModelProto`` (``sentencepiece/src/sentencepiece_model.proto``).
A message is a run of fields, each a varint key ``(field number << 3) | wire type`` then a value:
wire type 0 a varint (7 bits a byte, low first, high bit = more), 1 eight bytes, 2 a varint length
and that many bytes (a string, bytes, or a nested message), 5 four bytes (a little-endian float).
The fields minilm reads::

    ModelProto       1 pieces (repeated SentencePiece)  2 trainer_spec  3 normalizer_spec
    SentencePiece    1 piece (str)  2 score (float)  3 type: 1 normal, 2 unknown, 3 control,
                     4 user-defined, 5 unused, 6 byte
    TrainerSpec      3 model_type (1 unigram, 2 bpe)  24 treat_whitespace_as_suffix  35 byte_fallback
                     40 unk_id (0)  41 bos_id (1)  42 eos_id (2)  43 pad_id (-1)
    NormalizerSpec   1 name  2 precompiled_charsmap (bytes)  3 add_dummy_prefix (true)
                     4 remove_extra_whitespaces (true)  5 escape_whitespaces (true)

(defaults in brackets; other fields are skipped). Like the safetensors reader, nothing in the file
is trusted: the file is at most ``MAX_MODEL_BYTES``; every length is checked against what is left of
its message before anything is sliced (a slice is a view, so a lying length allocates nothing); a
varint longer than 10 bytes, a wire type minilm does not know, a string that is not UTF-8 or an id
outside the vocabulary is a TokenizerError naming the file, the field and the offset.

``spm_tokenizer.py`` builds the tokenizer the file describes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from autograd.errors import TokenizerError

MAX_MODEL_BYTES = 64 * 2 ** 20     # a released spiece.model is ~0.8 MB, XLM-R's 5 MB
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


# ---- the protocol buffer -----------------------------------------------------------------------

def _varint(buf, pos: int, end: int, where: str) -> tuple[int, int]:
    """``(value, next position)`` of the varint at ``pos`` (at most 10 bytes, all before ``end``)."""
    value = shift = 0
    for k in range(10):
        if pos + k >= end:
            raise TokenizerError(f"{where}: a varint at byte {pos} runs past the end of its message (truncated?)")
        byte = buf[pos + k]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + k + 1
        shift += 7
    raise TokenizerError(f"{where}: a varint at byte {pos} is longer than 10 bytes (not a protobuf?)")


def fields(buf, start: int, end: int, where: str):
    """Yield ``(field number, wire type, value, offset)`` of the message ``buf[start:end]``: an int for
    wire types 0, 1 and 5 (the raw bits), a memoryview for wire type 2."""
    pos = start
    while pos < end:
        at = pos
        key, pos = _varint(buf, pos, end, where)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise TokenizerError(f"{where}: field number 0 at byte {at} (not a protobuf?)")
        if wire == 0:
            value, pos = _varint(buf, pos, end, where)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > end:
                raise TokenizerError(f"{where}: field {number} at byte {at} needs {size} bytes, {end - pos} are left")
            value, pos = int.from_bytes(buf[pos:pos + size], "little"), pos + size
        elif wire == 2:
            n, pos = _varint(buf, pos, end, where)
            if n > end - pos:
                raise TokenizerError(f"{where}: field {number} at byte {at} claims {n} bytes, {end - pos} are "
                                     "left (truncated?)")
            value, pos = memoryview(buf)[pos:pos + n], pos + n
        else:
            raise TokenizerError(f"{where}: wire type {wire} (field {number}, byte {at}); a SentencePiece model "
                                 "uses 0, 1, 2 and 5 (not a .model file?)")
        yield number, wire, value, at


def _expect(wire: int, wanted: int, number: int, at: int, where: str) -> None:
    if wire != wanted:
        raise TokenizerError(f"{where}: field {number} at byte {at} has wire type {wire}, expected {wanted}")


def _text(value, number: int, at: int, where: str) -> str:
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise TokenizerError(f"{where}: field {number} at byte {at} is not UTF-8 text") from None


def _int32(v: int) -> int:
    """A protobuf int32: a negative number is sent as its 64-bit two's complement."""
    return v - (1 << 64) if v >= 1 << 63 else v


@dataclass
class SentencePieceModel:
    """What a ``.model`` file says (the fields in the module docstring)."""
    pieces: list = field(default_factory=list)          # [(piece, score, type)], id = position
    model_type: str = "unigram"
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    byte_fallback: bool = False
    whitespace_suffix: bool = False
    normalizer: str = ""
    charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


def _piece(buf, where: str) -> tuple[str, float, int]:
    piece, score, kind = None, 0.0, NORMAL
    for number, wire, value, at in fields(buf, 0, len(buf), where):
        if number == 1:
            _expect(wire, 2, number, at, where)
            piece = _text(value, number, at, where)
        elif number == 2:
            _expect(wire, 5, number, at, where)
            score = struct.unpack("<f", value.to_bytes(4, "little"))[0]
        elif number == 3:
            _expect(wire, 0, number, at, where)
            kind = value
    if not piece or kind not in (NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE):
        raise TokenizerError(f"{where}: a piece {piece!r} of type {kind}; expected a non-empty piece of type 1-6")
    return piece, score, kind


_TRAINER = {3: "model_type", 24: "whitespace_suffix", 35: "byte_fallback", 40: "unk_id", 41: "bos_id",
            42: "eos_id", 43: "pad_id"}
_NORMALIZER = {3: "add_dummy_prefix", 4: "remove_extra_whitespaces", 5: "escape_whitespaces"}


def _spec(model: SentencePieceModel, buf, names: dict, where: str) -> None:
    """Copy the varint fields ``names`` of a TrainerSpec / NormalizerSpec (and a normalizer's name and
    charsmap) into ``model``."""
    for number, wire, value, at in fields(buf, 0, len(buf), where):
        if number in names:
            _expect(wire, 0, number, at, where)
            name = names[number]
            if name == "model_type":
                if value not in MODEL_TYPES:
                    raise TokenizerError(f"{where}: model_type {value}; expected 1 (unigram) or 2 (bpe)")
                value = MODEL_TYPES[value]
            elif name.endswith("_id"):
                value = _int32(value)
            else:
                value = bool(value)
            setattr(model, name, value)
        elif names is _NORMALIZER and number in (1, 2):
            _expect(wire, 2, number, at, where)
            if number == 1:
                model.normalizer = _text(value, number, at, where)
            else:
                model.charsmap = bytes(value)


def parse_model(data: bytes, where: str = ".model") -> SentencePieceModel:
    """The ``ModelProto`` in ``data``, checked (TokenizerError naming ``where`` otherwise)."""
    if len(data) > MAX_MODEL_BYTES:
        raise TokenizerError(f"{where}: {len(data)} bytes, more than the {MAX_MODEL_BYTES} minilm reads")
    model = SentencePieceModel()
    for number, wire, value, at in fields(data, 0, len(data), where):
        if number in (1, 2, 3):
            _expect(wire, 2, number, at, where)
        if number == 1:
            model.pieces.append(_piece(value, f"{where}: piece {len(model.pieces)} (byte {at})"))
        elif number == 2:
            _spec(model, value, _TRAINER, f"{where}: trainer_spec")
        elif number == 3:
            _spec(model, value, _NORMALIZER, f"{where}: normalizer_spec")
    n = len(model.pieces)
    if n == 0:
        raise TokenizerError(f"{where}: no pieces (an empty or truncated .model file?)")
    for role in ("unk_id", "bos_id", "eos_id", "pad_id"):
        i = getattr(model, role)
        if not -1 <= i < n or (role == "unk_id" and i < 0):
            raise TokenizerError(f"{where}: trainer_spec {role} = {i}, outside the {n} pieces")
    if model.pieces[model.unk_id][2] != UNKNOWN:
        raise TokenizerError(f"{where}: unk_id {model.unk_id} is the piece {model.pieces[model.unk_id][0]!r}, "
                             "not of type unknown (2)")
    return model
