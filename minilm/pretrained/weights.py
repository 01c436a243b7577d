"""The weights of a Hugging Face model folder, one file or sharded, under the names transformers uses.

Every loader reads a folder's tensors through :func:`read_weights`, which looks where transformers'
``from_pretrained`` looks, in the same order:

1. ``model.safetensors``: one file (``minilm/pretrained/safetensors_file.py``);
2. ``model.safetensors.index.json`` and the shards it names: what ``save_pretrained`` writes when the
   weights exceed ``max_shard_size``, as the hub serves most large checkpoints::

       {"metadata": {"total_size": 2 * 10**9, ...},         bytes of all tensors (informational)
        "weight_map": {"bert.embeddings.word_embeddings.weight": "model-00001-of-00002.safetensors",
                       "cls.predictions.bias": "model-00002-of-00002.safetensors", ...}}

   Like transformers (``get_checkpoint_shard_files``), the shards are the distinct values of
   ``weight_map``, each read whole; ``metadata`` is not checked. Unlike transformers, which lets a
   missing tensor become a freshly initialised one, every promise of the index is checked: a shard
   that is missing, truncated or not safetensors, a tensor its shard does not hold, a tensor in two
   shards and an index that is not JSON are CheckpointErrors naming the file;
3. neither: a ``pytorch_model.bin`` is refused with the commands that convert it, for this folder
   (``files.convert_hint``), anything else with an error naming both file names.

Legacy names. The original BERT files (bert-base-cased and its kin, converted from TensorFlow)
call a LayerNorm's scale and shift ``gamma`` and ``beta``. transformers renames them on load for
every model (``conversion_mapping.py``'s ``"legacy"`` table; before v5,
``PreTrainedModel._fix_state_dict_key_on_load``), and so does :data:`LEGACY_NAMES` here, once, for
every loader. Only the ``LayerNorm.`` spelling is renamed, as transformers does today (its older
releases renamed every ``gamma`` / ``beta``): a ``layer_norm.gamma`` is an unexpected key, where
transformers leaves it unused. transformers' table also renames ``weight_g`` / ``weight_v``
(PyTorch's weight norm), which no family minilm loads has.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError

from .files import INDEX, WEIGHTS, convert_hint
from .safetensors_file import read_safetensors

# legacy suffix → transformers' name (conversion_mapping.py, "legacy")
LEGACY_NAMES = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}


def read_weights(directory) -> tuple[dict[str, np.ndarray], Path]:
    """``(arrays, path)``: every tensor of the folder under transformers' names, and the file that
    errors about them name (``model.safetensors``, or the index of a sharded folder)."""
    directory = Path(directory)
    single, index = directory / WEIGHTS, directory / INDEX
    if single.is_file():   # transformers' order: the single file wins over an index beside it
        arrays, path = read_safetensors(single)[0], single
    elif index.is_file():
        arrays, path = read_sharded(index), index
    else:
        pickles = sorted(p.name for p in directory.glob("*.bin"))
        if pickles:
            raise CheckpointError(f"{directory / pickles[0]}: found, but no {WEIGHTS} nor {INDEX}; "
                                  + convert_hint(directory))
        raise CheckpointError(f"{single}: missing, and so is {INDEX}; expected the weights as one {WEIGHTS} "
                              f"or as {INDEX} + the shards it names")
    return current_names(arrays, path), path


def read_index(path: Path) -> dict[str, str]:
    """The ``weight_map`` of a ``model.safetensors.index.json``: {tensor name: shard file name}."""
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"{path}: not a readable JSON file: {e}") from None
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise CheckpointError(f"{path}: expected a JSON object with a non-empty 'weight_map' "
                              "{tensor name: shard file name}")
    # a shard is a file of this folder: a name with a folder in it could point anywhere
    bad = [f"{k!r}: {v!r}" for k, v in weight_map.items()
           if not isinstance(v, str) or v in ("", ".", "..") or Path(v).name != v or "\\" in v]
    if bad:
        raise CheckpointError(f"{path}: weight_map values must be file names in the same folder; got "
                              + ", ".join(bad[:4]))
    return weight_map


def read_sharded(index: Path) -> dict[str, np.ndarray]:
    """The tensors of every shard that ``index`` names, checked against its ``weight_map``."""
    weight_map = read_index(index)
    names_of: dict[str, list[str]] = {}
    for name, shard in weight_map.items():
        names_of.setdefault(shard, []).append(name)
    missing = sorted(s for s in names_of if not (index.parent / s).is_file())
    if missing:
        first = names_of[missing[0]]
        more = f" ({len(missing) - 1} more shards missing: {missing[1:4]})" if len(missing) > 1 else ""
        raise CheckpointError(f"{index.parent / missing[0]}: missing; {index.name} places {len(first)} tensors in "
                              f"it (e.g. {first[0]!r}){more}")
    arrays: dict[str, np.ndarray] = {}
    found_in: dict[str, str] = {}
    for shard in sorted(names_of):
        path = index.parent / shard
        tensors, _ = read_safetensors(path)     # a truncated or foreign file: an error naming the shard
        absent = sorted(set(names_of[shard]) - set(tensors))
        if absent:
            raise CheckpointError(f"{path}: does not hold {absent[:8]}{' …' if len(absent) > 8 else ''}, which "
                                  f"{index.name} places in it")
        twice = sorted(set(tensors) & set(arrays))
        if twice:
            raise CheckpointError(f"{path}: tensor {twice[0]!r} is in {found_in[twice[0]]} too; a tensor belongs "
                                  "to one shard")
        found_in.update(dict.fromkeys(tensors, shard))
        arrays.update(tensors)
    return arrays


def current_names(arrays: dict, path) -> dict:
    """``arrays`` with each legacy name (:data:`LEGACY_NAMES`) renamed as transformers renames it; a
    file holding a parameter under both names is refused (which one would be meant?)."""
    out, source = {}, {}
    for key, value in arrays.items():
        new = next((key[:-len(old)] + now for old, now in LEGACY_NAMES.items() if key.endswith(old)), key)
        if new in out:
            raise CheckpointError(f"{path}: holds both {source[new]!r} and {key!r}, the legacy and the current "
                                  "name of one parameter")
        out[new], source[new] = value, key
    return out


def with_prefix(arrays: dict, prefix: str) -> dict:
    """The names of a head model's file: a base model's save (facebook/bart-base is a ``BartModel``)
    holds ``shared.weight`` where ``BartForConditionalGeneration`` holds ``model.shared.weight``;
    transformers adds its ``base_model_prefix`` on load, and so does this."""
    if any(k.startswith(prefix) for k in arrays):
        return arrays
    return {prefix + k: v for k, v in arrays.items()}
