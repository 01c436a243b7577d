"""``minilm bench``: time GPT-mini and BERT-mini training steps and the kernels (minilm/bench/)."""
import json

from minilm.cli import add_common

ORDER = 60

DESCRIPTION = """\
Time the reference workload GPT-mini (V=256, T=64, B=32, C=128, 4 layers, 4 heads, float32, AdamW)
and BERT-mini: median ms per training step, tokens/s; each numba kernel against its NumPy twin;
matmul GFLOP/s against NumPy's BLAS; the peak memory of the training steps and the time to the first
step (cold and warm numba cache), each in a fresh process. --vs-torch runs the same GPT-mini in
PyTorch (the optional 'bench' extra) in turn with ours and prints the ratio. Takes 1-3 minutes."""


def register(sub):
    from minilm.bench import PARTS
    p = sub.add_parser("bench", help="benchmark training steps and kernels (--vs-torch: beside PyTorch)",
                       description=DESCRIPTION)
    add_common(p)
    p.add_argument("--vs-torch", action="store_true", help="also time GPT-mini in PyTorch (needs torch, CPU build)")
    p.add_argument("--steps", type=int, default=20, help="timed training steps per workload (default 20)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for numba, BLAS and PyTorch (default: the engine's choice - all cores, or 1 "
                        "on a busy machine - and the same for PyTorch)")
    p.add_argument("--only", default=None, metavar="PARTS",
                   help=f"comma-separated parts to run, from {','.join(PARTS)} (default: all)")
    p.add_argument("--quick", action="store_true", help="tiny sizes and few repeats: a smoke test, not a measurement")
    p.set_defaults(func=run)


def _command_line(args) -> str:
    """The command that reproduces this run (for the report)."""
    words = ["minilm bench"]
    for flag, value in (("--vs-torch", args.vs_torch), ("--quick", args.quick), ("--json", args.json)):
        if value:
            words.append(flag)
    for flag, value, default in (("--steps", args.steps, 20), ("--threads", args.threads, None),
                                 ("--only", args.only, None), ("--seed", args.seed, 0)):
        if value != default:
            words.append(f"{flag} {value}")
    return " ".join(words)


def run(args):
    from autograd.errors import ConfigError
    from minilm.bench import PARTS, BenchConfig, report
    from minilm.bench import run as run_bench
    parts = PARTS if not args.only else tuple(x.strip() for x in args.only.split(",") if x.strip())
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise ConfigError(f"bench --only: unknown parts {unknown}; expected some of {list(PARTS)}")
    if args.steps < 1:
        raise ConfigError(f"bench --steps {args.steps}: expected at least 1")
    common = dict(vs_torch=args.vs_torch, threads=args.threads, seed=args.seed)
    if args.quick:
        cfg = BenchConfig.quick(**common, **({"parts": parts} if args.only else {}))
    else:
        cfg = BenchConfig(steps=args.steps, parts=parts, **common)
    result = run_bench(cfg)
    result["command"] = _command_line(args)
    if args.json:
        print(json.dumps(result, default=float))
    else:
        print(f"command: {result['command']}")
        print(report.format_table(result))
    return 0
