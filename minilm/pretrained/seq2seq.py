"""Hugging Face BART and T5 (v1.0) folders → minilm's :class:`Bart` and :class:`T5`, in eval mode.

* **BART** (``BartForConditionalGeneration``; Lewis et al. 2020) needs three switches of
  ``BartConfig``: ``position_offset=2`` (fairseq's learned positions start two rows in, so the
  table has ``max_position_embeddings + 2`` rows), ``activation="gelu_exact"`` and
  ``final_logits_bias`` (a (1, V) buffer added to the logits). Names: ``model.shared``,
  ``model.{encoder,decoder}.embed_positions``, ``layernorm_embedding``, ``layers.N.self_attn.*``,
  ``self_attn_layer_norm``, ``encoder_attn.*``, ``encoder_attn_layer_norm``, ``fc1``, ``fc2``,
  ``final_layer_norm``; ``lm_head.weight`` and ``embed_tokens`` are copies of ``shared``.
* **T5 v1.0** (``T5ForConditionalGeneration`` with ``feed_forward_proj="relu"`` and tied
  embeddings; Raffel et al. 2020) is minilm's T5 as it is: ``block.N.layer.0.SelfAttention.
  {q,k,v,o}``, ``layer.0.layer_norm``, (decoder) ``layer.1.EncDecAttention`` + ``layer.1.layer_norm``,
  the last layer ``DenseReluDense.{wi,wo}`` + ``layer_norm``, ``final_layer_norm``, and one
  ``relative_attention_bias`` per stack, stored in block 0.
* **T5 v1.1 / FLAN-T5** (``feed_forward_proj="gated-gelu"``) sets three more switches of ``T5Config``:
  ``ffn="gated-gelu"`` (``DenseReluDense.wi_0`` through GELU, tanh form, times ``wi_1``, then ``wo``),
  ``tie_word_embeddings=False`` (an own ``lm_head``, no C^-½ on the decoder output) and ``d_kv``
  when a head's width is not d_model / heads (flan-t5-small: 512, 6 heads of 64).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError, ConfigError
from minilm.models.bart import Bart, BartConfig
from minilm.models.t5 import T5, T5Config

from .bert import HF_ACT
from .files import CONFIG, config_value, read_config
from .mapping import load_mapped, pairs
from .weights import read_weights, with_prefix

ATTN = {"q_proj": "q_proj", "k_proj": "k_proj", "v_proj": "v_proj", "out_proj": "out_proj"}
# keys that transformers' classes skip on load (``_keys_to_ignore_on_load_unexpected``): fairseq's
# version counters in BART files, and the cross-attention relative bias of the first T5 port, which
# no layer uses (the original t5-* files hold it)
BART_UNUSED = ("encoder.version", "decoder.version")
T5_UNUSED = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)


def _same(hf: dict, a: str, b: str, path) -> int:
    x, y = config_value(hf, a, path), config_value(hf, b, path, default=hf.get(a))
    if x != y:
        raise CheckpointError(f"{path}: {a}={x} but {b}={y}; minilm's encoder and decoder share one value")
    return x


def load_bart(directory) -> Bart:
    directory = Path(directory)
    hf, path = read_config(directory), directory / CONFIG
    if hf.get("scale_embedding"):
        raise CheckpointError(f"{path}: key 'scale_embedding' is true; minilm's BART does not scale its embeddings")
    for key in ("normalize_before", "add_final_layer_norm"):
        if hf.get(key):
            raise CheckpointError(f"{path}: key {key!r} is true (mBART's layout); minilm reads BART's post-LN layout")
    act = config_value(hf, "activation_function", path, str, default="gelu")
    if act not in HF_ACT:
        raise CheckpointError(f"{path}: key 'activation_function' is {act!r}; minilm supports {sorted(HF_ACT)}")
    V = config_value(hf, "vocab_size", path)
    try:
        config = BartConfig(
            vocab_size=V, n_embd=config_value(hf, "d_model", path),
            n_head=_same(hf, "encoder_attention_heads", "decoder_attention_heads", path),
            n_layer=config_value(hf, "encoder_layers", path), n_decoder_layer=config_value(hf, "decoder_layers", path),
            n_inner=_same(hf, "encoder_ffn_dim", "decoder_ffn_dim", path),
            max_positions=config_value(hf, "max_position_embeddings", path), dropout=0.0, eps=1e-5,
            pad_id=config_value(hf, "pad_token_id", path, default=1),
            bos_id=config_value(hf, "bos_token_id", path, default=0),
            eos_id=config_value(hf, "decoder_start_token_id", path, default=2), mask_id=V - 1,
            activation=HF_ACT[act], position_offset=2, final_logits_bias=True)
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None
    model = Bart(config, rng=np.random.default_rng(0))
    arrays, weights = read_weights(directory)
    arrays = with_prefix(arrays, "model.")
    mapping = bart_names(config)
    if "final_logits_bias" in arrays:
        arrays = {**arrays, "final_logits_bias": arrays["final_logits_bias"].reshape(-1)}   # (1, V) → (V,)
    else:   # an older save leaves the all-zero buffer out
        arrays = {**arrays, "final_logits_bias": np.zeros(V, dtype=np.float32)}
    shared = "model.shared.weight"
    tied = {k: shared for k in ("lm_head.weight", "model.encoder.embed_tokens.weight",
                                "model.decoder.embed_tokens.weight")}
    return load_mapped(model, arrays, mapping, weights, tied=tied, ignorable=BART_UNUSED)


def bart_names(config: BartConfig) -> dict[str, str]:
    """minilm ``Bart`` name → ``BartForConditionalGeneration`` name."""
    mapping = {"shared.weight": "model.shared.weight", "final_logits_bias": "final_logits_bias"}
    for stack, n in (("encoder", config.n_layer), ("decoder", config.n_decoder_layer)):
        hfs = f"model.{stack}"
        mapping[f"{stack}.embed_positions.weight"] = f"{hfs}.embed_positions.weight"
        mapping.update(pairs(f"{stack}.layernorm_embedding", f"{hfs}.layernorm_embedding"))
        for i in range(n):
            ours, theirs = f"{stack}.blocks.{i}", f"{hfs}.layers.{i}"
            subs = {"attn": "self_attn", "cross_attn": "encoder_attn"} if stack == "decoder" else {"attn": "self_attn"}
            for a, b in subs.items():
                for p in ATTN:
                    mapping.update(pairs(f"{ours}.{a}.{p}", f"{theirs}.{b}.{p}"))
            norms = {"ln1": "self_attn_layer_norm", "ln2": "final_layer_norm", "mlp.fc1": "fc1", "mlp.fc2": "fc2"}
            if stack == "decoder":
                norms["ln_cross"] = "encoder_attn_layer_norm"
            for a, b in norms.items():
                mapping.update(pairs(f"{ours}.{a}", f"{theirs}.{b}"))
    return mapping


def t5_scales_output(hf: dict) -> bool:
    """Whether the decoder output is multiplied by C^-½ before the head: T5 v1.0 yes, v1.1 no. Released
    configs say it with ``tie_word_embeddings`` (false in v1.1); transformers 5 writes
    ``scale_decoder_outputs`` instead (and ties the head always)."""
    return bool(hf.get("scale_decoder_outputs", hf.get("tie_word_embeddings", True)))


def t5_config_from_hf(hf: dict, path) -> T5Config:
    proj = config_value(hf, "feed_forward_proj", path, str, default="relu")
    if proj not in ("relu", "gated-gelu"):
        raise CheckpointError(f"{path}: feed_forward_proj={proj!r}; minilm reads 'relu' (T5 v1.0) and "
                              "'gated-gelu' (T5 v1.1, FLAN-T5)")
    C, H = config_value(hf, "d_model", path), config_value(hf, "num_heads", path)
    d_kv = config_value(hf, "d_kv", path, default=C // H)
    try:
        return T5Config(
            vocab_size=config_value(hf, "vocab_size", path), n_embd=C, n_head=H,
            n_layer=config_value(hf, "num_layers", path),
            n_decoder_layer=config_value(hf, "num_decoder_layers", path, default=hf.get("num_layers")),
            n_inner=config_value(hf, "d_ff", path),
            num_buckets=config_value(hf, "relative_attention_num_buckets", path, default=32),
            max_distance=config_value(hf, "relative_attention_max_distance", path, default=128),
            dropout=0.0, eps=float(config_value(hf, "layer_norm_epsilon", path, float, default=1e-6)),
            pad_id=config_value(hf, "pad_token_id", path, default=0),
            eos_id=config_value(hf, "eos_token_id", path, default=1),
            decoder_start_id=config_value(hf, "decoder_start_token_id", path, default=0),
            ffn=proj, d_kv=None if d_kv * H == C else d_kv, tie_word_embeddings=t5_scales_output(hf))
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None


def load_t5(directory) -> T5:
    directory = Path(directory)
    config = t5_config_from_hf(read_config(directory), directory / CONFIG)
    model = T5(config, rng=np.random.default_rng(0))
    mapping = t5_names(config)
    arrays, weights = read_weights(directory)
    tied = {k: "shared.weight" for k in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")}
    if config.tie_word_embeddings:
        tied["lm_head.weight"] = "shared.weight"
    elif "lm_head.weight" in arrays:          # a released v1.1 file: the head of its own
        mapping["lm_head.weight"] = "lm_head.weight"
    else:                                     # transformers 5 ties the head and leaves it out of the file
        mapping["lm_head.weight"] = "shared.weight"
    return load_mapped(model, arrays, mapping, weights, tied=tied, ignorable=T5_UNUSED)


def t5_names(config: T5Config) -> dict[str, str]:
    """minilm ``T5`` name → ``T5ForConditionalGeneration`` name (the head, if untied, left out)."""
    mapping = {"shared.weight": "shared.weight"}
    for stack, n in (("encoder", config.n_layer), ("decoder", config.n_decoder_layer or config.n_layer)):
        mapping[f"{stack}.relative_bias.relative_attention_bias.weight"] = \
            f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        mapping[f"{stack}.ln_f.weight"] = f"{stack}.final_layer_norm.weight"
        for i in range(n):
            ours, theirs = f"{stack}.blocks.{i}", f"{stack}.block.{i}.layer"
            sub = {"attn": "0.SelfAttention", "ln1": "0.layer_norm"}
            ff = 1
            if stack == "decoder":
                sub.update({"cross_attn": "1.EncDecAttention", "ln_cross": "1.layer_norm"})
                ff = 2
            sub.update({"ln2": f"{ff}.layer_norm"})
            for a, b in sub.items():
                if a.startswith("ln"):
                    mapping[f"{ours}.{a}.weight"] = f"{theirs}.{b}.weight"
                else:
                    for p, q in (("q_proj", "q"), ("k_proj", "k"), ("v_proj", "v"), ("out_proj", "o")):
                        mapping[f"{ours}.{a}.{p}.weight"] = f"{theirs}.{b}.{q}.weight"
            if config.ffn == "gated-gelu":
                mapping[f"{ours}.mlp.fc1.weight"] = f"{theirs}.{ff}.DenseReluDense.wi_0.weight"
                mapping[f"{ours}.mlp.fc_lin.weight"] = f"{theirs}.{ff}.DenseReluDense.wi_1.weight"
            else:
                mapping[f"{ours}.mlp.fc1.weight"] = f"{theirs}.{ff}.DenseReluDense.wi.weight"
            mapping[f"{ours}.mlp.fc2.weight"] = f"{theirs}.{ff}.DenseReluDense.wo.weight"
    return mapping
