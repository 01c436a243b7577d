"""The files of a Hugging Face model folder: ``config.json`` and ``model.safetensors`` (or, sharded,
``model.safetensors.index.json`` + shards: ``weights.py`` reads either).

Shared by the family loaders and exporters. A ``pytorch_model.bin`` is refused: it is a pickle,
and unpickling a file runs whatever code it names. The message says how to convert it on a machine
that has PyTorch (``CONVERT_HINT``; ``convert_hint(DIR)`` fills in the folder).
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError
from minilm.pretrained.safetensors_file import write_safetensors

WEIGHTS = "model.safetensors"
INDEX = "model.safetensors.index.json"   # a sharded checkpoint's weight map (weights.py)
CONFIG = "config.json"

# DIR: the folder (convert_hint fills it in, quoted for the shell). .clone(): a tied decoder shares its
# memory with the word embeddings, which save_file refuses. The class config.json names under
# "architectures" is the one that saved the file, so it keeps every head (AutoModel would drop the MLM head).
CONVERT_HINT = (
    "it is a pickle, which minilm never loads (unpickling runs code from the file). Convert it once, "
    "on a machine with PyTorch:\n"
    "    python -c \"import sys, torch, safetensors.torch as st; d = sys.argv[1]; "
    "sd = torch.load(d + '/pytorch_model.bin', weights_only=True); "
    "st.save_file({k: v.clone().contiguous() for k, v in sd.items()}, d + '/model.safetensors', "
    "{'format': 'pt'})\" DIR\n"
    "or with transformers, through the class config.json names (which keeps the checkpoint's heads):\n"
    "    python -c \"import sys, json, transformers as tf; d = sys.argv[1]; "
    "name = json.load(open(d + '/config.json'))['architectures'][0]; "
    "getattr(tf, name).from_pretrained(d).save_pretrained(d)\" DIR")


def convert_hint(directory) -> str:
    """:data:`CONVERT_HINT` for ``directory``: its commands run as printed (the path quoted for a POSIX shell)."""
    return CONVERT_HINT.replace('" DIR', '" ' + shlex.quote(str(directory)))


def read_config(directory) -> dict:
    """``config.json`` of a model folder as a dict (CheckpointError naming the file otherwise)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"pretrained model folder {directory}: no such directory")
    path = directory / CONFIG
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: missing; a Hugging Face model folder has config.json") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"{path}: not a readable JSON file: {e}") from None
    if not isinstance(config, dict):
        raise CheckpointError(f"{path}: a JSON {type(config).__name__}, expected an object")
    return config


def config_value(config: dict, key: str, path, kind=int, default=None):
    """``config[key]`` (or ``default`` when absent) checked to be a ``kind``: int (not a bool),
    float (an int will do), bool or str. The error names the file and the key."""
    value = config.get(key, default)
    if value is None:
        raise CheckpointError(f"{path}: missing key {key!r}")
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise CheckpointError(f"{path}: key {key!r} is {value!r}, expected a {kind.__name__}")
    return value


def take(arrays: dict, mapping: dict[str, str], path, shapes: dict[str, tuple]) -> dict[str, np.ndarray]:
    """``{minilm name: arrays[hf name]}`` for every pair of ``mapping`` (minilm → HF), with missing
    keys and wrong shapes named together in one CheckpointError."""
    missing = sorted(hf for hf in mapping.values() if hf not in arrays)
    if missing:
        raise CheckpointError(f"{path}: missing keys {missing[:8]}{' …' if len(missing) > 8 else ''}")
    out, bad = {}, []
    for ours, hf in mapping.items():
        a = arrays[hf]
        if a.shape != shapes[ours]:
            bad.append(f"{hf}: shape {a.shape}, expected {shapes[ours]}")
        elif not np.issubdtype(a.dtype, np.floating):
            bad.append(f"{hf}: dtype {a.dtype}, expected floats")
        out[ours] = a
    if bad:
        raise CheckpointError(f"{path}: " + "; ".join(bad[:8]))
    return out


def check_unexpected(arrays: dict, used: set, path, ignorable=()) -> None:
    """Keys of the file that nothing maps (apart from known buffers) are an error, not a silent skip."""
    extra = sorted(k for k in arrays if k not in used and not k.endswith(tuple(ignorable)))
    if extra:
        raise CheckpointError(f"{path}: unexpected keys {extra[:8]}{' …' if len(extra) > 8 else ''} "
                              "(a head or layer minilm's model does not have)")


def write_folder(directory, config: dict, arrays: dict, tokenizer=None) -> Path:
    """``config.json`` + ``model.safetensors`` (+ the tokenizer's files, with the ``tokenizer.json`` and
    ``tokenizer_config.json`` that transformers' AutoTokenizer reads: ``export_tokenizer.py``) into
    ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}
    write_safetensors(directory / WEIGHTS, arrays, {"format": "pt"})  # "pt": transformers checks it
    (directory / CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if tokenizer is not None:
        from .export_tokenizer import write_hf_tokenizer
        write_hf_tokenizer(tokenizer, directory, config.get("model_type"))
    return directory
