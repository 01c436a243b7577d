"""Hugging Face GPT-2 folders ⇄ minilm's GPT (``minilm/models/gpt.py``).

transformers' ``GPT2LMHeadModel`` names (N = layer) against minilm's::

    transformer.wte.weight  (V, C)         wte.weight
    transformer.wpe.weight  (P, C)         wpe.weight
    transformer.h.N.ln_1.*                 blocks.N.ln1.*
    transformer.h.N.attn.c_attn.weight     blocks.N.attn.{q,k,v}_proj.weight, transposed and side by side
    transformer.h.N.attn.c_attn.bias       blocks.N.attn.{q,k,v}_proj.bias, concatenated
    transformer.h.N.attn.c_proj.*          blocks.N.attn.out_proj.*   (weight transposed)
    transformer.h.N.ln_2.*                 blocks.N.ln2.*
    transformer.h.N.mlp.c_fc.*             blocks.N.mlp.fc1.*         (weight transposed)
    transformer.h.N.mlp.c_proj.*           blocks.N.mlp.fc2.*         (weight transposed)
    transformer.ln_f.*                     ln_f.*
    lm_head.weight                         tied to wte: not written; read only to check it equals wte

Why transposed: GPT-2 was written in TensorFlow with "Conv1D" layers computing y = x·W + b with W
of shape (C_in, C_out); a PyTorch / minilm Linear stores W as (C_out, C_in) and computes x·Wᵀ + b.
c_attn is one (C, 3C) matrix for q, k and v together: columns [0, C) are q, [C, 2C) k, [2C, 3C) v.
``GPT2Model`` files have the same names without ``transformer.``; older files also hold the causal
mask as ``attn.bias`` / ``attn.masked_bias`` buffers, which are skipped.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError, ConfigError
from minilm.models.gpt import GPT, GPTConfig

from .files import CONFIG, check_unexpected, config_value, read_config, write_folder
from .weights import read_weights

HF_ACT = {"gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "gelu": "gelu_exact", "relu": "relu"}
TO_HF_ACT = {"gelu": "gelu_new", "gelu_exact": "gelu", "relu": "relu"}
PLAIN = {"ln_1": "ln1", "ln_2": "ln2"}
CONV = {"attn.c_proj": "attn.out_proj", "mlp.c_fc": "mlp.fc1", "mlp.c_proj": "mlp.fc2"}


def gpt_config_from_hf(config: dict, path) -> GPTConfig:
    if config.get("model_type", "gpt2") != "gpt2":
        raise CheckpointError(f"{path}: model_type {config.get('model_type')!r}, expected 'gpt2'")
    checks = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
              "add_cross_attention": False, "tie_word_embeddings": True}
    for key, wanted in checks.items():
        if key in config and config[key] != wanted:
            raise CheckpointError(f"{path}: key {key!r} is {config[key]!r}; minilm supports only {wanted!r}")
    act = config_value(config, "activation_function", path, str, default="gelu_new")
    if act not in HF_ACT:
        raise CheckpointError(f"{path}: key 'activation_function' is {act!r}; minilm supports {sorted(HF_ACT)}")
    n_inner = config.get("n_inner")
    try:
        return GPTConfig(vocab_size=config_value(config, "vocab_size", path),
                         block_size=config_value(config, "n_positions", path),
                         n_layer=config_value(config, "n_layer", path),
                         n_head=config_value(config, "n_head", path),
                         n_embd=config_value(config, "n_embd", path),
                         n_inner=None if n_inner is None else config_value(config, "n_inner", path),
                         activation=HF_ACT[act], dropout=0.0,
                         eps=float(config_value(config, "layer_norm_epsilon", path, float, default=1e-5)),
                         init_std=float(config_value(config, "initializer_range", path, float, default=0.02)))
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None


def gpt_config_to_hf(config: GPTConfig, tokenizer=None) -> dict:
    """GPT2Config's fields. bos/eos ids come from the tokenizer (None if it has none): left out,
    transformers would assume GPT-2's 50256, outside a small vocabulary."""
    special = {f"{k}_token_id": getattr(tokenizer, f"{k}_id", None) for k in ("bos", "eos")}
    return {**special, "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": config.vocab_size,
            "n_positions": config.block_size, "n_ctx": config.block_size, "n_embd": config.n_embd,
            "n_layer": config.n_layer, "n_head": config.n_head, "n_inner": config.n_inner,
            "activation_function": TO_HF_ACT[config.activation], "layer_norm_epsilon": config.eps,
            "initializer_range": config.init_std, "resid_pdrop": config.dropout,
            "embd_pdrop": config.dropout, "attn_pdrop": config.dropout, "tie_word_embeddings": True,
            "scale_attn_weights": True}


