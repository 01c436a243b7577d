"""One entry point for every family: ``load_pretrained(DIR) -> (model, tokenizer)`` and ``hf_logits``.

    model, tok = load_pretrained("roberta-folder")      # config.json + model.safetensors (+ tokenizer files)
    ids = tok.encode("Bert knows Snuffleupagus", add_special_tokens=True)
    logits = hf_logits(model, [ids])                    # == RobertaForMaskedLM(...).logits

``config.json``'s ``model_type`` picks the loader; the minilm class and the transformers class whose
``logits`` ``hf_logits`` reproduces (eval mode, float32):

==============  ==============================================  ====================================
model_type      minilm model                                    transformers class
==============  ==============================================  ====================================
gpt2            GPT                                             GPT2LMHeadModel           (B, T, V)
bert            BertForPreTraining (MLM head) or BertModel      BertForMaskedLM           (B, T, V)
roberta         RobertaForMaskedLM, position_offset 2           RobertaForMaskedLM        (B, T, V)
distilbert      RobertaForMaskedLM, one zero segment row        DistilBertForMaskedLM     (B, T, V)
electra         ElectraDiscriminator / ElectraGenerator         ElectraForPreTraining (B, T) / ...ForMaskedLM
bart            Bart, position_offset 2, final_logits_bias      BartForConditionalGeneration
t5              T5 (v1.0: relu, tied)                           T5ForConditionalGeneration
xlnet           XLNetReleased (relative attention, post-LN)     XLNetLMHeadModel          (B, T, V)
deberta         DebertaForMaskedLM, released switches           DebertaForMaskedLM        (B, T, V)
deberta-v2      DebertaForMaskedLM, + buckets, shared keys      DebertaV2ForMaskedLM      (B, T, V)
==============  ==============================================  ====================================

A ``pytorch_model.bin`` is refused with the command that converts it (``files.CONVERT_HINT``).
The tokenizer comes from ``tokenizer.json`` (``minilm.tokenizers.hf_json``), else from
``vocab.txt`` (WordPiece), ``vocab.json`` + ``merges.txt`` (byte-level BPE) or a SentencePiece
``spiece.model`` / ``sentencepiece.bpe.model`` / ``spm.model`` (``minilm.tokenizers.spm_tokenizer``,
laid out as the folder's tokenizer class or model_type says); None if the folder has none of them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd import no_grad
from autograd.errors import CheckpointError, ConfigError, ShapeError
from minilm.models.bart import Bart
from minilm.models.bert import BertModel
from minilm.models.bert_heads import BertForPreTraining
from minilm.models.deberta import DebertaForMaskedLM
from minilm.models.electra import ElectraDiscriminator, ElectraGenerator
from minilm.models.gpt import GPT
from minilm.models.roberta import RobertaForMaskedLM
from minilm.models.t5 import T5
from minilm.models.xlnet_released import XLNetReleased

from .bert import load_bert_model
from .deberta import load_deberta
from .encoders import load_distilbert, load_electra, load_roberta
from .files import CONFIG, config_value, read_config
from .gpt2 import load_gpt2
from .seq2seq import load_bart, load_t5
from .xlnet import load_xlnet
from minilm.tokenizers.hf_json import load_hf_tokenizer

LOADERS = {"gpt2": load_gpt2, "bert": lambda d: load_bert_model(d)[0], "roberta": load_roberta,
           "distilbert": load_distilbert, "electra": load_electra, "bart": load_bart, "t5": load_t5}
PLANNED = ("deberta", "deberta-v2", "xlnet")
LOADERS["xlnet"] = load_xlnet   # the released XLNet: minilm/models/xlnet_released.py
LOADERS["deberta"] = LOADERS["deberta-v2"] = load_deberta   # v1 and v2/v3: minilm/pretrained/deberta.py


def load_pretrained(directory, tokenizer: bool = True):
    """A Hugging Face folder → ``(model in eval mode, tokenizer or None)``. A tokenizer file with a
    component minilm does not read (e.g. T5's ``Precompiled`` normalizer) is a TokenizerError;
    ``tokenizer=False`` loads the model alone (the tokenizer is then None)."""
    directory = Path(directory)
    config = read_config(directory)
    kind = config_value(config, "model_type", directory / CONFIG, str)
    if kind not in LOADERS:
        later = " (planned: issue 17)" if kind in PLANNED else ""
        raise CheckpointError(f"{directory / CONFIG}: model_type {kind!r}{later}; minilm loads {sorted(LOADERS)}")
    model = LOADERS[kind](directory)
    return model, load_hf_tokenizer(directory) if tokenizer else None


def _ids(op: str, x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.integer):
        raise ShapeError(f"{op}: {name} of shape {a.shape} and dtype {a.dtype}, expected (B, T) integers")
    return a.astype(np.int64)


def hf_logits(model, input_ids, attention_mask=None, decoder_input_ids=None) -> np.ndarray:
    """The ``logits`` that the matching transformers class returns (see the module's table), as a
    float32 array. ``attention_mask`` (B, T) 1/0, default all 1; ``decoder_input_ids`` (B, T_dec)
    for BART and T5 (required there, ignored by nothing else: passing it to an encoder is an error)."""
    ids = _ids("hf_logits", input_ids, "input_ids")
    mask = np.ones_like(ids) if attention_mask is None else _ids("hf_logits", attention_mask, "attention_mask")
    seq2seq = isinstance(model, (Bart, T5))
    if seq2seq and decoder_input_ids is None:
        raise ShapeError(f"hf_logits: a {type(model).__name__} needs decoder_input_ids (B, T_dec)")
    if not seq2seq and decoder_input_ids is not None:
        raise ShapeError(f"hf_logits: a {type(model).__name__} is not an encoder-decoder; leave decoder_input_ids out")
    with no_grad():
        if isinstance(model, GPT):
            out = model(ids, attention_mask=mask)[0]
        elif isinstance(model, BertForPreTraining):
            out = model(ids, None, mask)["mlm_logits"]
        elif isinstance(model, RobertaForMaskedLM):
            out = model(ids, mask)["logits"]
        elif isinstance(model, (ElectraDiscriminator, ElectraGenerator)):
            out = model(ids, mask)
        elif isinstance(model, XLNetReleased):
            out = model(ids, mask)["logits"]
        elif isinstance(model, DebertaForMaskedLM):
            out = model(ids, mask)["logits"]
        elif seq2seq:
            dec = _ids("hf_logits", decoder_input_ids, "decoder_input_ids")
            out = model(ids, decoder_input_ids=dec, attention_mask=mask)["logits"]
        elif isinstance(model, BertModel):
            raise ConfigError("hf_logits: this BertModel has no head (its folder had no cls.predictions.*); "
                              "use model(ids, attention_mask=...)['last_hidden_state']")
        else:
            raise ConfigError(f"hf_logits: no transformers counterpart known for a {type(model).__name__}")
    return np.asarray(out.data, dtype=np.float32)
