"""Checkpoints: one ``.npz`` file per save, no pickle, written atomically.

A checkpoint holds everything needed to resume a run exactly or to use the model later:

    model/<parameter name>     float arrays (``model.state_dict()``)
    optim/<key>                the optimiser's flat state_dict (moments, step count, lr ...)
    tokenizer/<file name>      the tokenizer's files as UTF-8 bytes (``tokenizer.save(dir)``)
    __meta__                   JSON (as UTF-8 bytes): family, config, step, RNG state, history

It is written to a temporary file in the same folder, flushed to disk, then renamed over the old
one, so a crash never leaves a half-written checkpoint, and the previous checkpoint survives until
the new one is complete. Loading uses ``np.load(allow_pickle=False)``; anything malformed raises
:class:`~autograd.errors.CheckpointError` naming the file and what was wrong.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

import minilm.tokenizers as toks
from autograd.errors import CheckpointError
from minilm.io import atomic_open

FORMAT = "minilm-checkpoint-1"


def _bytes_array(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def _text(array: np.ndarray) -> str:
    return array.tobytes().decode("utf-8")


def tokenizer_files(tokenizer) -> dict[str, str]:
    """The tokenizer's own ``save(dir)`` files, read back as text."""
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer.save(tmp)
        return {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(tmp).iterdir()) if p.is_file()}


def save_checkpoint(path, *, model, meta: dict, optimizer=None, tokenizer=None) -> Path:
    """Write ``path`` (a ``.npz``) atomically. ``meta`` must be JSON-serialisable."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"model/{k}": np.asarray(v) for k, v in model.state_dict().items()}
    if optimizer is not None:
        for k, v in optimizer.state_dict().items():  # already flat: "state.0.exp_avg" -> array
            arrays[f"optim/{k}"] = np.asarray(v)
    meta = dict(meta, format=FORMAT)
    if tokenizer is not None:
        meta["tokenizer_class"] = type(tokenizer).__name__
        for name, text in tokenizer_files(tokenizer).items():
            arrays[f"tokenizer/{name}"] = _bytes_array(text)
    arrays["__meta__"] = _bytes_array(json.dumps(meta))
    with atomic_open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def load_checkpoint(path) -> dict:
    """Read a checkpoint into ``{"meta", "model", "optim", "tokenizer_files"}`` (plain arrays/dicts)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path}: no such file")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as e:
        raise CheckpointError(f"checkpoint {path}: not a readable minilm checkpoint "
                              f"(truncated or corrupted?): {e}") from None
    if "__meta__" not in data:
        raise CheckpointError(f"checkpoint {path}: no __meta__ entry; not a minilm checkpoint")
    try:
        meta = json.loads(_text(data.pop("__meta__")))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"checkpoint {path}: __meta__ is not valid JSON: {e}") from None
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    out = {"meta": meta, "model": {}, "optim": {}, "tokenizer_files": {}}
    for key, value in data.items():
        group, _, name = key.partition("/")
        if group == "model":
            out["model"][name] = value
        elif group == "optim":
            out["optim"][name] = value
        elif group == "tokenizer":
            out["tokenizer_files"][name] = _text(value)
        else:
            raise CheckpointError(f"checkpoint {path}: unexpected entry {key!r}")
    return out


