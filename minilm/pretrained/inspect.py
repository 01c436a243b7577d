"""The course's hands-on on a loaded checkpoint: every hidden state, h[CLS] against ``pooler_output``,
and the masked-LM fillers (``minilm inspect`` and ``minilm fill-mask``).

The notebook of the course (CS224U, contextual representations) asks transformers for
``output_hidden_states=True`` and gets L + 1 arrays: the embeddings' output h_0 and the output of
each layer h_1 … h_L, each (B, T, C). :func:`hidden_states` returns the same list for minilm's
models without changing their default forward (which returns the last state only, or a dict):

* BERT, RoBERTa, DistilBERT: the encoder's own list (``output_hidden_states=True``);
* ELECTRA: h_0 is the embeddings after ``embeddings_project`` (E → H), as in ``ElectraModel``;
* GPT-2: h_0 = token + position embeddings, then each block; the last entry is after ``ln_f``, as
  transformers' ``GPT2Model`` applies ``ln_f`` to the final state before appending it;
* DeBERTa (v1, v2/v3): h_0 is the embeddings after LayerNorm, padded rows zeroed; then each layer.

BART and T5 are encoder-decoders: their per-layer states are not exposed (a ConfigError says so).

The pooler (Devlin et al. 2019, §3; ``minilm/pretrained/static_words.py``): p = tanh(W h_L[CLS] + b),
trained through the next-sentence head only; it is a function of h_L[CLS], not h_L[CLS] itself.

Letters: B batch, T time, C channels, V vocabulary, L layers.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd import no_grad
from autograd.errors import CheckpointError, ConfigError, TokenizerError
from minilm.models.bart import Bart
from minilm.models.bert import BertModel
from minilm.models.bert_heads import BertForPreTraining
from minilm.models.deberta import DebertaForMaskedLM
from minilm.models.electra import ElectraDiscriminator, ElectraGenerator, _check_inputs
from minilm.models.gpt import GPT
from minilm.models.roberta import RobertaForMaskedLM
from minilm.models.t5 import T5

from .auto import _ids, hf_logits, load_pretrained
from .files import CONFIG, config_value, read_config
from minilm.blocks import causal_mask, embed_inputs, padding_mask

__all__ = ["hidden_states", "pooler_output", "load_for_inspect", "inspect_text", "fill_mask", "MASK_SPELLINGS"]

MASK_SPELLINGS = ("[MASK]", "<mask>")   # BERT's and RoBERTa's; either is read as the checkpoint's own


def _array(t) -> np.ndarray:
    return np.asarray(getattr(t, "data", t), dtype=np.float32)


def hidden_states(model, input_ids, attention_mask=None) -> list[np.ndarray]:
    """The L + 1 hidden states [h_0 (embeddings), h_1, …, h_L] of ``model``, each (B, T, C) float32,
    as transformers' ``output_hidden_states=True`` gives them. ``input_ids`` (B, T) or (T,)."""
    ids = _ids("hidden_states", input_ids, "input_ids")                       # (B, T)
    mask = np.ones_like(ids) if attention_mask is None else _ids("hidden_states", attention_mask, "attention_mask")
    with no_grad():
        if isinstance(model, BertForPreTraining):
            states = model.bert(ids, None, mask, output_hidden_states=True)["hidden_states"]
        elif isinstance(model, BertModel) and not hasattr(model, "pooler"):   # RobertaModel
            states = model(ids, mask, output_hidden_states=True)["hidden_states"]
        elif isinstance(model, BertModel):
            states = model(ids, None, mask, output_hidden_states=True)["hidden_states"]
        elif isinstance(model, RobertaForMaskedLM):
            states = model.roberta(ids, mask, output_hidden_states=True)["hidden_states"]
        elif isinstance(model, (ElectraDiscriminator, ElectraGenerator)):
            ids, padding = _check_inputs(model.config, type(model).__name__, ids, mask)
            x = model.embeddings(ids, np.zeros_like(ids))                    # (B, T, E): one segment
            if model.embeddings_project is not None:
                x = model.embeddings_project(x)                              # (B, T, H)
            states = model.encoder(x, mask=padding)                          # L + 1 × (B, T, H)
        elif isinstance(model, GPT):
            states = _gpt_states(model, ids, mask)
        elif isinstance(model, DebertaForMaskedLM):
            states = [_deberta_embeddings(model, ids, mask)] + list(model(ids, mask)["hidden_states"])
        elif isinstance(model, (Bart, T5)):
            raise ConfigError(f"hidden_states: a {type(model).__name__} is an encoder-decoder; minilm exposes "
                              "only its encoder's last state (model.encode(ids, attention_mask))")
        else:
            raise ConfigError(f"hidden_states: no hidden states known for a {type(model).__name__}")
    return [_array(h) for h in states]


