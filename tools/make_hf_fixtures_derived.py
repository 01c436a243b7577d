"""``--derived`` of tools/make_hf_fixtures.py: the layouts the hub serves, from the stored fixtures.

Derived folders, written from the stored fixtures with minilm's own safetensors writer (``--derived``,
and after every full build; no torch): ``bert-sharded/`` and ``gpt2-sharded/`` (the weights split as
``save_pretrained`` splits a large checkpoint: shards ``model-0000i-of-0000n.safetensors`` +
``model.safetensors.index.json``) and ``bert-legacy-names/`` (the LayerNorms' ``gamma`` / ``beta`` of
the original bert-base-* files). They hold no expected.npz: their logits are their source fixture's.
``--check`` loads them in transformers too (``check_derived``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

SHARDED = {"bert": 3, "gpt2": 2}   # fixture → the shards of its copy "<name>-sharded"
LEGACY = {"bert": "bert-legacy-names"}
COPIED = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")


def _minilm_safetensors():
    sys.path.insert(0, str(ROOT))
    from minilm.pretrained.safetensors_file import read_safetensors, write_safetensors
    return read_safetensors, write_safetensors


def _copy_folder_files(source: Path, target: Path) -> None:
    """A fresh ``target`` with ``source``'s config and tokenizer files (the weights are written apart)."""
    import shutil
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in COPIED:
        if (source / name).is_file():
            shutil.copy(source / name, target / name)


def shard_folder(source: Path, target: Path, n: int) -> Path:
    """``source`` with its model.safetensors split into ``n`` shards as transformers' save_pretrained
    splits a large checkpoint (``model-0000i-of-0000n.safetensors`` + ``model.safetensors.index.json``
    with transformers 5's keys): tests/models/checkpoint_variants.py writes it."""
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    from checkpoint_variants import write_variant
    return write_variant(source, target, "F32", n)


def legacy_folder(source: Path, target: Path) -> Path:
    """``source`` with every LayerNorm's ``weight`` / ``bias`` named ``gamma`` / ``beta``, as in the
    original bert-base-* files: the inverse of the renaming minilm and transformers apply on load."""
    read_safetensors, write_safetensors = _minilm_safetensors()
    from minilm.pretrained.weights import LEGACY_NAMES
    back = {now: old for old, now in LEGACY_NAMES.items()}
    arrays, metadata = read_safetensors(source / "model.safetensors")
    _copy_folder_files(source, target)
    renamed = {next((k[:-len(now)] + old for now, old in back.items() if k.endswith(now)), k): v
               for k, v in arrays.items()}
    write_safetensors(target / "model.safetensors", renamed, metadata)
    return target


def derived_folders(out: Path) -> dict[str, Path]:
    """{folder name: source fixture} of the derived folders, written into ``out`` from the stored fixtures."""
    made = {}
    for name, n in SHARDED.items():
        made[shard_folder(out / name, out / f"{name}-sharded", n).name] = out / name
    for name, folder in LEGACY.items():
        made[legacy_folder(out / name, out / folder).name] = out / name
    return made


def check_derived(out: Path) -> dict[str, float]:
    """{derived folder: max |Δ logits|} of transformers on each derived folder against its source's expected.npz."""
    import torch
    import transformers as tf
    diffs = {}
    for folder, source in [(f"{n}-sharded", n) for n in SHARDED] + [(f, n) for n, f in LEGACY.items()]:
        config = json.loads((out / folder / "config.json").read_text(encoding="utf-8"))
        model = getattr(tf, config["architectures"][0]).from_pretrained(out / folder).eval()
        with np.load(out / source / "expected.npz", allow_pickle=False) as f:
            e = dict(f)
        with torch.no_grad():
            logits = model(input_ids=torch.tensor(e["input_ids"]),
                           attention_mask=torch.tensor(e["attention_mask"])).logits.numpy()
        diffs[folder] = float(np.abs(logits - e["logits"]).max())
    return diffs
