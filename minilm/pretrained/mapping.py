"""Copy a checkpoint's arrays into a minilm model through a name table (minilm name → HF name).

Shared by the family loaders (``encoders.py``, ``seq2seq.py``). Every parameter of the model must
have a row in the table (else the table is wrong: an internal error); every key of the file must
be used, tied to a used key with the same values, or a known buffer; shapes must agree. One
CheckpointError names the file and every problem.

Legacy names (a LayerNorm's ``gamma`` / ``beta``) arrive already renamed: ``weights.read_weights``
applies transformers' one table (``weights.LEGACY_NAMES``) for every loader.

A tied parameter (a decoder that is the word-embedding matrix) is listed once by
``named_parameters``, under its first name, so writing each listed Parameter's data loads both uses.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import CheckpointError

from .files import check_unexpected, take


def load_mapped(model, arrays: dict, mapping: dict[str, str], path, *, tied: dict[str, str] | None = None,
                ignorable=(), fixed: dict[str, np.ndarray] | None = None):
    """Write ``arrays[mapping[name]]`` into each parameter ``name`` of ``model`` (eval mode after).

    ``tied``: {HF key: HF key it must equal} for copies a file may or may not hold (an untied save
    of a tied head); ``fixed``: {minilm name: array} for parameters the HF model does not have
    (DistilBERT's absent segment table: zeros)."""
    fixed = fixed or {}
    params = dict(model.named_parameters())
    unmapped = sorted(set(params) - set(mapping) - set(fixed))
    if unmapped:
        raise AssertionError(f"name table of {type(model).__name__} misses {unmapped[:6]}")
    weights = take(arrays, {k: v for k, v in mapping.items() if k in params}, path,
                   {k: p.shape for k, p in params.items()})
    used = set(mapping.values())
    for copy, source in (tied or {}).items():
        if copy in arrays:
            a, b = arrays[copy], arrays[source]
            if a.shape != b.shape or not np.allclose(a, b):
                raise CheckpointError(f"{path}: key {copy!r} differs from {source!r}; minilm ties the two")
            used.add(copy)
    check_unexpected(arrays, used, path, ignorable=ignorable)
    for name, p in params.items():
        value = fixed[name] if name in fixed else weights[name]
        p.data[...] = np.asarray(value, dtype=p.data.dtype)
    model.eval()
    return model


def bert_layer_names(ours: str, theirs: str, n_layer: int, per_layer: dict | None = None) -> dict[str, str]:
    """The post-LN encoder layers of BERT's layout (RoBERTa and ELECTRA share it)."""
    per_layer = per_layer or {
        "attn.q_proj": "attention.self.query", "attn.k_proj": "attention.self.key",
        "attn.v_proj": "attention.self.value", "attn.out_proj": "attention.output.dense",
        "ln1": "attention.output.LayerNorm", "mlp.fc1": "intermediate.dense",
        "mlp.fc2": "output.dense", "ln2": "output.LayerNorm"}
    return {f"{ours}{i}.{a}.{p}": f"{theirs}{i}.{b}.{p}"
            for i in range(n_layer) for a, b in per_layer.items() for p in ("weight", "bias")}


def pairs(ours: str, theirs: str, params=("weight", "bias")) -> dict[str, str]:
    return {f"{ours}.{p}": f"{theirs}.{p}" for p in params}
