"""minilm's :class:`~minilm.models.xlnet_released.XLNetReleased` → a Hugging Face folder that
``XLNetLMHeadModel`` (and ``AutoModelForCausalLM``) loads with the same logits; the inverse of
``xlnet.py``'s table.

The parameters go under ``transformer.`` with transformers' shapes as they are (the model already
stores q/k/v/o/r as (C, H, D) and ``mask_emb`` as (1, 1, C)); the output bias is ``lm_loss.bias``;
``lm_loss.weight`` is left out, as transformers 5 saves a tied head. The config says
``attn_type "bi"``, ``bi_data false`` and ``ff_activation`` in transformers' spelling (minilm's
``"gelu_exact"`` is its ``"gelu"``, minilm's tanh ``"gelu"`` its ``"gelu_new"``).

With ``tokenizer`` (e.g. the ``HFTokenizer`` that ``load_pretrained`` gives for an XLNet folder), its
files go in too (``files.write_folder``); the config's pad / bos / eos ids are then the tokenizer's.

minilm's teaching :class:`~minilm.models.xlnet.XLNet` has no such export: it has absolute positions,
pre-LN and biased projections, which no transformers class computes.
"""
from __future__ import annotations

from pathlib import Path

from autograd.errors import ConfigError
from minilm.models.xlnet_released import XLNetReleased

from .bert import TO_HF_ACT
from .files import write_folder
from .xlnet import xlnet_names


def xlnet_config_to_hf(model: XLNetReleased, tokenizer=None) -> dict:
    c = model.config
    ids = {"pad_token_id": 5, "bos_token_id": 1, "eos_token_id": 2}   # xlnet-base-cased's, unless the tokenizer says
    for key in ids:
        value = getattr(tokenizer, key.replace("_token", ""), None)
        ids[key] = ids[key] if value is None else value
    return {"architectures": ["XLNetLMHeadModel"], "model_type": "xlnet", "vocab_size": c.vocab_size,
            "d_model": c.n_embd, "n_layer": c.n_layer, "n_head": c.n_head, "d_head": c.n_embd // c.n_head,
            "d_inner": c.n_inner, "ff_activation": TO_HF_ACT[c.activation], "layer_norm_eps": c.layer_norm_eps,
            "clamp_len": c.clamp_len, "mem_len": c.mem_len, "attn_type": "bi", "bi_data": False,
            "same_length": False, "untie_r": True, "reuse_len": None, "dropout": c.dropout,
            "initializer_range": c.initializer_range, "tie_word_embeddings": True,
            **ids}


def export_xlnet(model: XLNetReleased, directory, tokenizer=None) -> Path:
    if not isinstance(model, XLNetReleased):
        raise ConfigError(f"export_xlnet: a {type(model).__name__}; expected an XLNetReleased (the teaching "
                          "XLNet has no transformers counterpart)")
    state = model.state_dict()
    arrays = {theirs: state[ours] for ours, theirs in xlnet_names(model).items()}
    return write_folder(directory, xlnet_config_to_hf(model, tokenizer), arrays, tokenizer)
