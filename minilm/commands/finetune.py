"""``minilm finetune``: pre-train a small BERT, fine-tune it on sentiment with negation, and compare
it with a bag-of-words baseline (``minilm/downstream/finetune.py``)."""
from __future__ import annotations

import argparse
import json
import sys

from minilm.cli import add_common

ORDER = 4
GPT_N_TRAIN = 200  # for --help only: GPTFinetuneConfig.n_train (not imported, to keep `minilm --help` fast)

DESCRIPTION = """\
Pre-train a small BERT (MLM + NSP) on the synthetic corpus for --pretrain-steps steps, or load one
that 'minilm train bert' saved (--checkpoint CKPT); then fine-tune it with one new layer on the
sentence vector (--pool: h[CLS], BERT's choice, or the mean / max over the real tokens) on the
synthetic sentiment task, where half of the sentences are negated ("the movie was not good .").
A bag-of-words logistic regression is trained on the same sentences. The report gives test
accuracy overall and on the negated sentences for both: a bag of words cannot tell "good" from
"not good", so it stays near chance on the negated ones, while the Transformer reads the two
words together. --json prints one object (accuracy, negation_accuracy, bow_accuracy,
bow_negation_accuracy, ...); progress goes to stderr.

--family gpt (GPT-1 fine-tuning, Task 12.1) pre-trains a small GPT per seed (--seeds, default 3)
and fine-tunes it twice from the same start, with L3 = L2 + λ·L1 for λ = 0 and λ = --aux-lm, on
200 labelled sentences by default (with 2,000 the task saturates). --json prints initial_loss and
final_loss (the held-out task loss, mean cross-entropy of the test labels, before fine-tuning and
after it with λ = --aux-lm, means over seeds), metrics (accuracy, negation_accuracy,
plain_accuracy, test_loss for that λ; metrics_by_lambda for both), baselines (bag of words and
majority class) and every seed's numbers."""


def register(sub):
    p = sub.add_parser("finetune", help="pre-train + fine-tune BERT on sentiment with negation, vs bag of words",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    from minilm.downstream.finetune import FinetuneConfig
    d = FinetuneConfig()
    p.add_argument("--family", choices=("bert", "gpt"), default=d.family,
                   help="the encoder: bert (default), or gpt (GPT-1 fine-tuning with the auxiliary LM loss, Task 12.1)")
    p.add_argument("--pool", choices=("cls", "mean", "max", "last"), default=d.pool,
                   help="sentence vector: cls (BERT's h[CLS], not the pooler; for gpt it means last), last, mean or max")
    p.add_argument("--aux-lm", type=float, default=0.5, metavar="LAMBDA",
                   help="gpt only: λ in L3 = L2 + λ·L1; the run compares λ = 0 with this λ (default 0.5)")
    p.add_argument("--seeds", type=int, default=3, help="gpt only: seeds seed..seed+N-1 (default 3)")
    p.add_argument("--steps", type=int, default=d.steps, help=f"fine-tuning steps (default {d.steps})")
    p.add_argument("--pretrain-steps", type=int, default=d.pretrain_steps,
                   help=f"pre-training steps, 0 = start from a random encoder (default {d.pretrain_steps})")
    p.add_argument("--checkpoint", metavar="CKPT", default=None,
                   help="start from a 'minilm train bert' checkpoint instead of pre-training here")
    p.add_argument("--batch-size", type=int, default=d.batch_size, help=f"examples per step (default {d.batch_size})")
    p.add_argument("--lr", type=float, default=d.lr, help=f"fine-tuning learning rate (default {d.lr})")
    p.add_argument("--n-train", type=int, default=None,
                   help=f"labelled training sentences (default {d.n_train} for bert, {GPT_N_TRAIN} for gpt, "
                        "where more would saturate the task)")
    p.add_argument("--n-test", type=int, default=d.n_test, help=f"test sentences (default {d.n_test})")
    p.add_argument("--n-embd", type=int, default=d.n_embd, help=f"model width (default {d.n_embd})")
    p.add_argument("--n-layer", type=int, default=d.n_layer, help=f"encoder layers (default {d.n_layer})")
    p.add_argument("--n-head", type=int, default=d.n_head, help=f"attention heads (default {d.n_head})")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                   help="no progress messages on stderr (--no-progress, as minilm train and experiment spell it)")
    add_common(p)
    p.set_defaults(func=run)


