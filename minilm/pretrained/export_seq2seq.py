"""minilm's BART and T5 → Hugging Face folders that ``BartForConditionalGeneration`` and
``T5ForConditionalGeneration`` load with the same logits (the inverse of ``seq2seq.py``'s tables).

* **BART**: a model trained by minilm has ``position_offset = 0``; transformers' positions always
  start two rows in, so the exported table gets two rows of zeros in front (read by no token:
  BART's positions are 0 … T−1 + 2 whatever the padding). ``final_logits_bias`` is written as
  the (1, V) buffer, zeros when the model has none. ``scale_embedding`` is false, as in bart-base.
* **T5**: v1.0 as it is (tied, C^-½); v1.1 (``tie_word_embeddings=False``) writes its own
  ``lm_head.weight`` and ``tie_word_embeddings: false``, which transformers reads as "untied, no
  scaling".

GELU: minilm's ``"gelu"`` (tanh) is transformers' ``"gelu_new"``; ``"gelu_exact"`` its ``"gelu"``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import ConfigError
from minilm.models.bart import Bart
from minilm.models.t5 import T5

from .bert import TO_HF_ACT
from .files import write_folder
from .seq2seq import bart_names, t5_names

HF_OFFSET = 2   # BartLearnedPositionalEmbedding's offset


def bart_config_to_hf(model: Bart) -> dict:
    c = model.config
    if c.eps != 1e-5:
        raise ConfigError(f"export: BartConfig.eps={c.eps}; transformers' BART LayerNorms use 1e-5")
    n_dec = c.n_layer if c.n_decoder_layer is None else c.n_decoder_layer
    layers = {"encoder_layers": c.n_layer, "decoder_layers": n_dec}
    inner = c.n_inner or 4 * c.n_embd
    return {"architectures": ["BartForConditionalGeneration"], "model_type": "bart", "vocab_size": c.vocab_size,
            "d_model": c.n_embd, **layers, "encoder_attention_heads": c.n_head, "decoder_attention_heads": c.n_head,
            "encoder_ffn_dim": inner, "decoder_ffn_dim": inner, "max_position_embeddings": c.max_positions,
            "activation_function": TO_HF_ACT[c.activation], "dropout": c.dropout, "attention_dropout": 0.0,
            "activation_dropout": 0.0, "init_std": c.initializer_std, "scale_embedding": False,
            "pad_token_id": c.pad_id, "bos_token_id": c.bos_id, "eos_token_id": c.eos_id,
            "decoder_start_token_id": c.eos_id, "forced_eos_token_id": c.eos_id, "is_encoder_decoder": True,
            "tie_word_embeddings": True}


def export_bart(model: Bart, directory, tokenizer=None) -> Path:
    c, state = model.config, model.state_dict()
    arrays = {theirs: state[ours] for ours, theirs in bart_names(c).items() if ours in state}
    for stack in ("encoder", "decoder"):
        key = f"model.{stack}.embed_positions.weight"
        table = arrays[key]                                                   # (offset + P, C)
        pad = np.zeros((HF_OFFSET - c.position_offset, c.n_embd), dtype=table.dtype)
        if c.position_offset > HF_OFFSET:
            raise ConfigError(f"export: BART position_offset={c.position_offset}; transformers' is {HF_OFFSET}")
        arrays[key] = np.concatenate([pad, table])                            # (2 + P, C)
    bias = state.get("final_logits_bias", np.zeros(c.vocab_size, dtype=np.float32))
    arrays["final_logits_bias"] = bias.reshape(1, -1)                         # (1, V), a buffer there
    return write_folder(directory, bart_config_to_hf(model), arrays, tokenizer)


def t5_config_to_hf(model: T5) -> dict:
    c = model.config
    return {"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "vocab_size": c.vocab_size,
            "d_model": c.n_embd, "d_kv": c.head_dim, "d_ff": c.n_inner or 4 * c.n_embd, "num_layers": c.n_layer,
            "num_decoder_layers": c.n_layer if c.n_decoder_layer is None else c.n_decoder_layer,
            "num_heads": c.n_head, "relative_attention_num_buckets": c.num_buckets,
            "relative_attention_max_distance": c.max_distance, "dropout_rate": c.dropout,
            "layer_norm_epsilon": c.eps, "feed_forward_proj": c.ffn, "tie_word_embeddings": c.tie_word_embeddings,
            "pad_token_id": c.pad_id, "eos_token_id": c.eos_id, "decoder_start_token_id": c.start_id,
            "is_encoder_decoder": True, "initializer_factor": 1.0}


def export_t5(model: T5, directory, tokenizer=None) -> Path:
    state = model.state_dict()
    arrays = {theirs: state[ours] for ours, theirs in t5_names(model.config).items()}
    if not model.config.tie_word_embeddings:
        arrays["lm_head.weight"] = state["lm_head.weight"]
    return write_folder(directory, t5_config_to_hf(model), arrays, tokenizer)
