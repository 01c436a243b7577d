"""``minilm train FAMILY``: pre-train one family with the shared loop (minilm/train.py).

Each family's options are generated from its recipe's config dataclass (``minilm/recipes/config.py``);
this command adds only what belongs to the run: --json, --out, --resume, --no-progress (--seed,
from ``add_common``, fills the config's ``seed``; --out and --no-progress fill an ``out`` and a
``no_progress`` field where a config has one).
"""
import argparse
import json
import sys
from pathlib import Path

from minilm.cli import add_common, add_refused_corpus

ORDER = 2
COMMAND_OPTIONS = ("seed", "out", "no_progress")  # its own options: a config's fields of these names get them


def register(sub):
    from minilm.recipes import available
    from minilm.recipes.config import add_options, leaves
    families = available()
    p = sub.add_parser(
        "train", help="pre-train a family: " + ", ".join(families),
        description="Pre-train one family on the synthetic corpus (or --corpus FILE, or --corpus real: the "
                    "English text the kit ships) with AdamW, warm-up + cosine decay and gradient clipping. "
                    "Shows a progress bar (loss, tokens/s, "
                    "ETA) on stderr, evaluates on held-out data, writes OUT/checkpoint.npz atomically, "
                    "OUT/history.json and OUT/loss.png, and ends with a summary that compares the "
                    "held-out result with a baseline the command computes. Each family has its own "
                    "options: minilm train FAMILY --help.")
    fam_sub = p.add_subparsers(dest="family", metavar="FAMILY", required=True)
    for name, recipe in families.items():
        doc = sys.modules[recipe.__module__].__doc__ or ""   # the recipe module's docstring
        summary = doc.strip().splitlines()[0]
        # plain prose from the docstring; argparse %-formats a help string, so escape its %
        fp = fam_sub.add_parser(name, help=summary.replace("%", "%%"), description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
        add_common(fp)
        fp.add_argument("--out", type=Path, default=None, help=f"output folder (default runs/{name})")
        fp.add_argument("--resume", action="store_true",
                        help="continue from OUT/checkpoint.npz; the loss curve matches an uninterrupted run")
        fp.add_argument("--no-progress", action="store_true", help="no progress bar")
        add_options(fp, recipe.Config, skip=COMMAND_OPTIONS)
        if "corpus" not in leaves(recipe.Config):   # a toy task: the option every family is asked for, answered
            add_refused_corpus(fp, "family", sys.modules[recipe.__module__].NO_CORPUS)
        fp.set_defaults(func=run, recipe_class=recipe)


def run(args):
    from minilm.recipes.config import from_args
    from minilm.train import train
    cfg = from_args(args.recipe_class.Config, args)
    recipe = args.recipe_class(cfg)
    out = args.out or Path("runs") / args.family
    summary = train(recipe, cfg.train_config(), out, resume=args.resume, progress=not args.no_progress)
    if args.json:
        print(json.dumps(summary))
    else:
        print(recipe.describe(summary))
        print(f"checkpoint: {summary['checkpoint']}   loss curve: {summary.get('plot')}", file=sys.stderr)
    return 0
