"""The line fixtures of tests/data/hf/, read: the 514 lines (``lines.npz``), each tokenizer folder's
ids of them, and transformers' decoded text (``decoded.json.gz``). Written by
tools/make_hf_fixtures.py and tools/make_hf_fixtures_tokenizers.py, which reads them back with these
functions too."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data" / "hf"
LINES = ("bert", "gpt2", "roberta", "bart", "t5")                          # ids in lines.npz
OWN_LINES = ("xlnet", "deberta", "deberta-v2", "deberta-v3-spm")  # ids in the folder's line_ids.npz (+ NFKC cases)
VOCAB_MERGES = {"gpt2-vocab-merges": "gpt2", "deberta-vocab-merges": "deberta"}   # → its tokenizer.json twin
DECODED = LINES + OWN_LINES + tuple(VOCAB_MERGES)
DECODED_FILE = "decoded.json.gz"


def texts(data: Path = DATA) -> list[str]:
    with np.load(data / "lines.npz", allow_pickle=False) as f:
        return [str(t) for t in f["texts"]]


def line_texts(name: str, nfkc_cases, data: Path = DATA) -> list[str]:
    """The texts of ``line_ids(name)``: the lines, then the NFKC cases where the ids are a line_ids.npz."""
    return texts(data) + (list(nfkc_cases) if VOCAB_MERGES.get(name, name) in OWN_LINES else [])


def line_ids(name: str, data: Path = DATA) -> list[list[int]]:
    """transformers' ids of each line for the tokenizer folder ``name`` (a vocab.json + merges.txt folder:
    its tokenizer.json twin's)."""
    name = VOCAB_MERGES.get(name, name)
    if name in OWN_LINES:
        with np.load(data / name / "line_ids.npz", allow_pickle=False) as f:
            ids, off = f["ids"], f["offsets"]
    else:
        with np.load(data / "lines.npz", allow_pickle=False) as f:
            ids, off = f[f"{name}_ids"], f[f"{name}_offsets"]
    return [ids[off[k]:off[k + 1]].tolist() for k in range(len(off) - 1)]


def read_decoded(data: Path = DATA) -> dict:
    """``{folder: {"keep": [...], "skip": [...]}}``: transformers' ``decode`` of each line's ids, special
    tokens kept and skipped."""
    return json.loads(gzip.decompress((data / DECODED_FILE).read_bytes()).decode("utf-8"))
