"""``minilm export CKPT DIR``: write a trained minilm checkpoint as a Hugging Face model folder.

A GPT becomes a ``GPT2LMHeadModel`` folder (Conv1D layout: weights transposed, q/k/v fused into
``c_attn``), a BERT a ``BertModel`` / ``BertForPreTraining`` folder (``BertForMaskedLM`` reads the
latter), a RoBERTa a ``RobertaForMaskedLM`` folder, an ELECTRA two folders (``DIR/discriminator``:
``ElectraForPreTraining``, ``DIR/generator``: ``ElectraForMaskedLM``); the checkpoint's class picks
the format (``minilm.pretrained.export``). The folder holds config.json, model.safetensors and the
tokenizer's files with a ``tokenizer.json`` and a ``tokenizer_config.json`` naming a transformers
class; transformers' ``from_pretrained(DIR)`` and ``AutoTokenizer`` open it, and
``minilm.pretrained.load_pretrained`` reads it back.
"""
from __future__ import annotations

import argparse
import json
import sys

from minilm.cli import add_common

ORDER = 8

DESCRIPTION = """\
Write a checkpoint of 'minilm train' as a Hugging Face folder: config.json + model.safetensors
(+ the tokenizer's files, tokenizer.json included). GPT -> GPT2LMHeadModel format, BERT ->
BertModel / BertForPreTraining, RoBERTa -> RobertaForMaskedLM, ELECTRA -> DIR/discriminator
(ElectraForPreTraining) + DIR/generator (ElectraForMaskedLM), BART / T5 -> ...ForConditionalGeneration.
No pickle is written or read."""


def register(sub):
    p = sub.add_parser("export", help="write a checkpoint in Hugging Face format (safetensors)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", metavar="CKPT", help="a checkpoint written by minilm train (checkpoint.npz)")
    p.add_argument("out_dir", metavar="DIR", help="the folder to write (created if needed)")
    add_common(p)
    p.set_defaults(func=run)


def run(args):
    from minilm.checkpoint import load_model
    from minilm.pretrained import export

    model, tokenizer, meta = load_model(args.checkpoint)
    out = export(model, args.out_dir, tokenizer=tokenizer)
    files = sorted(p.name for p in out.iterdir())
    if args.json:
        print(json.dumps({"checkpoint": str(args.checkpoint), "out_dir": str(out),
                          "model_class": type(model).__name__, "files": files}))
    else:
        print(f"wrote {type(model).__name__} to {out}: {', '.join(files)}", file=sys.stderr)
    return 0
