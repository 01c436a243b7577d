"""Real checkpoints in Hugging Face format: load BERT and GPT-2 folders, export minilm models.

    from minilm.pretrained import load_bert, load_gpt2, export
    bert = load_bert("path/to/all-MiniLM-L6-v2")     # PretrainedBert: model, tokenizer, embed(...)
    tokens, emb = bert.embed(["a sentence", "another"])   # (N, 384), unit rows
    export(gpt_model, "out/gpt2-folder", tokenizer=tok)   # config.json + model.safetensors
    gpt = load_gpt2("out/gpt2-folder")                  # back into minilm, identical logits

A folder is ``config.json`` + ``model.safetensors`` (read and written by hand, without pickle:
``minilm/safetensors_io.py``); a ``pytorch_model.bin`` is refused with the conversion command.
The name tables are in ``minilm/models/bert.py`` (BERT) and ``gpt2.py`` here (GPT-2). How the
parity with transformers is checked: docs/pretrained.md.
"""
from __future__ import annotations

from pathlib import Path

from autograd.errors import ConfigError
from minilm.models.bert import BertForPreTraining, BertModel
from minilm.models.gpt import GPT

from .bert import export_bert, load_bert_model
from .files import CONVERT_HINT
from .gpt2 import export_gpt, load_gpt2
from .sentence import PretrainedBert, l2_normalize, load_bert, mean_pool

__all__ = ["load_bert", "load_gpt2", "export", "PretrainedBert", "mean_pool", "l2_normalize",
           "load_bert_model", "CONVERT_HINT"]


def export(model, directory, tokenizer=None) -> Path:
    """Write ``model`` as a Hugging Face folder: a GPT in ``GPT2LMHeadModel`` format, a BertModel
    in ``BertModel`` format, a BertForPreTraining in ``BertForPreTraining`` format (which
    ``BertForMaskedLM`` reads too). With ``tokenizer``, its files go into the folder as well."""
    if isinstance(model, GPT):
        return export_gpt(model, directory, tokenizer)
    if isinstance(model, (BertModel, BertForPreTraining)):
        return export_bert(model, directory, tokenizer)
    raise ConfigError(f"export: a {type(model).__name__} cannot be exported; expected a GPT, BertModel "
                      "or BertForPreTraining")
