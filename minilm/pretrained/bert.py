"""Hugging Face BERT folders ⇄ minilm's BERT (``minilm/models/bert.py``, whose docstring has the
name table this file implements).

A folder holds ``config.json`` (``BertConfig`` of transformers), ``model.safetensors`` and, for the
tokenizer, ``vocab.txt`` + ``tokenizer_config.json``. Three layouts are read:

* ``BertModel`` (e.g. all-MiniLM-L6-v2): names without a prefix, ``pooler.*`` included;
* ``BertForPreTraining`` / ``BertForMaskedLM``: ``bert.`` in front, the MLM head under
  ``cls.predictions.*`` (its decoder is tied to the word embeddings, so the file may leave
  ``cls.predictions.decoder.weight`` out), the NSP head ``cls.seq_relationship.*`` (pre-training only).

The pooler and the NSP head are optional (BertForMaskedLM has neither); when absent they keep their
initial values and ``PretrainedBert.missing`` names them. Any other missing key, any key nothing
maps to, and any wrong shape is a CheckpointError naming the file and the key.

GELU: transformers' ``hidden_act: "gelu"`` is the exact erf form, which minilm calls
``"gelu_exact"``; minilm's own ``"gelu"`` is the tanh form, which transformers calls ``"gelu_new"``.
The MLM head's activation is ``hidden_act`` too (transformers' ``BertPredictionHeadTransform``), so
``head_activation`` stays None; the export refuses a model whose head differs from its encoder.

Letters: B batch, T time, C channels, L layers.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError, ConfigError
from minilm.models.bert import BertConfig, BertModel
from minilm.models.bert_heads import BertForPreTraining

from .files import CONFIG, check_unexpected, config_value, read_config, take
from .weights import read_weights

# transformers' hidden_act → minilm's activation, and back
HF_ACT = {"gelu": "gelu_exact", "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "relu": "relu"}
TO_HF_ACT = {"gelu_exact": "gelu", "gelu": "gelu_new", "relu": "relu"}
OPTIONAL = ("pooler.", "cls.seq_relationship.")  # heads a BertForMaskedLM file does not have


def hf_names(n_layer: int) -> dict[str, str]:
    """minilm ``BertModel`` name → Hugging Face ``BertModel`` name (the table in models/bert.py)."""
    names = {f"embeddings.{k}": f"embeddings.{k}" for k in
             ("word_embeddings.weight", "position_embeddings.weight", "token_type_embeddings.weight",
              "LayerNorm.weight", "LayerNorm.bias")}
    per_layer = {"attn.q_proj": "attention.self.query", "attn.k_proj": "attention.self.key",
                 "attn.v_proj": "attention.self.value", "attn.out_proj": "attention.output.dense",
                 "ln1": "attention.output.LayerNorm", "mlp.fc1": "intermediate.dense",
                 "mlp.fc2": "output.dense", "ln2": "output.LayerNorm"}
    for i in range(n_layer):
        for ours, theirs in per_layer.items():
            for p in ("weight", "bias"):
                names[f"encoder.layer.{i}.{ours}.{p}"] = f"encoder.layer.{i}.{theirs}.{p}"
    for p in ("weight", "bias"):
        names[f"pooler.dense.{p}"] = f"pooler.dense.{p}"
    return names


def head_names() -> dict[str, str]:
    """The pre-training heads: the same names on both sides (the decoder weight is tied)."""
    names = {"cls.predictions.bias": "cls.predictions.bias"}
    for part in ("transform.dense", "transform.LayerNorm"):
        for p in ("weight", "bias"):
            names[f"cls.predictions.{part}.{p}"] = f"cls.predictions.{part}.{p}"
    for p in ("weight", "bias"):
        names[f"cls.seq_relationship.{p}"] = f"cls.seq_relationship.{p}"
    return names


def bert_config_from_hf(config: dict, path) -> BertConfig:
    """transformers' BERT ``config.json`` → minilm ``BertConfig`` (inference: dropout 0)."""
    if config.get("model_type", "bert") != "bert":
        raise CheckpointError(f"{path}: model_type {config.get('model_type')!r}, expected 'bert'")
    unsupported = {"position_embedding_type": ("absolute",), "is_decoder": (False,),
                   "add_cross_attention": (False,)}
    for key, allowed in unsupported.items():
        if key in config and config[key] not in allowed:
            raise CheckpointError(f"{path}: key {key!r} is {config[key]!r}; minilm supports only {allowed[0]!r}")
    act = config_value(config, "hidden_act", path, str, default="gelu")
    if act not in HF_ACT:
        raise CheckpointError(f"{path}: key 'hidden_act' is {act!r}; minilm supports {sorted(HF_ACT)}")
    try:
        return BertConfig(
            vocab_size=config_value(config, "vocab_size", path),
            max_position_embeddings=config_value(config, "max_position_embeddings", path, default=512),
            n_layer=config_value(config, "num_hidden_layers", path),
            n_head=config_value(config, "num_attention_heads", path),
            n_embd=config_value(config, "hidden_size", path),
            n_inner=config_value(config, "intermediate_size", path),
            type_vocab_size=config_value(config, "type_vocab_size", path, default=2),
            dropout=0.0,
            layer_norm_eps=float(config_value(config, "layer_norm_eps", path, float, default=1e-12)),
            initializer_range=float(config_value(config, "initializer_range", path, float, default=0.02)),
            activation=HF_ACT[act])
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None


