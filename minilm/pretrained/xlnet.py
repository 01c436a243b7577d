"""A Hugging Face XLNet folder (``XLNetLMHeadModel`` or a bare ``XLNetModel``) → minilm's
:class:`~minilm.models.xlnet_released.XLNetReleased`, in eval mode; and the config it came from.

Config keys read: ``vocab_size d_model n_layer n_head d_inner ff_activation layer_norm_eps
clamp_len mem_len``; ``attn_type`` must be ``"bi"`` and ``bi_data`` false (every released
checkpoint), ``d_head`` (if given) ``d_model / n_head``. ``untie_r`` is not read: transformers keeps
the three score biases per layer whatever it says.

Names: ``transformer.word_embedding.weight``, ``transformer.mask_emb``, ``transformer.layer.N.
rel_attn.{q,k,v,o,r,r_r_bias,r_s_bias,r_w_bias,seg_embed,layer_norm.*}``, ``transformer.layer.N.
ff.{layer_1,layer_2,layer_norm}.*``, ``lm_loss.bias`` and ``lm_loss.weight`` (a copy of the word
embedding, left out by transformers 5's save). Also accepted: a bare ``XLNetModel`` file (the same
names without ``transformer.``, no ``lm_loss.*``: the output bias is then zero). Its LayerNorms are
``layer_norm``, a spelling transformers' legacy renaming (``weights.LEGACY_NAMES``) leaves alone: a
``layer_norm.gamma`` is an unexpected key, as transformers leaves it unused.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError, ConfigError
from minilm.models.xlnet_released import XLNetReleased, XLNetReleasedConfig

from .bert import HF_ACT
from .files import CONFIG, config_value, read_config
from .mapping import load_mapped
from .weights import read_weights

PREFIX = "transformer."
HEAD_BIAS, HEAD_WEIGHT = "lm_loss.bias", "lm_loss.weight"


def xlnet_config_from_hf(hf: dict, path) -> XLNetReleasedConfig:
    for key, allowed in {"attn_type": "bi", "bi_data": False, "same_length": False}.items():
        if hf.get(key, allowed) != allowed:
            raise CheckpointError(f"{path}: key {key!r} is {hf[key]!r}; minilm's XLNet reads only {allowed!r}")
    C, H = config_value(hf, "d_model", path), config_value(hf, "n_head", path)
    if hf.get("d_head") is not None and hf["d_head"] * H != C:
        raise CheckpointError(f"{path}: d_head={hf['d_head']} with d_model={C}, n_head={H}; expected d_model / n_head")
    act = config_value(hf, "ff_activation", path, str, default="gelu")
    if act not in HF_ACT:
        raise CheckpointError(f"{path}: key 'ff_activation' is {act!r}; minilm supports {sorted(HF_ACT)}")
    mem_len = hf.get("mem_len")
    if mem_len is not None and (isinstance(mem_len, bool) or not isinstance(mem_len, int)):
        raise CheckpointError(f"{path}: key 'mem_len' is {mem_len!r}, expected an integer or null")
    try:
        return XLNetReleasedConfig(
            vocab_size=config_value(hf, "vocab_size", path), n_embd=C, n_layer=config_value(hf, "n_layer", path),
            n_head=H, n_inner=config_value(hf, "d_inner", path), activation=HF_ACT[act],
            layer_norm_eps=float(config_value(hf, "layer_norm_eps", path, float, default=1e-12)),
            clamp_len=config_value(hf, "clamp_len", path, default=-1), mem_len=mem_len or None, dropout=0.0,
            initializer_range=float(config_value(hf, "initializer_range", path, float, default=0.02)))
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None


def xlnet_names(model: XLNetReleased, prefix: str = PREFIX) -> dict[str, str]:
    """minilm name → the file's name (``XLNetLMHeadModel``'s with ``prefix="transformer."``)."""
    names = {name: prefix + name for name, _ in model.named_parameters() if name != "lm_bias"}
    names["lm_bias"] = HEAD_BIAS
    return names


def load_xlnet(directory) -> XLNetReleased:
    directory = Path(directory)
    config = xlnet_config_from_hf(read_config(directory), directory / CONFIG)
    model = XLNetReleased(config, rng=np.random.default_rng(0))
    arrays, weights = read_weights(directory)
    bare = not any(k.startswith(PREFIX) for k in arrays)                # an XLNetModel save
    if bare and HEAD_BIAS not in arrays:
        arrays = {**arrays, HEAD_BIAS: np.zeros(config.vocab_size, dtype=np.float32)}
    prefix = "" if bare else PREFIX
    return load_mapped(model, arrays, xlnet_names(model, prefix), weights,
                       tied={HEAD_WEIGHT: prefix + "word_embedding.weight"})
