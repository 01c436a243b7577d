"""A model folder re-saved the ways the hub serves checkpoints: float32, float16 or bfloat16 weights,
in one ``model.safetensors`` or sharded (``model-0000i-of-0000n.safetensors`` + the index).

    write_variant(source, target, dtype="BF16", shards=2)

transformers' ``save_pretrained(max_shard_size=...)`` fills the shards in the order of the state
dict; here tensors go by name, cut into ``shards`` runs of about equal bytes — the index names each
tensor's file, so a reader that honours it cannot tell. The rounding is the one PyTorch applies in
``tensor.to(torch.float16)`` / ``.to(torch.bfloat16)``: to nearest, ties to even (bfloat16 keeps a
float32's upper 16 bits after that rounding). Used by tests/models/test_pretrained_course.py and by
tools/make_course_fixtures.py, which stores what transformers computes from the same rounded weights.
"""
from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np

from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors

DTYPES = ("F32", "F16", "BF16")
INDEX = "model.safetensors.index.json"


def bf16_bits(a: np.ndarray) -> np.ndarray:
    """float32 → the uint16 bits of its bfloat16 rounding (nearest, ties to even; NaN stays NaN)."""
    bits = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(a)
    return np.where(nan, (bits >> 16) | 0x40, rounded).astype("<u2")


def rounded(a: np.ndarray, dtype: str) -> np.ndarray:
    """``a`` as the float32 values that a ``dtype`` file gives back."""
    a = np.asarray(a, dtype=np.float32)
    if dtype == "F16":
        return a.astype(np.float16).astype(np.float32)
    if dtype == "BF16":
        return (bf16_bits(a).astype(np.uint32) << 16).view(np.float32)
    return a


def _write(path: Path, arrays: dict, dtype: str, metadata: dict) -> None:
    if dtype != "BF16":   # minilm's own writer: F32 / F16 are NumPy dtypes
        cast = np.float16 if dtype == "F16" else np.float32
        write_safetensors(path, {k: v.astype(cast) if v.dtype.kind == "f" else v for k, v in arrays.items()},
                          metadata)
        return
    header, chunks, offset = {}, [], 0
    for name in sorted(arrays):
        a = arrays[name]
        data = (bf16_bits(a) if a.dtype.kind == "f" else np.ascontiguousarray(a)).tobytes()
        kind = "BF16" if a.dtype.kind == "f" else {"i8": "I64", "i4": "I32", "b1": "BOOL"}[a.dtype.str[1:]]
        header[name] = {"dtype": kind, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(chunks))


def write_variant(source, target, dtype: str = "F32", shards: int = 1) -> Path:
    """``source``'s folder (config, tokenizer files, …) with its float32 ``model.safetensors`` written
    again as ``dtype`` in ``shards`` files. Returns ``target``."""
    source, target = Path(source), Path(target)
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}, expected one of {DTYPES}")
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("model.safetensors", "expected.npz",
                                                                   "tokens.json"))
    arrays, metadata = read_safetensors(source / "model.safetensors")
    metadata = metadata or {"format": "pt"}
    if shards == 1:
        _write(target / "model.safetensors", arrays, dtype, metadata)
        return target
    total = sum(a.nbytes for a in arrays.values())
    parts, seen = [{} for _ in range(shards)], 0
    for name in sorted(arrays):
        parts[min(shards - 1, seen * shards // total)][name] = arrays[name]
        seen += arrays[name].nbytes
    weight_map = {}
    for i, part in enumerate(parts, start=1):
        assert part, f"{source}: {shards} shards leave one empty"
        file = f"model-{i:05d}-of-{shards:05d}.safetensors"
        _write(target / file, part, dtype, metadata)
        weight_map.update(dict.fromkeys(part, file))
    size = {"F32": 4, "F16": 2, "BF16": 2}[dtype]
    index = {"metadata": {"total_parameters": sum(a.size for a in arrays.values()),
                          "total_size": sum(a.size for a in arrays.values()) * size},
             "weight_map": dict(sorted(weight_map.items()))}
    (target / INDEX).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return target
