"""The hand-written safetensors reader/writer: round trips, every malformed-file check, and a fuzz
run (≥ 1,000 mutated files: no crash, no hang, no allocation over 100 MB)."""
import json
import struct
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograd.errors import CheckpointError
from minilm.pretrained.safetensors_file import read_header, read_safetensors, write_safetensors


def _arrays():
    rng = np.random.default_rng(0)
    return {"w": rng.normal(size=(3, 4)).astype(np.float32), "ids": np.arange(5, dtype=np.int64),
            "flag": np.array([True, False, True]), "half": np.array([1.5, -2.0], dtype=np.float16),
            "empty": np.zeros((0, 3), dtype=np.float32), "scalar": np.array(7.0, dtype=np.float64)}


def _raw(header: dict, data: bytes = b"", n=None) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h) if n is None else n) + h + data


def _write(tmp_path, raw: bytes) -> Path:
    p = tmp_path / "m.safetensors"
    p.write_bytes(raw)
    return p


def test_round_trip_every_dtype(tmp_path):
    arrays = _arrays()
    path = write_safetensors(tmp_path / "a.safetensors", arrays, {"format": "pt"})
    back, meta = read_safetensors(path)
    assert meta == {"format": "pt"} and set(back) == set(arrays)
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)
    assert (struct.unpack("<Q", path.read_bytes()[:8])[0]) % 8 == 0  # header padded: data aligned
    back["w"][0, 0] = 1.0  # arrays are writable copies
    assert not list(tmp_path.glob("*.tmp"))  # the temporary file was renamed away


def test_bf16_widens_exactly(tmp_path):
    x = np.array([1.0, -3.5, 2.0 ** -10], dtype=np.float32)
    bf16 = (x.view(np.uint32) >> 16).astype("<u2")  # these values are exact in bfloat16
    raw = _raw({"x": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]}}, bf16.tobytes())
    back, _ = read_safetensors(_write(tmp_path, raw))
    assert back["x"].dtype == np.float32
    np.testing.assert_array_equal(back["x"], x)


def test_reads_a_file_written_by_the_reference_layout(tmp_path):
    # the layout safetensors.torch writes: compact JSON, __metadata__ first, offsets from 0
    data = np.arange(6, dtype="<f4").tobytes() + np.array([1, 2], dtype="<i8").tobytes()
    header = {"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}}
    back, meta = read_safetensors(_write(tmp_path, _raw(header, data)))
    np.testing.assert_array_equal(back["a"], np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(back["b"], [1, 2])


GOOD = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}


@pytest.mark.parametrize("raw, words", [
    (b"\x01\x02", ["too short", "truncated"]),
    (_raw(GOOD, b"\x00" * 8, n=10 ** 15), ["claims", "truncated"]),
    (_raw(GOOD, b"\x00" * 4), ["'a'", "data_offsets"]),                                   # truncated data
    (_raw({"a": {"dtype": "Q8", "shape": [2], "data_offsets": [0, 8]}}, b"\x00" * 8), ["'a'", "dtype 'Q8'"]),
    (_raw({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\x00" * 8), ["'a'", "needs 12 bytes"]),
    (_raw({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, b"\x00" * 8), ["'a'", "shape"]),
    (_raw({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, b"\x00" * 8), ["'a'", "data_offsets"]),
    (_raw({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\x00" * 12), ["overlap", "'a'", "'b'"]),
    (_raw({"a": {"dtype": "F32", "shape": [2]}}, b"\x00" * 8), ["'a'", "keys"]),
    (struct.pack("<Q", 5) + b"[1,2]", ["JSON list"]),
    (struct.pack("<Q", 4) + b"\xff\xfe{}", ["UTF-8 JSON"]),
    (struct.pack("<Q", 14) + b'{"a":1, "a":2}', ["duplicate"]),
    (_raw({"__metadata__": {"k": 3}}), ["__metadata__"]),
    (_raw({"a": {"dtype": "F32", "shape": [True, 2], "data_offsets": [0, 8]}}, b"\x00" * 8), ["shape"]),
])
def test_malformed_files_name_the_file_and_the_tensor(tmp_path, raw, words):
    path = _write(tmp_path, raw)
    with pytest.raises(CheckpointError) as e:
        read_safetensors(path)
    assert str(path) in str(e.value)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_header_only_reads_no_data(tmp_path):
    path = write_safetensors(tmp_path / "a.safetensors", _arrays())
    tensors, meta, start = read_header(path)
    assert tensors["w"][:2] == ("F32", (3, 4)) and start % 8 == 0


def test_write_refuses_object_arrays_and_the_reserved_name(tmp_path):
    with pytest.raises(CheckpointError, match="dtype"):
        write_safetensors(tmp_path / "x.safetensors", {"a": np.array(["text"])})
    with pytest.raises(CheckpointError):
        write_safetensors(tmp_path / "x.safetensors", {"__metadata__": np.zeros(2, np.float32)})


# ---- fuzz ----------------------------------------------------------------------------------
_BASE = None


def _base() -> bytes:
    global _BASE
    if _BASE is None:
        with tempfile.TemporaryDirectory() as d:
            _BASE = write_safetensors(Path(d) / "b.safetensors", _arrays(), {"format": "pt"}).read_bytes()
    return _BASE


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats()
                           | st.text(max_size=8), lambda c: st.lists(c, max_size=4)
                           | st.dictionaries(st.text(max_size=6), c, max_size=4), max_leaves=12)


@st.composite
def mutated(draw):
    raw = bytearray(_base())
    kind = draw(st.sampled_from(["flip", "truncate", "length", "header"]))
    if kind == "flip":
        for pos, byte in draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 255)),
                                       min_size=1, max_size=8)):
            raw[pos] = byte
        return bytes(raw)
    if kind == "truncate":
        return bytes(raw[:draw(st.integers(0, len(raw) - 1))])
    if kind == "length":
        return struct.pack("<Q", draw(st.integers(0, 2 ** 64 - 1))) + bytes(raw[8:])
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    name = draw(st.sampled_from(sorted(header)))
    if name != "__metadata__" and draw(st.booleans()):
        field = draw(st.sampled_from(["dtype", "shape", "data_offsets"]))
        header[name][field] = draw(json_values)
    else:
        header[name] = draw(json_values)
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + bytes(raw[8 + n:])


@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=mutated())
def test_fuzz_no_crash_no_hang_no_huge_allocation(raw):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.safetensors"
        path.write_bytes(raw)
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            arrays, _ = read_safetensors(path)
            assert all(isinstance(a, np.ndarray) for a in arrays.values())
        except CheckpointError:
            pass
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert time.perf_counter() - t0 < 2.0
        assert peak < 100 * 2 ** 20