def gpt_to_hf_arrays(model: GPT) -> dict[str, np.ndarray]:
    """minilm GPT state → GPT2LMHeadModel arrays (Conv1D layout: weights transposed)."""
    s = model.state_dict()
    out = {"transformer.wte.weight": s["wte.weight"], "transformer.wpe.weight": s["wpe.weight"],
           "transformer.ln_f.weight": s["ln_f.weight"], "transformer.ln_f.bias": s["ln_f.bias"]}
    for i in range(model.config.n_layer):
        ours, hf = f"blocks.{i}.", f"transformer.h.{i}."
        for theirs, mine in PLAIN.items():
            for p in ("weight", "bias"):
                out[f"{hf}{theirs}.{p}"] = s[f"{ours}{mine}.{p}"]
        qkv = [f"{ours}attn.{x}_proj" for x in "qkv"]
        out[f"{hf}attn.c_attn.weight"] = np.concatenate([s[n + ".weight"].T for n in qkv], axis=1)  # (C, 3C)
        out[f"{hf}attn.c_attn.bias"] = np.concatenate([s[n + ".bias"] for n in qkv])                # (3C,)
        for theirs, mine in CONV.items():
            out[f"{hf}{theirs}.weight"] = s[f"{ours}{mine}.weight"].T                            # (C_in, C_out)
            out[f"{hf}{theirs}.bias"] = s[f"{ours}{mine}.bias"]
    return out


def export_gpt(model: GPT, directory, tokenizer=None) -> Path:
    return write_folder(directory, gpt_config_to_hf(model.config, tokenizer), gpt_to_hf_arrays(model), tokenizer)


def load_gpt2(directory) -> GPT:
    """A GPT-2-format folder (config.json + model.safetensors) → a minilm GPT in eval mode."""
    directory = Path(directory)
    config = gpt_config_from_hf(read_config(directory), directory / CONFIG)
    arrays, path = read_weights(directory)
    prefix = "transformer." if any(k.startswith("transformer.") for k in arrays) else ""
    model = GPT(config, rng=np.random.default_rng(0))
    expected = gpt_to_hf_arrays(model)            # the names and shapes a file must have
    if prefix == "":
        expected = {k.removeprefix("transformer."): v for k, v in expected.items()}
    missing = sorted(k for k in expected if k not in arrays)
    if missing:
        raise CheckpointError(f"{path}: missing keys {missing[:8]}{' …' if len(missing) > 8 else ''}")
    bad = [f"{k}: shape {arrays[k].shape}, expected {v.shape}" for k, v in expected.items()
           if arrays[k].shape != v.shape or not np.issubdtype(arrays[k].dtype, np.floating)]
    if bad:
        raise CheckpointError(f"{path}: " + "; ".join(bad[:8]))
    head = arrays.get("lm_head.weight")
    if head is not None and (head.shape != arrays[prefix + "wte.weight"].shape
                             or not np.allclose(head, arrays[prefix + "wte.weight"])):
        raise CheckpointError(f"{path}: key 'lm_head.weight' differs from {prefix}wte.weight; minilm's GPT "
                              "ties its output layer to the token embeddings")
    check_unexpected(arrays, set(expected), path, ignorable=("attn.bias", "attn.masked_bias", "lm_head.weight"))
    a = {k.removeprefix(prefix): v for k, v in arrays.items()}
    C = config.n_embd
    state = {"wte.weight": a["wte.weight"], "wpe.weight": a["wpe.weight"],
             "ln_f.weight": a["ln_f.weight"], "ln_f.bias": a["ln_f.bias"]}
    for i in range(config.n_layer):
        ours, hf = f"blocks.{i}.", f"h.{i}."
        for theirs, mine in PLAIN.items():
            for p in ("weight", "bias"):
                state[f"{ours}{mine}.{p}"] = a[f"{hf}{theirs}.{p}"]
        w, b = a[f"{hf}attn.c_attn.weight"], a[f"{hf}attn.c_attn.bias"]        # (C, 3C), (3C,)
        for j, x in enumerate("qkv"):
            state[f"{ours}attn.{x}_proj.weight"] = w[:, j * C:(j + 1) * C].T      # (C_out, C_in)
            state[f"{ours}attn.{x}_proj.bias"] = b[j * C:(j + 1) * C]
        for theirs, mine in CONV.items():
            state[f"{ours}{mine}.weight"] = a[f"{hf}{theirs}.weight"].T
            state[f"{ours}{mine}.bias"] = a[f"{hf}{theirs}.bias"]
    model.load_state_dict(state)
    model.eval()
    return model