def check_head_activation(config, hf_head: str, fixed: str | None = None) -> None:
    """Export: a ConfigError unless transformers' ``hf_head`` computes the model's head activation.
    That head applies ``fixed`` (RoBERTa's and ELECTRA's generator head: the exact GELU, whatever the
    config says), else the encoder's activation, the only one a config.json can name."""
    head = config.head_activation or config.activation
    want = fixed or config.activation
    if head != want:
        rule = f"always {want!r}" if fixed else f"hidden_act, the encoder's {want!r}"
        raise ConfigError(f"export: this model's head applies {head!r} (head_activation={config.head_activation!r}, "
                          f"activation={config.activation!r}), but transformers' {hf_head} applies {rule}, so its "
                          f"logits would differ; only a model built with head_activation={want!r} can be exported")


def bert_config_to_hf(config: BertConfig, architecture: str) -> dict:
    """minilm ``BertConfig`` → transformers' ``config.json``."""
    return {"architectures": [architecture], "model_type": "bert", "vocab_size": config.vocab_size,
            "hidden_size": config.n_embd, "num_hidden_layers": config.n_layer,
            "num_attention_heads": config.n_head, "intermediate_size": config.n_inner or 4 * config.n_embd,
            "hidden_act": TO_HF_ACT[config.activation], "hidden_dropout_prob": config.dropout,
            "attention_probs_dropout_prob": config.dropout,
            "max_position_embeddings": config.max_position_embeddings,
            "type_vocab_size": config.type_vocab_size, "initializer_range": config.initializer_range,
            "layer_norm_eps": config.layer_norm_eps, "position_embedding_type": "absolute",
            "pad_token_id": 0, "tie_word_embeddings": True}


def load_bert_model(directory):
    """``(model, config, hf_config, missing)``: BertForPreTraining when the folder has an MLM head
    (``cls.predictions.*``), else BertModel; in eval mode."""
    directory = Path(directory)
    hf_config = read_config(directory)
    config = bert_config_from_hf(hf_config, directory / CONFIG)
    arrays, path = read_weights(directory)
    prefix = "bert." if any(k.startswith("bert.") for k in arrays) else ""
    has_mlm = any(k.startswith("cls.predictions.") for k in arrays)
    rng = np.random.default_rng(0)
    model = BertForPreTraining(config, rng=rng) if has_mlm else BertModel(config, rng=rng)
    outer = "bert." if has_mlm else ""       # minilm's name prefix of the encoder
    mapping = {outer + ours: prefix + theirs for ours, theirs in hf_names(config.n_layer).items()}
    if has_mlm:
        mapping.update(head_names())
    missing = sorted({m for m in OPTIONAL for ours, hf in mapping.items()
                      if hf.removeprefix(prefix).startswith(m) and hf not in arrays})
    mapping = {ours: hf for ours, hf in mapping.items() if not hf.removeprefix(prefix).startswith(tuple(missing))}
    state = model.state_dict()
    weights = take(arrays, mapping, path, {k: v.shape for k, v in state.items()})
    word = prefix + "embeddings.word_embeddings.weight"
    decoder = arrays.get("cls.predictions.decoder.weight")
    if decoder is not None and (decoder.shape != arrays[word].shape or not np.allclose(decoder, arrays[word])):
        raise CheckpointError(f"{path}: key 'cls.predictions.decoder.weight' differs from {word!r}; minilm's "
                              "MLM decoder is tied to the word embeddings")
    check_unexpected(arrays, set(mapping.values()), path,
                     ignorable=("embeddings.position_ids", "cls.predictions.decoder.weight",
                                "cls.predictions.decoder.bias"))
    state.update(weights)
    if has_mlm:  # the tied decoder is the same Parameter: give it the loaded table, not the init
        state["cls.predictions.decoder.weight"] = state["bert.embeddings.word_embeddings.weight"]
    model.load_state_dict(state)
    model.eval()
    return model, config, hf_config, missing


def export_bert(model, directory, tokenizer=None):
    """A minilm BertModel (→ ``BertModel`` layout) or BertForPreTraining (→ ``BertForPreTraining``
    layout: ``bert.*`` + ``cls.*``, which ``BertForMaskedLM.from_pretrained`` also reads, ignoring
    the pooler and NSP head) as a Hugging Face folder. The tied decoder weight is not written."""
    from .files import write_folder
    head = isinstance(model, BertForPreTraining)
    if head:
        check_head_activation(model.config, "BertPredictionHeadTransform")
    state = model.state_dict()
    outer = "bert." if head else ""   # the same prefix on both sides
    arrays = {outer + theirs: state[outer + ours] for ours, theirs in hf_names(model.config.n_layer).items()}
    if head:
        arrays.update({theirs: state[ours] for ours, theirs in head_names().items()})
    arch = "BertForPreTraining" if head else "BertModel"
    return write_folder(directory, bert_config_to_hf(model.config, arch), arrays, tokenizer)
