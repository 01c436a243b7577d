"""XLNet's two streams and the folders' line ids, for tests/data/hf/ (tools/make_hf_fixtures.py).

xlnet/'s ``expected.npz`` also holds a second, two-stream forward pass: ``perm_mask`` (a fixed
factorisation order per row), ``target_mapping`` (three targets a row), the tokenizer's
``token_type_ids`` and the ``logits_two_stream`` transformers returns for them. xlnet/, deberta/ and
deberta-v2/ hold ``line_ids.npz``: their tokenizer's ids of lines.npz's texts plus the NFKC cases
(make_hf_fixtures_spm.py), which ``--check`` recomputes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from make_hf_fixtures_spm import spm_texts  # tools/ is on the path: python tools/..., or an importer's


def xlnet_two_stream_inputs(arrays: dict, token_type_ids: np.ndarray) -> dict:
    """A fixed factorisation order per row (a seeded permutation of the real tokens), ``perm_mask``
    (i may not see j when j comes at or after i in the order), ``target_mapping`` (the last three
    tokens of the order, one-hot rows) and the tokenizer's ``token_type_ids``."""
    rng = np.random.default_rng(0)
    ids, mask = arrays["input_ids"], arrays["attention_mask"]
    B, T = ids.shape
    perm = np.zeros((B, T, T), dtype=np.float32)
    targets = np.zeros((B, 3, T), dtype=np.float32)
    for b in range(B):
        real = np.flatnonzero(mask[b])
        order = rng.permutation(real)
        rank = np.full(T, -1)
        rank[order] = np.arange(len(order))
        perm[b] = (rank[None, :] >= rank[:, None]) & (rank[None, :] >= 0)
        targets[b, np.arange(3), order[-3:]] = 1.0
    return {"perm_mask": perm, "target_mapping": targets, "token_type_ids": token_type_ids.astype(np.int64)}


def xlnet_kwargs(arrays: dict) -> dict:
    import torch
    return {k: torch.tensor(arrays[k]) for k in ("input_ids", "attention_mask", "perm_mask", "target_mapping",
                                                  "token_type_ids")}


def write_xlnet_lines(tok, directory: Path) -> None:
    """line_ids.npz: the ids of lines.npz's texts plus the NFKC cases (concatenated, with offsets)."""
    ids = [tok(t)["input_ids"] for t in spm_texts(directory.parent)]
    np.savez_compressed(directory / "line_ids.npz", ids=np.array([i for row in ids for i in row], dtype=np.int32),
                        offsets=np.cumsum([0] + [len(row) for row in ids]).astype(np.int64))


def xlnet_lines_match(directory: Path) -> bool:
    import transformers as tf
    tok = tf.AutoTokenizer.from_pretrained(directory)
    with np.load(directory / "line_ids.npz", allow_pickle=False) as f:
        ids, off = f["ids"], f["offsets"]
    texts = spm_texts(directory.parent)
    return all(tok(t)["input_ids"] == ids[off[k]:off[k + 1]].tolist() for k, t in enumerate(texts))
