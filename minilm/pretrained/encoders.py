"""Hugging Face RoBERTa, DistilBERT and ELECTRA folders → minilm's encoders, in eval mode.

All three are BERT's post-LN encoder; what differs is a switch and a name table:

* **RoBERTa** (``RobertaForMaskedLM``) → :class:`~minilm.models.roberta.RobertaForMaskedLM` with
  ``position_offset = padding_idx + 1`` (fairseq's positions start after the pad row; a pad token
  reads row ``padding_idx``); ``head_activation="gelu_exact"``: transformers' ``RobertaLMHead`` calls
  the exact GELU whatever ``hidden_act`` says. Names: ``roberta.*`` as BERT's, the head
  ``lm_head.{dense,layer_norm,bias}``; released files also hold ``roberta.pooler.*`` (unused here).
* **DistilBERT** (``DistilBertForMaskedLM``; Sanh et al. 2019, §3) → the same class: a BERT without
  segment embeddings (minilm keeps one all-zero segment row), ``transformer.layer.N.attention.
  {q,k,v,out}_lin``, ``sa_layer_norm``, ``ffn.lin{1,2}``, ``output_layer_norm``; the head
  ``vocab_transform`` → ``activation`` (the encoder's, as transformers) → ``vocab_layer_norm`` →
  ``vocab_projector`` (tied).
* **ELECTRA** (Clark et al. 2020): the discriminator (``ElectraForPreTraining``, head
  ``discriminator_predictions.{dense,dense_prediction}``) → :class:`ElectraDiscriminator`; the
  generator (``ElectraForMaskedLM``, head ``generator_predictions.{dense,LayerNorm}`` +
  ``generator_lm_head``) → :class:`ElectraGenerator`, of any ``intermediate_size`` (``generator_inner``).
  Each released checkpoint carries its own copy of the embeddings (``electra.embeddings.*``, and
  ``electra.embeddings_project.*`` when E ≠ H). The discriminator head's activation is ``hidden_act``
  (transformers' ``ElectraDiscriminatorPredictions``), the generator head's the exact GELU whatever
  ``hidden_act`` says (``ElectraGeneratorPredictions``: ``get_activation("gelu")``).

Letters: T time, C channels, E embedding size, V vocabulary.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError, ConfigError
from minilm.models.electra import ElectraConfig, ElectraDiscriminator, ElectraGenerator
from minilm.models.roberta import RobertaConfig, RobertaForMaskedLM

from .bert import HF_ACT
from .files import CONFIG, config_value, read_config
from .mapping import bert_layer_names, load_mapped, pairs
from .weights import read_weights

BUFFERS = ("position_ids", "token_type_ids")


def _activation(config: dict, key: str, path) -> str:
    act = config_value(config, key, path, str, default="gelu")
    if act not in HF_ACT:
        raise CheckpointError(f"{path}: key {key!r} is {act!r}; minilm supports {sorted(HF_ACT)}")
    return HF_ACT[act]


def _check_absolute(config: dict, path) -> None:
    for key, allowed in {"position_embedding_type": "absolute", "is_decoder": False,
                         "add_cross_attention": False}.items():
        if key in config and config[key] != allowed:
            raise CheckpointError(f"{path}: key {key!r} is {config[key]!r}; minilm supports only {allowed!r}")


def _embeddings(ours: str, theirs: str, segments: bool = True) -> dict[str, str]:
    names = {f"{ours}.word_embeddings.weight": f"{theirs}.word_embeddings.weight",
             f"{ours}.position_embeddings.weight": f"{theirs}.position_embeddings.weight",
             **pairs(f"{ours}.LayerNorm", f"{theirs}.LayerNorm")}
    if segments:
        names[f"{ours}.token_type_embeddings.weight"] = f"{theirs}.token_type_embeddings.weight"
    return names


def _roberta_model(path, **fields) -> RobertaForMaskedLM:
    """A RobertaForMaskedLM of the config ``fields`` read from ``path`` (no dropout; the weights are
    loaded next); a value the config refuses is a CheckpointError naming the file."""
    try:
        config = RobertaConfig(dropout=0.0, **fields)
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None
    return RobertaForMaskedLM(config, rng=np.random.default_rng(0))


def load_roberta(directory) -> RobertaForMaskedLM:
    directory = Path(directory)
    hf, path = read_config(directory), directory / CONFIG
    _check_absolute(hf, path)
    pad = config_value(hf, "pad_token_id", path, default=1)
    model = _roberta_model(
        path, vocab_size=config_value(hf, "vocab_size", path),
        max_position_embeddings=config_value(hf, "max_position_embeddings", path, default=514),
        n_layer=config_value(hf, "num_hidden_layers", path), n_head=config_value(hf, "num_attention_heads", path),
        n_embd=config_value(hf, "hidden_size", path), n_inner=config_value(hf, "intermediate_size", path),
        type_vocab_size=config_value(hf, "type_vocab_size", path, default=1),
        layer_norm_eps=float(config_value(hf, "layer_norm_eps", path, float, default=1e-5)),
        activation=_activation(hf, "hidden_act", path), head_activation="gelu_exact",
        position_offset=pad + 1, pad_token_id=pad)
    config = model.config
    arrays, weights = read_weights(directory)
    mapping = {**_embeddings("roberta.embeddings", "roberta.embeddings"),
               **bert_layer_names("roberta.encoder.layer.", "roberta.encoder.layer.", config.n_layer),
               **pairs("lm_head.transform.dense", "lm_head.dense"),
               **pairs("lm_head.transform.LayerNorm", "lm_head.layer_norm"), "lm_head.bias": "lm_head.bias"}
    return load_mapped(model, arrays, mapping, weights,
                       tied={"lm_head.decoder.weight": "roberta.embeddings.word_embeddings.weight",
                             "lm_head.decoder.bias": "lm_head.bias"},
                       ignorable=BUFFERS + ("pooler.dense.weight", "pooler.dense.bias"))


def load_distilbert(directory) -> RobertaForMaskedLM:
    directory = Path(directory)
    hf, path = read_config(directory), directory / CONFIG
    if hf.get("sinusoidal_pos_embds"):
        raise CheckpointError(f"{path}: key 'sinusoidal_pos_embds' is true; minilm reads learned positions only")
    model = _roberta_model(
        path, vocab_size=config_value(hf, "vocab_size", path),
        max_position_embeddings=config_value(hf, "max_position_embeddings", path, default=512),
        n_layer=config_value(hf, "n_layers", path), n_head=config_value(hf, "n_heads", path),
        n_embd=config_value(hf, "dim", path), n_inner=config_value(hf, "hidden_dim", path),
        type_vocab_size=1, layer_norm_eps=1e-12,   # DistilBERT's LayerNorms: eps 1e-12
        activation=_activation(hf, "activation", path))
    config = model.config
    per_layer = {"attn.q_proj": "attention.q_lin", "attn.k_proj": "attention.k_lin",
                 "attn.v_proj": "attention.v_lin", "attn.out_proj": "attention.out_lin",
                 "ln1": "sa_layer_norm", "mlp.fc1": "ffn.lin1", "mlp.fc2": "ffn.lin2", "ln2": "output_layer_norm"}
    mapping = {**_embeddings("roberta.embeddings", "distilbert.embeddings", segments=False),
               **bert_layer_names("roberta.encoder.layer.", "distilbert.transformer.layer.", config.n_layer,
                                  per_layer),
               **pairs("lm_head.transform.dense", "vocab_transform"),
               **pairs("lm_head.transform.LayerNorm", "vocab_layer_norm"), "lm_head.bias": "vocab_projector.bias"}
    C = config.n_embd
    arrays, weights = read_weights(directory)
    return load_mapped(model, arrays, mapping, weights,
                       tied={"vocab_projector.weight": "distilbert.embeddings.word_embeddings.weight"},
                       ignorable=BUFFERS,
                       fixed={"roberta.embeddings.token_type_embeddings.weight": np.zeros((1, C))})


def electra_config_from_hf(hf: dict, path, generator: bool) -> ElectraConfig:
    _check_absolute(hf, path)
    H = config_value(hf, "hidden_size", path)
    inner = config_value(hf, "intermediate_size", path)
    V = config_value(hf, "vocab_size", path)
    try:
        return ElectraConfig(
            vocab_size=V, max_position_embeddings=config_value(hf, "max_position_embeddings", path, default=512),
            n_layer=config_value(hf, "num_hidden_layers", path), n_head=config_value(hf, "num_attention_heads", path),
            n_embd=H, n_inner=inner, embedding_size=config_value(hf, "embedding_size", path, default=H),
            type_vocab_size=config_value(hf, "type_vocab_size", path, default=2), dropout=0.0,
            layer_norm_eps=float(config_value(hf, "layer_norm_eps", path, float, default=1e-12)),
            activation=_activation(hf, "hidden_act", path), head_activation="gelu_exact" if generator else None,
            # the generator is the whole checkpoint: its size is the config's, not a fraction of a discriminator
            generator_hidden_fraction=1.0, generator_layers_fraction=1.0, min_generator_hidden=min(8, H),
            generator_inner=inner if generator else None,
            pad_id=config_value(hf, "pad_token_id", path, default=0), mask_id=min(4, V - 1),
            special_ids=tuple(i for i in (2, 3) if i < V))
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None


def load_electra(directory):
    """An ``ElectraForPreTraining`` folder → ElectraDiscriminator; ``ElectraForMaskedLM`` → ElectraGenerator.
    Which one: the file's heads (``discriminator_predictions.*`` or ``generator_predictions.*``)."""
    directory = Path(directory)
    hf, path = read_config(directory), directory / CONFIG
    arrays, weights = read_weights(directory)
    generator = any(k.startswith("generator_predictions.") for k in arrays)
    if not generator and not any(k.startswith("discriminator_predictions.") for k in arrays):
        raise CheckpointError(f"{weights}: neither discriminator_predictions.* nor "
                              "generator_predictions.*; "
                              "minilm loads ElectraForPreTraining and ElectraForMaskedLM")
    config = electra_config_from_hf(hf, path, generator)
    rng = np.random.default_rng(0)
    model = ElectraGenerator(config, rng=rng) if generator else ElectraDiscriminator(config, rng=rng)
    mapping = {**_embeddings("embeddings", "electra.embeddings"),
               **bert_layer_names("encoder.layer.", "electra.encoder.layer.", config.n_layer)}
    if model.embeddings_project is not None:
        mapping.update(pairs("embeddings_project", "electra.embeddings_project"))
    tied = {}
    if generator:
        mapping.update({**pairs("lm_head.dense", "generator_predictions.dense"),
                        **pairs("lm_head.LayerNorm", "generator_predictions.LayerNorm"),
                        "lm_head.bias": "generator_lm_head.bias"})
        tied["generator_lm_head.weight"] = "electra.embeddings.word_embeddings.weight"
    else:
        mapping.update({**pairs("head.dense", "discriminator_predictions.dense"),
                        **pairs("head.dense_prediction", "discriminator_predictions.dense_prediction")})
    return load_mapped(model, arrays, mapping, weights, tied=tied, ignorable=BUFFERS)
