"""Hugging Face DeBERTa (v1, ``model_type="deberta"``) and DeBERTa-v2/v3 (``"deberta-v2"``) folders →
minilm's :class:`~minilm.models.deberta.DebertaForMaskedLM`, in eval mode, with the logits of
transformers' ``DebertaForMaskedLM`` / ``DebertaV2ForMaskedLM``.

The released models (He et al. 2021; the code of microsoft/DeBERTa, which transformers'
``modeling_deberta.py`` and ``modeling_deberta_v2.py`` follow) differ from the paper's, and the
loader sets ``DebertaConfig``'s switches accordingly:

* ``rel_index="released"``: both relative terms read row clip(i − j + k) of the table (the paper's
  position-to-content term reads clip(j − i + k));
* ``emd=False``: ``DebertaModel.z_steps`` is 0, so the MLM class never runs the enhanced mask decoder;
* ``padding="released"``: the mask is m_i·m_j (a padded row attends uniformly) and the embeddings of
  padded tokens are multiplied by 0;
* the erf GELU (``hidden_act="gelu"``), ``position_biased_input`` (absolute positions at the input),
  ``embedding_size`` ≠ ``hidden_size`` (``embed_proj``), the scale 1/√(d·(1 + len(pos_att_type)));
* v1: the relative table without LayerNorm, one ``in_proj`` (3C × C, per head [q | k | v] rows, no
  bias) plus ``q_bias`` / ``v_bias``, ``pos_proj`` (no bias) for content-to-position and
  ``pos_q_proj`` for position-to-content; the zero biases become minilm's k and position-key biases;
* v2/v3: ``query_proj`` / ``key_proj`` / ``value_proj``, ``norm_rel_ebd="layer_norm"`` (the table's
  ``encoder.LayerNorm``), ``share_att_key`` (positions projected by the content W_q, W_k),
  ``position_buckets`` (log buckets; the table has 2·position_buckets rows).

The MLM head is read under either name: the released checkpoints' ``lm_predictions.lm_head.
{dense,LayerNorm,bias}`` (transformers' class with ``legacy=false``) or ``cls.predictions.
{transform.dense,transform.LayerNorm,bias}`` (``legacy=true``, what transformers writes by default;
its ``decoder`` is tied to the word embeddings). A released config says nothing of ``legacy``, so
transformers builds ``cls.predictions`` and leaves the file's ``lm_predictions`` unused (a random
head); minilm reads the file's head, which is what transformers computes with ``"legacy": false``.
Every path goes through Task 12.4's ``deberta_scores`` (``minilm/models/deberta_positions.py``).
v3's replaced-token head (``mask_predictions.*``)
and an unused ``position_embeddings`` table are skipped, as transformers skips them. Refused, with
the key named: ``conv_kernel_size`` > 0 (v2-xlarge's convolution), ``talking_head``,
``type_vocab_size`` > 0, ``relative_attention`` false, ``attention_head_size`` ≠ C / H.

Letters: C hidden size, H heads, d = C / H, E embedding size, V vocabulary.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import CheckpointError, ConfigError
from minilm.models.deberta import DebertaConfig, DebertaForMaskedLM

from .bert import HF_ACT
from .files import CONFIG, config_value, read_config
from .mapping import load_mapped, pairs
from .weights import read_weights

HEADS = {"lm_predictions.lm_head.": {"head_dense": "dense", "head_ln": "LayerNorm", "head_bias": "bias"},
         "cls.predictions.": {"head_dense": "transform.dense", "head_ln": "transform.LayerNorm", "head_bias": "bias"}}
SKIPPED = ("position_ids",)
DROPPED = "mask_predictions."   # v3's replaced-token-detection head (transformers skips it too)


def _terms(hf: dict, path) -> tuple:
    raw = hf.get("pos_att_type") or []
    terms = [t.strip() for t in raw.lower().split("|")] if isinstance(raw, str) else [str(t).lower() for t in raw]
    terms = tuple(t for t in ("c2p", "p2c") if t in terms) if set(terms) <= {"c2p", "p2c"} else None
    if not terms:
        raise CheckpointError(f"{path}: pos_att_type={raw!r}; minilm reads 'c2p', 'p2c' or both")
    return terms


def _refuse(hf: dict, path, v2: bool) -> None:
    if not hf.get("relative_attention", False):
        raise CheckpointError(f"{path}: relative_attention is false; minilm's DeBERTa always has relative attention")
    for key, bad in (("conv_kernel_size", lambda v: v and v > 0), ("talking_head", bool),
                     ("type_vocab_size", lambda v: v and v > 0)):
        if bad(hf.get(key)):
            raise CheckpointError(f"{path}: key {key!r} is {hf[key]!r}; minilm's DeBERTa has no "
                                  f"{'convolution layer' if key == 'conv_kernel_size' else key}")
    C, H = hf.get("hidden_size"), hf.get("num_attention_heads")
    if v2 and "attention_head_size" in hf and C and H and hf["attention_head_size"] * H != C:
        raise CheckpointError(f"{path}: attention_head_size={hf['attention_head_size']} with {H} heads; "
                              f"minilm's heads are hidden_size / heads = {C // H} wide")


def deberta_config_from_hf(hf: dict, path, v2: bool) -> DebertaConfig:
    _refuse(hf, path, v2)
    act = config_value(hf, "hidden_act", path, str, default="gelu")
    if HF_ACT.get(act) not in ("gelu", "gelu_exact"):
        raise CheckpointError(f"{path}: key 'hidden_act' is {act!r}; minilm's DeBERTa reads 'gelu' and 'gelu_new'")
    P = config_value(hf, "max_position_embeddings", path, default=512)
    k = config_value(hf, "max_relative_positions", path, default=-1)
    buckets = config_value(hf, "position_buckets", path, default=-1) if v2 else -1
    norms = [x.strip() for x in str(hf.get("norm_rel_ebd", "none")).lower().split("|")] if v2 else ["none"]
    C = config_value(hf, "hidden_size", path)
    E = config_value(hf, "embedding_size", path, default=C)
    try:
        return DebertaConfig(
            vocab_size=config_value(hf, "vocab_size", path), max_position_embeddings=P,
            max_relative_positions=k if k >= 1 else P, n_layer=config_value(hf, "num_hidden_layers", path),
            n_head=config_value(hf, "num_attention_heads", path), n_embd=C,
            n_inner=config_value(hf, "intermediate_size", path),
            share_att_key=bool(hf.get("share_att_key", False)) if v2 else False, dropout=0.0,
            layer_norm_eps=float(config_value(hf, "layer_norm_eps", path, float, default=1e-7)),
            rel_index="released", emd=False, rel_norm="layer_norm" if "layer_norm" in norms else "none",
            position_buckets=max(buckets, 0), pos_att_type=_terms(hf, path), activation=HF_ACT[act],
            embedding_size=None if E == C else E,
            position_biased_input=bool(hf.get("position_biased_input", True)), padding="released")
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None


def deberta_names(config: DebertaConfig, v2: bool, head: str) -> dict[str, str]:
    """minilm name → HF name. v1's q / k / v weights are the synthetic keys ``…self.{q,k,v}_w`` that
    :func:`split_in_proj` cuts out of ``in_proj.weight``."""
    mapping = {"word_embeddings.weight": "deberta.embeddings.word_embeddings.weight",
               **pairs("emb_ln", "deberta.embeddings.LayerNorm"),
               "rel_embeddings.weight": "deberta.encoder.rel_embeddings.weight"}
    if config.position_biased_input:
        mapping["abs_position_embeddings.weight"] = "deberta.embeddings.position_embeddings.weight"
    if (config.embedding_size or config.n_embd) != config.n_embd:
        mapping["embed_proj.weight"] = "deberta.embeddings.embed_proj.weight"
    if config.rel_norm == "layer_norm":
        mapping.update(pairs("rel_ln", "deberta.encoder.LayerNorm"))
    for i in range(config.n_layer):
        ours, theirs = f"layers.{i}", f"deberta.encoder.layer.{i}"
        att = f"{theirs}.attention.self"
        if v2:
            proj = {"q_proj": "query_proj", "k_proj": "key_proj", "v_proj": "value_proj",
                    "pos_q_proj": "pos_query_proj", "pos_k_proj": "pos_key_proj"}
            for a, b in proj.items():
                mapping.update(pairs(f"{ours}.attn.{a}", f"{att}.{b}"))
        else:
            mapping.update({f"{ours}.attn.q_proj.weight": f"{att}.q_w", f"{ours}.attn.k_proj.weight": f"{att}.k_w",
                            f"{ours}.attn.v_proj.weight": f"{att}.v_w", f"{ours}.attn.q_proj.bias": f"{att}.q_bias",
                            f"{ours}.attn.v_proj.bias": f"{att}.v_bias", f"{ours}.attn.pos_k_proj.weight":
                            f"{att}.pos_proj.weight", **pairs(f"{ours}.attn.pos_q_proj", f"{att}.pos_q_proj")})
        for a, b in {"attn.out_proj": "attention.output.dense", "ln1": "attention.output.LayerNorm",
                     "mlp.fc1": "intermediate.dense", "mlp.fc2": "output.dense", "ln2": "output.LayerNorm"}.items():
            mapping.update(pairs(f"{ours}.{a}", f"{theirs}.{b}"))
    names = HEADS[head]
    mapping.update({**pairs("head_dense", head + names["head_dense"]), **pairs("head_ln", head + names["head_ln"]),
                    "head_bias": head + names["head_bias"]})
    return mapping


def split_in_proj(arrays: dict, n_layer: int, n_head: int) -> dict:
    """v1's fused ``in_proj.weight`` (3C, C) → ``q_w``, ``k_w``, ``v_w`` (C, C) each: transformers
    views its output as (H, 3d) per token and chunks the last axis, so head h owns rows
    [3hd, 3hd + d) for q, the next d for k, the next d for v."""
    out = dict(arrays)
    for i in range(n_layer):
        att = f"deberta.encoder.layer.{i}.attention.self"
        w = arrays.get(f"{att}.in_proj.weight")
        if w is None:
            continue
        C = w.shape[1]
        if w.shape != (3 * C, C):
            raise CheckpointError(f"{att}.in_proj.weight: shape {w.shape}, expected (3C, C) = {(3 * C, C)}")
        per_head = w.reshape(n_head, 3, C // n_head, C)                # (H, [q k v], d, C)
        for j, name in enumerate(("q_w", "k_w", "v_w")):
            out[f"{att}.{name}"] = per_head[:, j].reshape(C, C)
    return out


def load_deberta(directory) -> DebertaForMaskedLM:
    """A ``DebertaForMaskedLM`` or ``DebertaV2ForMaskedLM`` folder (``model_type`` says which)."""
    directory = Path(directory)
    hf, path = read_config(directory), directory / CONFIG
    v2 = config_value(hf, "model_type", path, str) == "deberta-v2"
    config = deberta_config_from_hf(hf, path, v2)
    arrays, weights = read_weights(directory)
    arrays = {k: v for k, v in arrays.items() if not k.startswith(DROPPED)}
    head = next((h for h in HEADS if h + "bias" in arrays), None)
    if head is None:
        raise CheckpointError(f"{weights}: no MLM head (neither lm_predictions.lm_head.* nor "
                              "cls.predictions.*); minilm loads DebertaForMaskedLM / DebertaV2ForMaskedLM files")
    model = DebertaForMaskedLM(config, rng=np.random.default_rng(0))
    fixed, ignorable = {}, list(SKIPPED)
    if not config.position_biased_input:
        ignorable.append("embeddings.position_embeddings.weight")     # unused (transformers skips it too)
    if not v2:
        arrays = split_in_proj(arrays, config.n_layer, config.n_head)
        ignorable.append("in_proj.weight")
        C = config.n_embd
        for i in range(config.n_layer):                                 # v1 has no k bias, no position-key bias
            fixed[f"layers.{i}.attn.k_proj.bias"] = np.zeros(C)
            if "c2p" in config.pos_att_type:
                fixed[f"layers.{i}.attn.pos_k_proj.bias"] = np.zeros(C)
    mapping = deberta_names(config, v2, head)
    params = dict(model.named_parameters())
    mapping = {k: v for k, v in mapping.items() if k in params}     # absent terms: no pos_{q,k}_proj
    tied = {}
    if head == "cls.predictions.":
        tied = {"cls.predictions.decoder.weight": "deberta.embeddings.word_embeddings.weight",
                "cls.predictions.decoder.bias": "cls.predictions.bias"}
    return load_mapped(model, arrays, mapping, weights, tied=tied, ignorable=tuple(ignorable),
                       fixed=fixed)
