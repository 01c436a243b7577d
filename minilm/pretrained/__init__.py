"""Real checkpoints in Hugging Face format: load the folders of every family, export minilm models.

    from minilm.pretrained import load_bert, load_gpt2, export
    bert = load_bert("path/to/all-MiniLM-L6-v2")     # PretrainedBert: model, tokenizer, embed(...)
    tokens, emb = bert.embed(["a sentence", "another"])   # (N, 384), unit rows
    export(gpt_model, "out/gpt2-folder", tokenizer=tok)   # config.json + model.safetensors
    gpt = load_gpt2("out/gpt2-folder")                  # back into minilm, identical logits
    model, tok = load_pretrained("any-hf-folder")        # gpt2 bert roberta distilbert electra bart t5 xlnet deberta
    logits = hf_logits(model, ids, attention_mask)      # == transformers' model(...).logits

A folder is ``config.json`` + ``model.safetensors`` (read and written by hand, without pickle:
``minilm/pretrained/safetensors_file.py``) or its sharded form, an index + shards, under current or
legacy names (``weights.py``); a ``pytorch_model.bin`` is refused with the conversion command.
The name tables are in ``minilm/models/bert.py`` (BERT), ``gpt2.py`` here (GPT-2), ``encoders.py``
(RoBERTa, DistilBERT, ELECTRA) and ``seq2seq.py`` (BART, T5); ``auto.py`` picks one by ``model_type``.
How the parity with transformers is checked: docs/pretrained.md.
"""
from __future__ import annotations

from pathlib import Path

from autograd.errors import ConfigError
from minilm.models.bert import BertModel
from minilm.models.bert_heads import BertForPreTraining
from minilm.models.gpt import GPT

from .auto import hf_logits, load_pretrained
from .bert import export_bert, load_bert_model
from .files import CONVERT_HINT
from .gpt2 import export_gpt, load_gpt2
from .sentence import PretrainedBert, l2_normalize, load_bert, mean_pool
from minilm.models.bart import Bart
from minilm.models.deberta import DebertaForMaskedLM
from minilm.models.electra import Electra, ElectraDiscriminator, ElectraGenerator
from minilm.models.roberta import RobertaForMaskedLM
from minilm.models.t5 import T5
from minilm.models.xlnet_released import XLNetReleased

__all__ = ["load_pretrained", "hf_logits", "load_bert", "load_gpt2", "export", "PretrainedBert", "mean_pool",
           "l2_normalize", "load_bert_model", "CONVERT_HINT"]


def export(model, directory, tokenizer=None) -> Path:
    """Write ``model`` as a Hugging Face folder: a GPT in ``GPT2LMHeadModel`` format, a BertModel
    in ``BertModel`` format, a BertForPreTraining in ``BertForPreTraining`` format (which
    ``BertForMaskedLM`` reads too), a Bart / T5 in ``BartForConditionalGeneration`` /
    ``T5ForConditionalGeneration`` format, a RobertaForMaskedLM in ``RobertaForMaskedLM`` (or, positions
    from row 0 with ε 1e-12, ``DistilBertForMaskedLM``) format, an ELECTRA network in
    ``ElectraForPreTraining`` / ``ElectraForMaskedLM`` format (an Electra: both, ``DIR/discriminator``
    and ``DIR/generator``). With ``tokenizer``, its files go into the folder as well."""

    from .export_seq2seq import export_bart, export_t5
    if isinstance(model, GPT):
        return export_gpt(model, directory, tokenizer)
    if isinstance(model, (BertModel, BertForPreTraining)):
        return export_bert(model, directory, tokenizer)
    if isinstance(model, Bart):
        return export_bart(model, directory, tokenizer)
    if isinstance(model, T5):
        return export_t5(model, directory, tokenizer)
    if isinstance(model, (RobertaForMaskedLM, Electra, ElectraDiscriminator, ElectraGenerator)):
        from .export_encoders import export_encoder   # RoBERTa / DistilBERT / ELECTRA (export_encoders.py)
        return export_encoder(model, directory, tokenizer)
    if isinstance(model, XLNetReleased):   # XLNetLMHeadModel format (export_xlnet.py)
        from .export_xlnet import export_xlnet
        return export_xlnet(model, directory, tokenizer)
    if isinstance(model, DebertaForMaskedLM):   # DebertaV2ForMaskedLM format (export_deberta.py)
        from .export_deberta import export_deberta
        return export_deberta(model, directory, tokenizer)
    raise ConfigError(f"export: a {type(model).__name__} cannot be exported; expected a GPT, BertModel, "
                      "BertForPreTraining, RobertaForMaskedLM, Electra, Bart, T5, XLNetReleased or DebertaForMaskedLM")