def format_report(r: dict) -> str:
    source = f"loaded from {r['checkpoint']}" if r["checkpoint"] else (
        f"pre-trained for {r['pretrain_steps']} steps" if r["pretrain_steps"] else "not pre-trained")
    rows = [("", "all", "negated", "plain"),
            (f"BERT, pool={r['pool']}", r["accuracy"], r["negation_accuracy"], r["plain_accuracy"]),
            ("bag of words", r["bow_accuracy"], r["bow_negation_accuracy"], r["bow_plain_accuracy"])]
    lines = [f"sentiment with negation: {r['n_test']} test sentences ({r['n_test_negated']} negated); "
             f"encoder {source}, fine-tuned for {r['steps']} steps"]
    for name, *vals in rows:
        cells = [v if isinstance(v, str) else f"{v:.1%}" for v in vals]
        lines.append(f"  {name:<18}" + "".join(f"{c:>10}" for c in cells))
    gap = r["negation_accuracy"] - r["bow_negation_accuracy"]
    verdict = "beats" if gap > 0 else "does NOT beat"
    lines.append(f"on the negated sentences BERT {verdict} the bag of words by {100 * gap:+.1f} points")
    return "\n".join(lines)


def format_gpt_report(r: dict) -> str:
    """The text ``minilm finetune --family gpt`` prints: accuracy and held-out task loss per λ (per seed
    and on average), beside the bag-of-words and majority-class baselines."""
    b = r["baselines"]
    lines = [f"GPT-1 fine-tuning on sentiment with negation (pool={r['pool']}, {r['n_train']} labelled / "
             f"{r['n_test']} test sentences), pre-trained {r['pretrain_steps']} steps, fine-tuned {r['steps']} steps, "
             f"seeds {r['seeds']}",
             f"  held-out task loss before fine-tuning: {r['initial_loss']:.3f} (chance: log 2 = 0.693)"]
    for lam in r["lambdas"]:
        key = str(lam)
        m = r["metrics_by_lambda"][key]
        per_seed = " ".join(f"{a:.1%}" for a in r["accuracy"][key])
        lines.append(f"  λ = {lam:<4}  accuracy {r['mean_accuracy'][key]:.1%} ± {r['std_accuracy'][key]:.1%}"
                     f"   (seeds: {per_seed}; negated: {m['negation_accuracy']:.1%}); "
                     f"held-out loss {m['test_loss']:.3f}")
    lines.append(f"  bag of words: accuracy {b['bow_accuracy']:.1%} (negated: {b['bow_negation_accuracy']:.1%}); "
                 f"held-out loss {b['bow_loss']:.3f}")
    lines.append(f"  majority class: accuracy {b['majority_accuracy']:.1%}; held-out loss {b['majority_loss']:.3f}")
    if len(r["lambdas"]) == 2:
        a, c = (str(lam) for lam in r["lambdas"])
        gap = r["mean_accuracy"][c] - r["mean_accuracy"][a]
        lines.append(f"L3 = L2 + {r['lambdas'][1]}·L1 vs L2 alone: {100 * gap:+.1f} points on average")
    best = max(r["mean_accuracy"].values())
    verdict = "beats" if best > b["bow_accuracy"] else "does NOT beat"
    lines.append(f"the fine-tuned GPT (best λ) {verdict} the bag of words by {100 * (best - b['bow_accuracy']):+.1f} "
                 f"points ({100 * (r['metrics']['negation_accuracy'] - b['bow_negation_accuracy']):+.1f} on the "
                 f"negated sentences with λ = {r['lambdas'][-1]})")
    return "\n".join(lines)


def run(args):
    if args.family == "gpt":
        from minilm.downstream.gpt_finetune import GPTFinetuneConfig, run_gpt_finetune
        cfg = GPTFinetuneConfig(aux_lm=args.aux_lm, pool="last" if args.pool == "cls" else args.pool,
                                seeds=range(args.seed, args.seed + args.seeds), steps=args.steps,
                                pretrain_steps=args.pretrain_steps, batch_size=args.batch_size, lr=args.lr,
                                **({} if args.n_train is None else {"n_train": args.n_train}), n_test=args.n_test,
                                n_embd=args.n_embd, n_layer=args.n_layer, n_head=args.n_head)
        result = run_gpt_finetune(cfg, progress=not args.quiet)
        print(json.dumps(result) if args.json else format_gpt_report(result))
        return 0
    from minilm.downstream.finetune import FinetuneConfig, run_finetune
    n_train = {} if args.n_train is None else {"n_train": args.n_train}
    cfg = FinetuneConfig(family=args.family, pool=args.pool, steps=args.steps, pretrain_steps=args.pretrain_steps,
                         batch_size=args.batch_size, lr=args.lr, **n_train, n_test=args.n_test,
                         n_embd=args.n_embd, n_layer=args.n_layer, n_head=args.n_head, seed=args.seed)
    result = run_finetune(cfg, checkpoint=args.checkpoint, progress=not args.quiet)
    if args.json:
        print(json.dumps(result))
    else:
        print(format_report(result))
        print(f"({result['seconds']:.0f} s)", file=sys.stderr)
    return 0
