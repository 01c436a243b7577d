"""``minilm inspect DIR --text TEXT``: the course's hands-on (CS224U, contextual representations) on
any Hugging Face folder minilm loads (``minilm/pretrained/inspect.py``).

Prints the model type, the word pieces and ids as the checkpoint's tokenizer gives them (special
tokens included), the number and shape of the hidden states (embeddings + each layer) and, for a
BERT whose file holds a pooler, the cosine between h_L[CLS] and ``pooler_output``.
``--compare DIR2`` puts the tokenisation of a second folder beside the first (BERT's WordPiece
against RoBERTa's byte-level BPE, say).
"""
import json
import sys
from pathlib import Path

from autograd.errors import CheckpointError
from minilm.cli import add_common

ORDER = 41
TEXT = "Bert knows Snuffleupagus"


def register(sub):
    p = sub.add_parser("inspect", help="word pieces, ids, hidden states and h[CLS] vs pooler_output of a Hugging "
                                       "Face folder (the course's hands-on)",
                       description="minilm inspect DIR --text TEXT: the pieces and ids of TEXT (special tokens "
                                   "included), the number and shape of the hidden states (embeddings + each "
                                   "layer), and for a BERT with a pooler the cosine between h[CLS] and "
                                   "pooler_output. --compare DIR2 shows a second folder's tokenisation beside it.")
    add_common(p)
    p.add_argument("model_dir", metavar="DIR", help="a Hugging Face folder (config.json, model.safetensors, "
                                                    "tokenizer files): gpt2, bert, roberta, distilbert, electra, "
                                                    "bart or t5")
    p.add_argument("--text", default=TEXT, help=f"the text to inspect (default {TEXT!r})")
    p.add_argument("--compare", metavar="DIR2", help="a second folder whose tokenisation of TEXT is put side by side")
    p.set_defaults(func=run)


def _second_tokenisation(directory, text):
    from minilm.pretrained.files import CONFIG, config_value, read_config
    from minilm.pretrained.inspect import pieces
    from minilm.tokenizers.hf_json import load_hf_tokenizer
    config = read_config(directory)
    kind = config_value(config, "model_type", Path(directory) / CONFIG, str)
    tok = load_hf_tokenizer(directory)
    if tok is None:
        raise CheckpointError(f"inspect --compare: {directory} has no tokenizer file minilm reads (tokenizer.json, "
                              "vocab.txt, or vocab.json + merges.txt)")
    tokens, ids = pieces(tok, text)
    return {"dir": str(directory), "model_type": kind, "tokens": tokens, "ids": ids}


def run(args):
    from minilm.pretrained.inspect import inspect_text, load_for_inspect
    model, tok, info = load_for_inspect(args.model_dir)
    report = {"dir": str(args.model_dir), **inspect_text(model, tok, info, args.text)}
    if args.compare:
        report["compare"] = _second_tokenisation(args.compare, args.text)
    if args.json:
        print(json.dumps(report))
    else:
        print_report(report)
    return 0


def print_report(r, out=None):
    out = out or sys.stdout
    arch = ", ".join(r["architectures"]) or "?"
    print(f"{r['dir']}\nmodel_type {r['model_type']} ({arch}; minilm {r['class']})\n", file=out)
    print(f"text: {r['text']!r} → {len(r['ids'])} tokens (special tokens included)\n", file=out)
    if "compare" in r:
        c = r["compare"]
        left, right = f"{r['model_type']} piece", f"{c['model_type']} piece"
        print(f"| # | {left} | id | {right} | id |\n|---|---|---|---|---|", file=out)
        for i in range(max(len(r["ids"]), len(c["ids"]))):
            a = (r["tokens"][i], r["ids"][i]) if i < len(r["ids"]) else ("", "")
            b = (c["tokens"][i], c["ids"][i]) if i < len(c["ids"]) else ("", "")
            print(f"| {i} | {a[0]} | {a[1]} | {b[0]} | {b[1]} |", file=out)
        print(f"\n{r['dir']}: {len(r['ids'])} tokens; {c['dir']}: {len(c['ids'])} tokens", file=out)
    else:
        print("| # | piece | id |\n|---|---|---|", file=out)
        for i, (t, n) in enumerate(zip(r["tokens"], r["ids"])):
            print(f"| {i} | {t} | {n} |", file=out)
    if r.get("hidden_states") is None:
        print(f"\nhidden states: not available ({r.get('note')})", file=out)
        return
    T, C = r["hidden_state_shape"]
    print(f"\nhidden states: {r['n_hidden_states']} = embeddings + {r['n_hidden_states'] - 1} layers, "
          f"each (T, C) = ({T}, {C})", file=out)
    for h in r["hidden_states"]:
        print(f"  h{h['index']:<2} {h['name']:<11} {tuple(h['shape'])}  mean ‖h_t‖ {h['mean_norm']:.3f}", file=out)
    if "cls_vs_pooler" in r:
        p = r["cls_vs_pooler"]
        print(f"\nh[CLS] = last_hidden_state[0] vs pooler_output = tanh(W h[CLS] + b): cos {p['cos']:.3f}, "
              f"‖h[CLS]‖ {p['norm_cls']:.2f}, ‖pooler_output‖ {p['norm_pooler']:.2f}\n"
              "pooler_output is not h[CLS]: for the [CLS] vector take last_hidden_state[:, 0]", file=out)
    elif r["model_type"] in ("bert", "roberta", "distilbert", "electra"):
        print(f"\nno pooler in this checkpoint ({arch}): h[CLS] is last_hidden_state[:, 0]", file=out)