def _gpt_states(model: GPT, ids, mask) -> list:
    """GPT's forward up to ``ln_f``, keeping each block's output (minilm/models/gpt.py)."""
    B, T = ids.shape
    if T > model.config.block_size:
        raise ConfigError(f"hidden_states: {T} tokens, more than the GPT's block_size {model.config.block_size}")
    x = embed_inputs(ids, model.wte.weight, model.wpe.weight)   # (B, T, C)
    full = causal_mask(T) & padding_mask(mask)                  # (B, 1, T, T)
    states = [x]
    for block in model.blocks:
        x = block(x, mask=full)                                 # (B, T, C)
        states.append(x)
    states[-1] = model.ln_f(x)                                  # transformers: the last state after ln_f
    return states


def _deberta_embeddings(model: DebertaForMaskedLM, ids, mask):
    """h_0 of DeBERTa as transformers' ``DebertaV2Embeddings`` returns it: the word embeddings (plus
    absolute positions where ``position_biased_input``), projected E → C, LayerNorm, times the mask —
    the first lines of ``DebertaForMaskedLM.forward`` (minilm/models/deberta.py), which keeps only the
    layers' states."""
    cfg = model.config
    x = model.word_embeddings(ids)                                       # (B, T, E)
    if cfg.position_biased_input:
        x = x + model.abs_position_embeddings.weight[:ids.shape[1]]
    if "embed_proj" in model._modules:
        x = model.embed_proj(x)                                          # (B, T, C)
    x = model.emb_ln(x)
    if cfg.padding == "released":
        x = x * np.asarray(mask).astype(bool)[:, :, None].astype(x.data.dtype)   # padded tokens: 0
    return x


def pooler_output(model, input_ids, attention_mask=None) -> np.ndarray | None:
    """BERT's ``pooler_output`` (B, C) = tanh(W h_L[CLS] + b); None for a model without a pooler."""
    bert = model.bert if isinstance(model, BertForPreTraining) else model
    if not isinstance(bert, BertModel) or not hasattr(bert, "pooler"):
        return None
    ids = _ids("pooler_output", input_ids, "input_ids")
    mask = np.ones_like(ids) if attention_mask is None else _ids("pooler_output", attention_mask, "attention_mask")
    with no_grad():
        return _array(bert(ids, None, mask)["pooler_output"])


def load_for_inspect(directory) -> tuple[object, object, dict]:
    """``(model, tokenizer, info)``: ``load_pretrained`` plus what inspect reports: ``model_type``,
    ``architectures`` and ``has_pooler`` (a BERT whose file holds ``pooler.*``: a BertForMaskedLM
    folder has none, and its pooler would be random)."""
    directory = Path(directory)
    config = read_config(directory)
    kind = config_value(config, "model_type", directory / CONFIG, str)
    if kind == "bert":
        from .bert import load_bert_model
        from minilm.tokenizers.hf_json import load_hf_tokenizer
        model, _, _, missing = load_bert_model(directory)
        tok, has_pooler = load_hf_tokenizer(directory), "pooler." not in missing
    else:
        model, tok = load_pretrained(directory)
        has_pooler = False
    if tok is None:
        raise CheckpointError(f"{directory}: no tokenizer file minilm reads (tokenizer.json, vocab.txt, or "
                              "vocab.json + merges.txt)")
    return model, tok, {"model_type": kind, "architectures": config.get("architectures") or [],
                        "class": type(model).__name__, "has_pooler": has_pooler}


