"""Read and write the safetensors format by hand: a JSON header, then raw little-endian bytes.

The format (huggingface/safetensors, "Format" in its README)::

    8 bytes     N, an unsigned little-endian 64-bit integer: the header's length in bytes
    N bytes     a UTF-8 JSON object: {"name": {"dtype": "F32", "shape": [2, 3],
                "data_offsets": [begin, end]}, ..., "__metadata__": {"str": "str"}}
    the rest    the byte buffer; tensor "name" is buffer[begin:end], C order, little-endian

Why by hand rather than the ``safetensors`` package: the whole format is the lines above, so a
reader is short enough to read in one sitting, keeps a dependency (and its compiled wheel) out of
the core install, and shows *why* the format is safe where a PyTorch ``.bin`` is not: a ``.bin``
is a pickle, and unpickling runs whatever code the file names; here the file can only describe
arrays. The reader trusts nothing in the file:

* the header length is at most ``MAX_HEADER`` (100 MB, the package's own limit) and at most the
  file's size; the header must be a JSON object with no duplicate names;
* each dtype is on a whitelist (``DTYPES``); each shape a list of non-negative integers;
* each ``data_offsets`` pair lies inside the buffer, its length is exactly ``prod(shape) ·
  itemsize``, and no two tensors overlap;
* it allocates only what the file holds: each tensor is read with one ``read`` of its checked
  length, so a lying header cannot make it allocate more than the file's size.

Anything wrong raises :class:`~autograd.errors.CheckpointError` naming the file and the tensor.
BF16 (no NumPy dtype) is widened to float32 exactly: its 16 bits are a float32's upper half.
"""
from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError
from minilm.io import atomic_open

__all__ = ["read_safetensors", "write_safetensors", "DTYPES", "MAX_HEADER"]

MAX_HEADER = 100_000_000  # bytes; the safetensors package refuses larger headers too
DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4",
          "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}
_WRITE_NAMES = {np.dtype(v).newbyteorder("<"): k for k, v in DTYPES.items() if k != "BF16"}


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate name {key!r}")
        out[key] = value
    return out


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def read_header(path) -> tuple[dict, dict, int]:
    """``(tensors, metadata, data_start)``: the checked header of ``path`` (no tensor data read).
    ``tensors`` maps each name to ``(dtype name, shape tuple, begin, end)``, offsets absolute."""
    path = Path(path)
    where = f"safetensors file {path}"
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{where}: {size} bytes, too short for the 8-byte header length "
                                      "(truncated?)")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER or n > size - 8:
                raise CheckpointError(f"{where}: the header claims {n} bytes, but the file holds "
                                      f"{size - 8} after the length (limit {MAX_HEADER}): truncated or not "
                                      "a safetensors file")
            raw = f.read(n)
    except OSError as e:
        raise CheckpointError(f"{where}: cannot be read: {e}") from None
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointError(f"{where}: the header is not valid UTF-8 JSON: {e}") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{where}: the header is a JSON {type(header).__name__}, expected an object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise CheckpointError(f"{where}: __metadata__ must map strings to strings")
    start, buffer = 8 + n, size - 8 - n
    tensors, spans = {}, []
    for name, entry in header.items():
        what = f"{where}: tensor {name!r}"
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise CheckpointError(f"{what}: expected exactly the keys dtype, shape, data_offsets; got {entry!r:.200}")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not isinstance(dtype, str) or dtype not in DTYPES:
            raise CheckpointError(f"{what}: dtype {dtype!r:.50} is not one of {sorted(DTYPES)}")
        if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
            raise CheckpointError(f"{what}: shape {shape!r:.100} is not a list of non-negative integers")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)
                and offsets[0] <= offsets[1] <= buffer):
            raise CheckpointError(f"{what}: data_offsets {offsets!r:.100} are not [begin, end] with "
                                  f"0 <= begin <= end <= {buffer} (the data's length)")
        nbytes = math.prod(shape) * np.dtype(DTYPES[dtype]).itemsize
        if offsets[1] - offsets[0] != nbytes:
            raise CheckpointError(f"{what}: shape {shape} of {dtype} needs {nbytes} bytes, but data_offsets "
                                  f"{offsets} hold {offsets[1] - offsets[0]}")
        tensors[name] = (dtype, tuple(shape), start + offsets[0], start + offsets[1])
        spans.append((offsets[0], offsets[1], name))
    spans.sort()
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise CheckpointError(f"{where}: tensors {n0!r} [{b0}, {e0}) and {n1!r} [{b1}, {e1}) overlap")
    return tensors, metadata, start


def read_safetensors(path, names=None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(arrays, metadata)`` of a safetensors file (all tensors, or only ``names``). Arrays are
    native-endian copies; BF16 comes back as float32."""
    path = Path(path)
    tensors, metadata, _ = read_header(path)
    arrays = {}
    try:
        with open(path, "rb") as f:
            for name, (dtype, shape, begin, end) in tensors.items():
                if names is not None and name not in names:
                    continue
                f.seek(begin)
                raw = f.read(end - begin)   # the checked length: never more than the file holds
                if len(raw) != end - begin:
                    raise CheckpointError(f"safetensors file {path}: tensor {name!r} is cut short "
                                          f"({len(raw)} of {end - begin} bytes; the file changed?)")
                a = np.frombuffer(raw, dtype=DTYPES[dtype]).reshape(shape)
                if dtype == "BF16":  # bfloat16 = the top 16 bits of a float32
                    a = (a.astype(np.uint32) << 16).view(np.float32)
                arrays[name] = a.astype(a.dtype.newbyteorder("="))  # a writable native copy
    except OSError as e:
        raise CheckpointError(f"safetensors file {path}: cannot be read: {e}") from None
    return arrays, metadata


def write_safetensors(path, arrays: dict, metadata: dict | None = None) -> Path:
    """Write ``arrays`` ({name: array}) to ``path`` atomically (temporary file, then rename).
    Tensors are stored in name order, little-endian, C order; the header is padded with spaces to
    a multiple of 8 bytes (as the reference writer does, so the data are aligned)."""
    path = Path(path)
    header, chunks, offset = {}, [], 0
    for name in sorted(arrays):
        a = np.asarray(arrays[name])
        key = _WRITE_NAMES.get(a.dtype.newbyteorder("<"))
        if key is None or name == "__metadata__":
            raise CheckpointError(f"write_safetensors {path}: tensor {name!r} has dtype {a.dtype}, expected "
                                  f"one of {sorted(str(np.dtype(v)) for k, v in DTYPES.items() if k != 'BF16')}")
        data = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": key, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        for data in chunks:
            f.write(data)
    return path
