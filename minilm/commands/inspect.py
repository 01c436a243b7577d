"""``minilm inspect DIR --text TEXT``: the course's hands-on (CS224U, contextual representations) on
any Hugging Face folder minilm loads (``minilm/pretrained/inspect.py``).

Prints the model type, the word pieces and ids as the checkpoint's tokenizer gives them (special
tokens included), the number and shape of the hidden states (embeddings + each layer) and, for a
BERT whose file holds a pooler, the cosine between h_L[CLS] and ``pooler_output``.
``--compare DIR2`` puts the tokenisation of a second folder beside the first (BERT's WordPiece
against RoBERTa's byte-level BPE, say).

``--replaced`` (an ELECTRA discriminator folder) prints instead, per token, the probability that it
was replaced, sigmoid of the discriminator's logit: swap a word of a sentence and see whether it
is flagged. ``--generator DIR2`` lets the ELECTRA generator make the corruption
(``minilm/pretrained/replaced.py``).
"""
import json
import sys
from pathlib import Path

from autograd.errors import CheckpointError, ConfigError
from minilm.cli import add_common

ORDER = 41
TEXT = "Bert knows Snuffleupagus"

DESCRIPTION = """\
minilm inspect DIR --text TEXT: the pieces and ids of TEXT (special tokens included), the number and
shape of the hidden states (embeddings + each layer), and for a BERT with a pooler the cosine
between h[CLS] and pooler_output. --compare DIR2 shows a second folder's tokenisation beside it.
--replaced (an ELECTRA discriminator): p(replaced) per token instead; --generator DIR2 masks tokens
and lets the ELECTRA generator fill them first."""


def register(sub):
    p = sub.add_parser("inspect", help="word pieces, ids, hidden states and h[CLS] vs pooler_output of a Hugging "
                                       "Face folder (the course's hands-on); --replaced: ELECTRA's p(replaced)",
                       description=DESCRIPTION)
    add_common(p)
    p.add_argument("model_dir", metavar="DIR", help="a Hugging Face folder (config.json, model.safetensors, "
                                                    "tokenizer files): gpt2, bert, roberta, distilbert, electra, "
                                                    "bart, t5, deberta or xlnet")
    p.add_argument("--text", default=TEXT, help=f"the text to inspect (default {TEXT!r})")
    p.add_argument("--compare", metavar="DIR2", help="a second folder whose tokenisation of TEXT is put side by side")
    r = p.add_argument_group("ELECTRA's replaced-token view (--replaced)")
    r.add_argument("--replaced", action="store_true",
                   help="per token, the discriminator's p(replaced) = sigmoid(logit) (write TEXT with a swapped word)")
    r.add_argument("--generator", metavar="DIR2",
                   help="an ELECTRA generator folder: mask tokens of TEXT, sample fillers, then ask the discriminator")
    r.add_argument("--mask-prob", type=float, default=0.15,
                   help="with --generator: the share of tokens masked (default 0.15, at least one)")
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
    if args.generator and not args.replaced:
        raise ConfigError("inspect: --generator goes with --replaced (ELECTRA's replaced-token view)")
    model, tok, info = load_for_inspect(args.model_dir)
    if args.replaced:
        return run_replaced(args, model, tok)
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
    arch = ", ".join(r["architectures"]) or "config.json names no architectures"
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
    elif r["model_type"] in ("bert", "roberta", "distilbert", "electra", "deberta", "deberta-v2"):
        print(f"\nno pooler in this checkpoint ({arch}): h[CLS] is last_hidden_state[:, 0]", file=out)


def run_replaced(args, model, tok) -> int:
    """``--replaced [--generator DIR2]``: ELECTRA's replaced-token view."""
    import numpy as np
    from minilm.pretrained.replaced import generator_view, replaced_view
    if args.generator:
        from minilm.pretrained.inspect import load_for_inspect
        generator, gen_tok, _ = load_for_inspect(args.generator)
        r = generator_view(model, generator, tok, args.text, rng=np.random.default_rng(args.seed),
                           mask_prob=args.mask_prob, generator_tok=gen_tok)
    else:
        r = replaced_view(model, tok, args.text)
    r = {"dir": str(args.model_dir), "generator": args.generator, **r}
    if args.json:
        print(json.dumps(r))
    elif args.generator:
        print_generator_view(r)
    else:
        print_replaced_view(r)
    return 0


def print_replaced_view(r, out=None):
    out = out or sys.stdout
    print(f"{r['dir']}: p(replaced) = sigmoid(discriminator logit) per token of {r['text']!r}\n", file=out)
    print("| # | piece | id | p(replaced) |\n|---|---|---|---|", file=out)
    for i, (t, n, p, sp) in enumerate(zip(r["tokens"], r["ids"], r["p_replaced"], r["special"])):
        print(f"| {i} | {t} | {n} | {p:.3f}{' (special)' if sp else ''} |", file=out)
    words = [(p, t) for t, p, sp in zip(r["tokens"], r["p_replaced"], r["special"]) if not sp]
    if words:
        p, t = max(words)
        print(f"\nmost suspicious: {t} (p {p:.3f}); tokens above 0.5: "
              f"{sum(q > 0.5 for q, _ in words)} of {len(words)} (special tokens left out)", file=out)


def print_generator_view(r, out=None):
    out = out or sys.stdout
    print(f"{r['dir']} reads what the generator {r['generator']} wrote into {r['text']!r} "
          f"(mask-prob {r['mask_prob']}, seed fixed by --seed)\n", file=out)
    print("| # | original | generator input | sampled | discriminator sees | replaced | p(replaced) |\n"
          "|---|---|---|---|---|---|---|", file=out)
    for i, t in enumerate(r["tokens"]):
        print(f"| {i} | {t} | {r['generator_input'][i]} | {r['sampled'][i] or ''} | {r['corrupted'][i]} | "
              f"{'yes' if r['replaced'][i] else ''} | {r['p_replaced'][i]:.3f} |", file=out)
    print(f"\n{sum(r['masked'])} masked, {sum(r['replaced'])} replaced (a sample equal to the original counts as "
          f"original); the discriminator is right at {r['accuracy']:.0%} of the tokens (threshold 0.5)", file=out)