def pieces(tok, text: str) -> tuple[list[str], list[int]]:
    """The word pieces and ids of ``text``, special tokens included, as the checkpoint's tokenizer gives them."""
    ids = tok.encode(text, add_special_tokens=True)
    return tok.convert_ids_to_tokens(ids), ids


def _cos(a, b) -> float:
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def inspect_text(model, tok, info: dict, text: str) -> dict:
    """Pieces, ids, hidden states (number, shape, mean ‖h_t‖ per state) and, for a BERT with a
    pooler, cos(h_L[CLS], pooler_output)."""
    tokens, ids = pieces(tok, text)
    if not ids:
        raise TokenizerError(f"inspect: {text!r} gives no tokens")
    report = {**info, "text": text, "tokens": tokens, "ids": ids}
    try:
        states = [h[0] for h in hidden_states(model, [ids])]          # L + 1 × (T, C)
    except ConfigError as e:
        report.update(hidden_states=None, note=str(e))
        return report
    report["n_hidden_states"] = len(states)
    report["hidden_state_shape"] = list(states[0].shape)
    report["hidden_states"] = [{"index": i, "name": "embeddings" if i == 0 else f"layer {i}",
                                "shape": list(h.shape), "mean_norm": float(np.linalg.norm(h, axis=-1).mean())}
                               for i, h in enumerate(states)]
    if info.get("has_pooler"):
        cls, p = states[-1][0], pooler_output(model, [ids])[0]        # (C,), (C,)
        report["cls_vs_pooler"] = {"cos": _cos(cls, p), "norm_cls": float(np.linalg.norm(cls)),
                                   "norm_pooler": float(np.linalg.norm(p))}
    return report


def fill_mask(model, tok, text: str, top_k: int = 5) -> dict:
    """Top-k fillers of every mask token in ``text``: ``{"text", "mask_token", "masks": [{"position",
    "fillers": [{"token", "word", "id", "prob"}]}]}``. ``[MASK]`` or ``<mask>`` in the text is read
    as the checkpoint's own mask token. A model without a masked-LM head is a ConfigError."""
    if not (isinstance(model, (BertForPreTraining, RobertaForMaskedLM, ElectraGenerator, DebertaForMaskedLM))):
        why = ("a BertModel without cls.predictions.* (no MLM head in the file)" if isinstance(model, BertModel)
               else f"a {type(model).__name__}")
        raise ConfigError(f"fill-mask: the checkpoint is {why}; fill-mask needs a masked-LM head "
                          "(BertForMaskedLM, RobertaForMaskedLM, DistilBertForMaskedLM, ElectraForMaskedLM, "
                          "DebertaForMaskedLM)")
    if top_k < 1:
        raise ConfigError(f"fill-mask: top_k {top_k}, expected at least 1")
    mask = tok.roles.get("mask_token")
    if mask is None:
        raise TokenizerError("fill-mask: the checkpoint's tokenizer has no mask_token")
    original = text
    if mask not in text:
        for other in MASK_SPELLINGS:
            text = text.replace(other, mask)
    ids = tok.encode(text, add_special_tokens=True)
    where = [t for t, i in enumerate(ids) if i == tok.mask_id]
    if not where:
        raise TokenizerError(f"fill-mask: {original!r} has no mask token; write {mask} (or [MASK] / <mask>) "
                             "where a word should be filled in")
    logits = hf_logits(model, [ids])[0].astype(np.float64)            # (T, V)
    out = {"text": original, "mask_token": mask, "tokens": tok.convert_ids_to_tokens(ids), "masks": []}
    for t in where:
        z = logits[t] - logits[t].max()
        p = np.exp(z) / np.exp(z).sum()                                # (V,)
        best = np.argsort(-p, kind="stable")[:top_k]
        out["masks"].append({"position": t, "fillers": [
            {"token": tok.id_to_token(int(i)), "word": tok.decode([int(i)]).strip(), "id": int(i),
             "prob": float(p[i])} for i in best]})
    return out
