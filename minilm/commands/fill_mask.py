"""``minilm fill-mask DIR --text "Paris is the [MASK] of France."``: the top-k fillers of each mask
token, with their probabilities, from a checkpoint's masked-LM head (BERT, RoBERTa, DistilBERT, the
ELECTRA generator; ``minilm/pretrained/inspect.py``). ``[MASK]`` and ``<mask>`` are both read as the
checkpoint's own mask token.
"""
import json

from minilm.cli import add_common

ORDER = 42


def register(sub):
    p = sub.add_parser("fill-mask", help="top-k fillers of each mask token from a Hugging Face masked-LM folder",
                       description="minilm fill-mask DIR --text TEXT: the top-k tokens and probabilities at each "
                                   "mask token of TEXT, from the folder's masked-LM head (BertForMaskedLM, "
                                   "RobertaForMaskedLM, DistilBertForMaskedLM, ElectraForMaskedLM). Write [MASK] "
                                   "or <mask>: either is read as the checkpoint's own mask token.")
    add_common(p)
    p.add_argument("model_dir", metavar="DIR", help="a Hugging Face folder with a masked-LM head")
    p.add_argument("--text", required=True, help="the text, with one or more mask tokens")
    p.add_argument("--top-k", type=int, default=5, help="fillers per mask (default 5)")
    p.set_defaults(func=run)


def run(args):
    from minilm.pretrained.inspect import fill_mask, load_for_inspect
    model, tok, info = load_for_inspect(args.model_dir)
    report = {"dir": str(args.model_dir), "model_type": info["model_type"],
              **fill_mask(model, tok, args.text, top_k=args.top_k)}
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['dir']} (model_type {report['model_type']}, mask token {report['mask_token']})")
    print(f"text: {report['text']!r}")
    for k, m in enumerate(report["masks"]):
        print(f"\nmask {k + 1} (token {m['position']}):\n| rank | token | id | p |\n|---|---|---|---|")
        for r, f in enumerate(m["fillers"]):
            print(f"| {r + 1} | {f['token']} | {f['id']} | {f['prob']:.4f} |")
    return 0