def restore_tokenizer(ckpt: dict):
    """Rebuild the tokenizer stored in a loaded checkpoint (or None if it has none)."""
    files = ckpt["tokenizer_files"]
    if not files:
        return None
    cls_name = ckpt["meta"].get("tokenizer_class")
    cls = getattr(toks, cls_name, None) if isinstance(cls_name, str) else None
    if not (isinstance(cls, type) and callable(getattr(cls, "load", None))):   # a tokenizer class, nothing else
        raise CheckpointError(f"checkpoint names an unknown tokenizer class {cls_name!r}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            if "/" in name or "\\" in name or name.startswith("."):
                raise CheckpointError(f"checkpoint has a tokenizer file with an unsafe name {name!r}")
            Path(tmp, name).write_text(text, encoding="utf-8")
        return cls.load(tmp)


# where a checkpoint's classes may be imported from; a module outside these must already be imported
TRUSTED_PACKAGES = ("minilm", "autograd")


def _import(spec: str, kind: str):
    """``"package.module:Name"`` → the class, when it is one ``load_model`` may call: a dataclass
    (``kind="config"``) or an ``autograd.nn.Module`` (``kind="model"``). A checkpoint is data, and a
    file from someone else must not decide what code runs: ``"os:system"`` with a config of
    ``{"command": ...}`` would run a shell command if any callable were accepted. Modules outside
    ``TRUSTED_PACKAGES`` are not imported (importing runs their top level); one that this program
    has already imported (a test's model, say) is looked up."""
    from autograd import nn
    module, _, name = spec.partition(":")
    if module.split(".")[0] not in TRUSTED_PACKAGES and module not in sys.modules:
        raise CheckpointError(f"checkpoint names the {kind} class {spec!r}, from outside "
                              f"{' and '.join(TRUSTED_PACKAGES)}; refusing to import it")
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise CheckpointError(f"checkpoint refers to {spec!r}, which cannot be imported: {e}") from None
    ok = isinstance(obj, type) and (dataclasses.is_dataclass(obj) if kind == "config" else issubclass(obj, nn.Module))
    if not ok:
        want = "a dataclass" if kind == "config" else "a subclass of autograd.nn.Module"
        raise CheckpointError(f"checkpoint names {spec!r} as its {kind} class; expected {want}, got {obj!r}")
    return obj


# constructor arguments a head keeps as attributes of the same name (a classifier's classes and pooling)
HEAD_ARGUMENTS = ("num_labels", "pool")


def model_meta(model, config) -> dict:
    """What :func:`load_model` needs to rebuild ``model``: its class, its config class and values,
    and the head's own constructor arguments (``HEAD_ARGUMENTS``: a 3-class classifier is not the
    2-class default)."""
    meta = {"model_class": f"{type(model).__module__}:{type(model).__name__}",
            "config_class": f"{type(config).__module__}:{type(config).__name__}",
            "config": dataclasses.asdict(config)}
    accepted = inspect.signature(type(model).__init__).parameters
    kwargs = {k: getattr(model, k) for k in HEAD_ARGUMENTS if k in accepted and hasattr(model, k)}
    if kwargs:
        meta["model_kwargs"] = kwargs
    return meta


def load_model(path):
    """Rebuild the model saved in a checkpoint: returns ``(model, tokenizer, meta)``; the model is in
    eval mode. The checkpoint's meta must come from :func:`model_meta`."""
    ckpt = load_checkpoint(path)
    meta = ckpt["meta"]
    for key in ("model_class", "config_class", "config"):
        if key not in meta:
            raise CheckpointError(f"checkpoint {path}: meta has no {key!r}; it was not saved by minilm train")
    try:
        config_class, model_class = _import(meta["config_class"], "config"), _import(meta["model_class"], "model")
    except CheckpointError as e:
        raise CheckpointError(f"checkpoint {path}: {e}") from None
    kwargs = meta.get("model_kwargs", {})
    if not isinstance(meta["config"], dict):
        raise CheckpointError(f"checkpoint {path}: meta's config is a {type(meta['config']).__name__}; expected a dict")
    if not isinstance(kwargs, dict) or set(kwargs) - set(HEAD_ARGUMENTS):
        raise CheckpointError(f"checkpoint {path}: meta's model_kwargs is {kwargs!r}; expected a dict of "
                              f"{', '.join(HEAD_ARGUMENTS)} only")
    try:
        config = config_class(**meta["config"])
    except TypeError as e:
        raise CheckpointError(f"checkpoint {path}: its config does not fit {meta['config_class']}: {e}") from None
    model = model_class(config, rng=np.random.default_rng(0), **kwargs)
    try:
        model.load_state_dict(ckpt["model"])
    except CheckpointError as e:
        raise CheckpointError(f"checkpoint {path}: {e}") from None
    model.eval()
    return model, restore_tokenizer(ckpt), meta
