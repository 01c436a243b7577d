"""lines.npz of tests/data/hf/ (tools/make_hf_fixtures.py): 514 lines and each tokenizer kind's ids of them.

The lines are the first 500 distinct non-blank lines of some standard-library docstrings (real English
with code, punctuation and odd spacing) and 14 hard cases (``HARD``: blanks, tabs, CJK, emoji, combining
marks, special tokens, a long word). ``write_lines`` stores them with the ids that one fixture of each
tokenizer kind (``LINE_TOKENIZERS``) gives, concatenated with offsets; ``lines_match`` is ``--check``'s
comparison with transformers.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

LINE_TOKENIZERS = ("gpt2", "bert", "roberta", "bart", "t5")   # one fixture of each tokenizer kind
STDLIB = ("json", "re", "collections", "functools", "itertools", "pathlib", "textwrap", "string", "argparse",
          "unicodedata", "inspect", "typing", "dataclasses", "statistics", "fractions", "decimal")
HARD = ["", " ", "   leading and trailing   ", "tabs\tand\nnewlines\r\n", "東京都 北京 서울",
        "emoji 🙂👍🏽 family 👨\u200d👩\u200d👧", "e\u0301 combining n\u0303", "Ünïcödé ÀÉÎ",
        "[CLS] [MASK] <mask> <s></s>", "a<mask>b", "   <mask>   x", "don't  we'll   I'M", "x" * 150,
        "1234567890 3.14159 1e-5"]


def docstring_lines(n: int = 500) -> list[str]:
    """The first ``n`` distinct non-blank lines of some standard-library docstrings (real English
    with code, punctuation and odd spacing), then the hard cases."""
    import importlib
    import inspect
    lines = []
    for name in STDLIB:
        for _, obj in inspect.getmembers(importlib.import_module(name)):
            lines += [line for line in (inspect.getdoc(obj) or "").splitlines() if line.strip()]
    return list(dict.fromkeys(lines))[:n] + HARD


def write_lines(out: Path, texts: list[str]) -> None:
    """lines.npz: the texts and, per tokenizer, the ids of each (concatenated, with offsets)."""
    import transformers as tf
    arrays = {"texts": np.array(texts)}
    for name in LINE_TOKENIZERS:
        tok = tf.AutoTokenizer.from_pretrained(out / name)
        ids = [tok(t)["input_ids"] for t in texts]
        arrays[f"{name}_ids"] = np.array([i for row in ids for i in row], dtype=np.int32)
        arrays[f"{name}_offsets"] = np.cumsum([0] + [len(row) for row in ids]).astype(np.int64)
    np.savez_compressed(out / "lines.npz", **arrays)


def lines_match(out: Path, stored: dict) -> bool:
    import transformers as tf
    texts = [str(t) for t in stored["texts"]]
    for name in LINE_TOKENIZERS:
        tok = tf.AutoTokenizer.from_pretrained(out / name)
        ids, off = stored[f"{name}_ids"], stored[f"{name}_offsets"]
        if any(tok(t)["input_ids"] != ids[off[k]:off[k + 1]].tolist() for k, t in enumerate(texts)):
            return False
    return True
