"""minilm's RoBERTa, DistilBERT-like encoders and ELECTRA → Hugging Face folders that transformers'
``RobertaForMaskedLM`` / ``DistilBertForMaskedLM`` / ``ElectraForPreTraining`` / ``ElectraForMaskedLM``
load with the same logits (the inverse of ``encoders.py``'s name tables, built from the same helpers).

* **RoBERTa**: transformers reads position row ``padding_idx + 1 + t`` for the t-th real token and
  row ``padding_idx`` for a pad (fairseq's ``make_positions``). A model minilm trained has
  ``position_offset = 0`` (token t reads row t), so the exported table gets ``pad + 1`` rows in
  front: the pad's row is the table's row 0, the rest zeros, read by no real token. ``pad`` is the
  tokenizer's pad id (else the config's), so that transformers counts exactly the real tokens. The
  real tokens' logits are then equal; a pad position's are not (minilm's pad reads row t, and the
  attention mask keeps it from mattering to any real token). A model loaded from a RoBERTa folder
  (offset ``pad + 1`` already) is written as it is.
* **DistilBERT-like**: a ``RobertaForMaskedLM`` with positions from row 0, one segment and BERT's
  LayerNorm ε = 1e-12 (what ``load_distilbert`` gives) → ``DistilBertForMaskedLM``. DistilBERT has
  no segment table (Sanh et al. 2019, §3), so minilm's one segment row, added to every token, is
  folded into the position table (row p + segment row 0).
* **ELECTRA** (Clark et al. 2020): the discriminator → ``ElectraForPreTraining``, the generator →
  ``ElectraForMaskedLM``; a minilm :class:`Electra` (both, one shared table) → two folders,
  ``DIR/discriminator`` and ``DIR/generator``, each with its own copy of the embeddings, as the
  released checkpoints are.

The heads: transformers' RoBERTa LM head (``RobertaLMHead``) and ELECTRA generator head
(``ElectraGeneratorPredictions``) always use the exact GELU; DistilBERT's ``vocab_transform`` and
ELECTRA's discriminator head use the encoder's activation. No config.json can say otherwise, so a
model whose head activation (``head_activation``, else ``activation``) differs is refused, naming
the field to set before training: a RoBERTa or ELECTRA trained with minilm's defaults (the tanh
``"gelu"`` everywhere) needs ``head_activation="gelu_exact"`` (before, transformers gave such a model
logits 3.8e-5 / 1.0e-5 away). What ``load_pretrained`` gives for a transformers folder is written back
as it came.

GELU: minilm's ``"gelu"`` (tanh) is transformers' ``"gelu_new"``; ``"gelu_exact"`` its ``"gelu"``.
Letters: P positions, C channels, V vocabulary.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import ConfigError
from minilm.models.electra import Electra, ElectraDiscriminator, ElectraGenerator
from minilm.models.roberta import RobertaForMaskedLM

from .bert import TO_HF_ACT, check_head_activation
from .encoders import _embeddings
from .files import write_folder
from .mapping import bert_layer_names, pairs

DISTILBERT_LAYER = {"attn.q_proj": "attention.q_lin", "attn.k_proj": "attention.k_lin",
                    "attn.v_proj": "attention.v_lin", "attn.out_proj": "attention.out_lin", "ln1": "sa_layer_norm",
                    "mlp.fc1": "ffn.lin1", "mlp.fc2": "ffn.lin2", "ln2": "output_layer_norm"}


def _hf_act(activation: str) -> str:
    if activation not in TO_HF_ACT:
        raise ConfigError(f"export: activation {activation!r}; transformers has {sorted(TO_HF_ACT)}")
    return TO_HF_ACT[activation]


def _renamed(state: dict, mapping: dict[str, str]) -> dict[str, np.ndarray]:
    return {theirs: state[ours] for ours, theirs in mapping.items()}


def is_distilbert_like(model) -> bool:
    c = model.config
    return (isinstance(model, RobertaForMaskedLM) and c.position_offset == 0 and c.type_vocab_size == 1
            and c.layer_norm_eps == 1e-12)


def export_roberta(model: RobertaForMaskedLM, directory, tokenizer=None) -> Path:
    c, state = model.config, model.state_dict()
    check_head_activation(c, "RobertaLMHead", fixed="gelu_exact")
    pad = c.pad_token_id if c.position_offset else getattr(tokenizer, "pad_id", None)
    pad = c.pad_token_id if pad is None else pad
    mapping = {**_embeddings("roberta.embeddings", "roberta.embeddings"),
               **bert_layer_names("roberta.encoder.layer.", "roberta.encoder.layer.", c.n_layer),
               **pairs("lm_head.transform.dense", "lm_head.dense"),
               **pairs("lm_head.transform.LayerNorm", "lm_head.layer_norm"), "lm_head.bias": "lm_head.bias"}
    arrays = _renamed(state, mapping)
    table = arrays["roberta.embeddings.position_embeddings.weight"]              # (P, C)
    if c.position_offset == 0:
        front = np.zeros((pad + 1, c.n_embd), dtype=table.dtype)
        front[pad] = table[0]
        table = np.concatenate([front, table])                                  # (pad + 1 + P, C)
    elif c.position_offset != pad + 1:
        raise ConfigError(f"export: RoBERTa position_offset={c.position_offset} with pad id {pad}; transformers "
                          f"reads positions from padding_idx + 1 = {pad + 1}")
    arrays["roberta.embeddings.position_embeddings.weight"] = table
    special = {f"{k}_token_id": getattr(tokenizer, f"{k}_id", None) for k in ("bos", "eos")}
    config = {"architectures": ["RobertaForMaskedLM"], "model_type": "roberta", "vocab_size": c.vocab_size,
              "hidden_size": c.n_embd, "num_hidden_layers": c.n_layer, "num_attention_heads": c.n_head,
              "intermediate_size": c.n_inner or 4 * c.n_embd, "hidden_act": _hf_act(c.activation),
              "hidden_dropout_prob": c.dropout, "attention_probs_dropout_prob": c.dropout,
              "max_position_embeddings": len(table), "type_vocab_size": c.type_vocab_size,
              "initializer_range": c.initializer_range, "layer_norm_eps": c.layer_norm_eps,
              "position_embedding_type": "absolute", "pad_token_id": pad, "tie_word_embeddings": True,
              **{k: v for k, v in special.items() if v is not None}}
    return write_folder(directory, config, arrays, tokenizer)


def export_distilbert(model: RobertaForMaskedLM, directory, tokenizer=None) -> Path:
    if not is_distilbert_like(model):
        raise ConfigError("export: DistilBERT format needs positions from row 0, one segment and LayerNorm "
                          f"eps 1e-12; this model has position_offset={model.config.position_offset}, "
                          f"type_vocab_size={model.config.type_vocab_size}, eps={model.config.layer_norm_eps}")
    c, state = model.config, model.state_dict()
    mapping = {**_embeddings("roberta.embeddings", "distilbert.embeddings", segments=False),
               **bert_layer_names("roberta.encoder.layer.", "distilbert.transformer.layer.", c.n_layer,
                                  DISTILBERT_LAYER),
               **pairs("lm_head.transform.dense", "vocab_transform"),
               **pairs("lm_head.transform.LayerNorm", "vocab_layer_norm"), "lm_head.bias": "vocab_projector.bias"}
    arrays = _renamed(state, mapping)
    segment = state["roberta.embeddings.token_type_embeddings.weight"][0]       # (C,), added to every token
    arrays["distilbert.embeddings.position_embeddings.weight"] = (
        arrays["distilbert.embeddings.position_embeddings.weight"] + segment)     # (P, C)
    if c.activation not in ("gelu_exact", "relu"):
        raise ConfigError(f"export: DistilBERT's activation is 'gelu' (exact) or 'relu', not minilm's {c.activation!r}")
    check_head_activation(c, "DistilBertForMaskedLM's vocab_transform")
    config = {"architectures": ["DistilBertForMaskedLM"], "model_type": "distilbert", "vocab_size": c.vocab_size,
              "dim": c.n_embd, "n_layers": c.n_layer, "n_heads": c.n_head, "hidden_dim": c.n_inner or 4 * c.n_embd,
              "activation": _hf_act(c.activation), "max_position_embeddings": c.max_position_embeddings,
              "dropout": c.dropout, "attention_dropout": c.dropout, "sinusoidal_pos_embds": False,
              "initializer_range": c.initializer_range, "pad_token_id": getattr(tokenizer, "pad_id", None) or 0,
              "tie_word_embeddings": True}
    return write_folder(directory, config, arrays, tokenizer)


def electra_config_to_hf(model, generator: bool) -> dict:
    c = model.config
    part = c.bert_config("generator" if generator else "discriminator")
    return {"architectures": ["ElectraForMaskedLM" if generator else "ElectraForPreTraining"],
            "model_type": "electra", "vocab_size": c.vocab_size, "embedding_size": c.embedding_dim,
            "hidden_size": part.n_embd, "num_hidden_layers": part.n_layer, "num_attention_heads": part.n_head,
            "intermediate_size": part.n_inner or 4 * part.n_embd, "hidden_act": _hf_act(c.activation),
            "hidden_dropout_prob": c.dropout, "attention_probs_dropout_prob": c.dropout,
            "max_position_embeddings": c.max_position_embeddings, "type_vocab_size": c.type_vocab_size,
            "initializer_range": c.initializer_range, "layer_norm_eps": c.layer_norm_eps,
            "position_embedding_type": "absolute", "pad_token_id": c.pad_id, "tie_word_embeddings": True}


def export_electra_part(model, directory, tokenizer=None) -> Path:
    """One ELECTRA network (ElectraDiscriminator or ElectraGenerator) as its transformers folder."""
    generator = isinstance(model, ElectraGenerator)
    c = model.config
    if not generator and (model.head is None or model.lm_head is not None):
        raise ConfigError(f"export: an ELECTRA discriminator trained with objective {c.objective!r}; "
                          "ElectraForPreTraining has the replaced-token head alone ('electra', 'electra15')")
    if generator:   # the replaced-token head follows the encoders' activation, as transformers' does
        check_head_activation(c, "ElectraGeneratorPredictions", fixed="gelu_exact")
    mapping = {**_embeddings("embeddings", "electra.embeddings"),
               **bert_layer_names("encoder.layer.", "electra.encoder.layer.", len(model.encoder.layer))}
    if model.embeddings_project is not None:
        mapping.update(pairs("embeddings_project", "electra.embeddings_project"))
    if generator:
        mapping.update({**pairs("lm_head.dense", "generator_predictions.dense"),
                        **pairs("lm_head.LayerNorm", "generator_predictions.LayerNorm"),
                        "lm_head.bias": "generator_lm_head.bias"})
    else:
        mapping.update({**pairs("head.dense", "discriminator_predictions.dense"),
                        **pairs("head.dense_prediction", "discriminator_predictions.dense_prediction")})
    arrays = _renamed(model.state_dict(), mapping)
    return write_folder(directory, electra_config_to_hf(model, generator), arrays, tokenizer)


def export_electra(model, directory, tokenizer=None) -> Path:
    """An :class:`Electra` → ``DIR/discriminator`` + ``DIR/generator``; one part → ``DIR`` itself."""
    if isinstance(model, (ElectraDiscriminator, ElectraGenerator)):
        return export_electra_part(model, directory, tokenizer)
    if not isinstance(model, Electra):
        raise ConfigError(f"export_electra: a {type(model).__name__}, expected Electra or one of its two networks")
    directory = Path(directory)
    export_electra_part(model.discriminator, directory / "discriminator", tokenizer)
    export_electra_part(model.generator, directory / "generator", tokenizer)
    return directory


def export_encoder(model, directory, tokenizer=None) -> Path:
    """RoBERTa (DistilBERT-like when ``is_distilbert_like``) or ELECTRA, picked by the model's class."""
    if isinstance(model, RobertaForMaskedLM):
        return (export_distilbert if is_distilbert_like(model) else export_roberta)(model, directory, tokenizer)
    return export_electra(model, directory, tokenizer)
