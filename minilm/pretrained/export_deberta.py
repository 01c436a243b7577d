"""minilm's DeBERTa → a Hugging Face ``DebertaV2ForMaskedLM`` folder with the same logits (the
inverse of ``deberta.py``'s v2 table).

transformers computes the released form only, so two of ``DebertaConfig``'s switches must be set
before training for an export to mean the same model: ``rel_index="released"`` (its position-to-
content term reads row clip(i − j + k); the paper's clip(j − i + k) cannot be written as a
permutation of one table shared with content-to-position) and ``emd=False`` (its MLM class never runs
the enhanced mask decoder). A model with either paper switch is refused, with what to change.
``padding="keys"`` (minilm's default) and ``"released"`` give the same logits at every real token;
at padded positions transformers' are those of ``padding="released"``, which the loader sets.

The v2 format holds everything minilm's DeBERTa has: q / k / v biases, ``share_att_key``, separate
``pos_query_proj`` / ``pos_key_proj``, ``norm_rel_ebd``, ``position_buckets``, ``embed_proj``.
The head is written as the released files name it (``lm_predictions.lm_head.*``, ``legacy: false``),
or as ``cls.predictions.*`` (``legacy: true``) when embedding_size ≠ hidden size, the one layout of
transformers' that projects back to E before the tied decoder.
"""
from __future__ import annotations

from pathlib import Path

from autograd.errors import ConfigError
from minilm.models.deberta import DebertaForMaskedLM

from .bert import TO_HF_ACT
from .deberta import deberta_names
from .files import write_folder


def deberta_config_to_hf(model: DebertaForMaskedLM) -> dict:
    c = model.config
    wrong = [f"{k}={getattr(c, k)!r} (set {v!r})" for k, v in (("rel_index", "released"), ("emd", False))
             if getattr(c, k) != v]
    if wrong:
        raise ConfigError(f"export: this DeBERTa has {', '.join(wrong)}; transformers' DebertaV2ForMaskedLM "
                          "computes only the released form, so the logits would differ (minilm/models/deberta.py)")
    E = c.embedding_size or c.n_embd
    return {"architectures": ["DebertaV2ForMaskedLM"], "model_type": "deberta-v2", "vocab_size": c.vocab_size,
            "hidden_size": c.n_embd, "num_hidden_layers": c.n_layer, "num_attention_heads": c.n_head,
            "intermediate_size": c.n_inner or 4 * c.n_embd, "hidden_act": TO_HF_ACT[c.activation],
            "hidden_dropout_prob": c.dropout, "attention_probs_dropout_prob": c.dropout,
            "max_position_embeddings": c.max_position_embeddings, "type_vocab_size": 0,
            "initializer_range": c.initializer_range, "layer_norm_eps": c.layer_norm_eps, "relative_attention": True,
            "max_relative_positions": c.max_relative_positions, "position_buckets": c.position_buckets or -1,
            "norm_rel_ebd": c.rel_norm, "share_att_key": c.share_att_key, "pos_att_type": list(c.pos_att_type),
            "position_biased_input": c.position_biased_input, "embedding_size": E, "conv_kernel_size": 0,
            "pad_token_id": 0, "legacy": E != c.n_embd, "tie_word_embeddings": True}


def export_deberta(model: DebertaForMaskedLM, directory, tokenizer=None) -> Path:
    hf = deberta_config_to_hf(model)
    head = "cls.predictions." if hf["legacy"] else "lm_predictions.lm_head."
    state = model.state_dict()
    arrays = {theirs: state[ours] for ours, theirs in deberta_names(model.config, True, head).items() if ours in state}
    return write_folder(directory, hf, arrays, tokenizer)
