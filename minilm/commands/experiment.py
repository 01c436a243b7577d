"""``minilm experiment NAME``: re-run a comparison the course cites, over seeds, as a table and a plot
(``minilm/experiments/``)."""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from minilm.cli import add_common, add_refused_corpus

ORDER = 3

DESCRIPTION = """\
Re-run, in miniature, a comparison the course cites: each condition is pre-trained and evaluated
once per seed (--seeds N: seeds SEED..SEED+N-1, default 3), and the result is reported as
mean ± standard deviation over the seeds. Writes OUT/NAME.md (the Markdown table with the command
and the settings), OUT/NAME.png (the plot: mean ± sd, every seed a dot) and OUT/NAME.json (every
run's numbers), and prints the table. --quick runs the same comparison at toy sizes (about two
minutes; the numbers are for checking that it works, not for conclusions). Whether the miniature
agrees with the paper is a finding, not a promise: the README reports what came out.

Each experiment has its own options: minilm experiment NAME --help."""


def register(sub):
    from minilm.experiments import available
    from minilm.recipes.config import add_options
    experiments = available()
    p = sub.add_parser("experiment", help="re-run a comparison from the papers over seeds: " + ", ".join(experiments),
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    exp_sub = p.add_subparsers(dest="experiment", metavar="NAME", required=True)
    for name, module in experiments.items():
        # HELP is plain prose ("ELECTRA-15%"); argparse %-formats a help string, so escape its %
        ep = exp_sub.add_parser(name, help=module.HELP.replace("%", "%%"), description=module.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
        add_common(ep)
        ep.add_argument("--quick", action="store_true", help="toy sizes, about 2 minutes: checks that it runs")
        ep.add_argument("--seeds", type=int, default=3, help="how many seeds, from --seed on (default 3)")
        ep.add_argument("--out", type=Path, default=Path("runs") / "experiments",
                        help="folder for NAME.md, NAME.png, NAME.json (default runs/experiments)")
        ep.add_argument("--jobs", type=int, default=1,
                        help="runs at once, each in its own process on one thread (default 1; 2 on a 2-core machine)")
        ep.add_argument("--resume", action="store_true",
                        help="reuse the runs in OUT/NAME.json made with the same settings")
        ep.add_argument("--no-progress", action="store_true", help="no progress bar")
        add_options(ep, module.CONFIG, only=module.OPTIONS, quick=module.CONFIG.quick())
        if "corpus" not in module.OPTIONS:          # the option every experiment is asked for, answered
            add_refused_corpus(ep, "experiment", module.NO_CORPUS)
        ep.set_defaults(func=run, experiment_module=module)


def run(args):
    from autograd.errors import ConfigError
    from minilm.experiments.runner import run_experiment
    from minilm.recipes.config import from_args
    if args.seeds < 1:
        raise ConfigError(f"--seeds must be at least 1, got {args.seeds}")
    if args.jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {args.jobs}")
    seeds = list(range(args.seed, args.seed + args.seeds))
    if args.seeds < 3:
        print(f"note: {args.seeds} seed(s); the README's tables use 3 or more", file=sys.stderr)
    command = "minilm experiment " + " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index("experiment") + 1:]) \
        if "experiment" in sys.argv else f"minilm experiment {args.experiment}"
    module = args.experiment_module
    cfg = from_args(module.CONFIG, args, base=module.CONFIG.quick() if args.quick else module.CONFIG())
    result = run_experiment(args.experiment, module, cfg, quick=args.quick, seeds=seeds,
                            out_dir=args.out, jobs=args.jobs, resume=args.resume,
                            progress=not args.no_progress, command=command)
    if args.json:
        print(json.dumps(result))
    else:
        print(Path(result["markdown"]).read_text(encoding="utf-8"))
        print(f"table: {result['markdown']}   plot: {result['png']}   runs: {args.out / (args.experiment + '.json')}",
              file=sys.stderr)
    return 0
