"""``minilm demo``: the seed experiment (GPT and BERT objectives on six sentences)."""
import json
import sys
import time
from pathlib import Path

from minilm.cli import add_common

ORDER = 1

DESCRIPTION = """\
Train one tiny Transformer (d=32, 4 heads, one block) jointly on the GPT (next character, causal
mask) and BERT (masked characters, bidirectional) objectives over six sentences, then report what
each objective learned: the GPT loss, the MLM loss on a fixed mask set, the top three characters
after 'cats ' and for the cloze 'cats eat _' with their probabilities, and the [CLS] distances.
Saves a figure of the loss curves and the [CLS] distance matrix."""


def register(sub):
    p = sub.add_parser("demo", help="the seed experiment: one tiny Transformer trained on GPT + BERT objectives",
                       description=DESCRIPTION)
    add_common(p)
    p.add_argument("--seeds", type=int, default=1, help="repeat over seeds SEED..SEED+N-1 and report how "
                                                        "often each result holds (default 1)")
    p.add_argument("--steps", type=int, default=300, help="Adam steps (default 300)")
    p.add_argument("--out", type=Path, default=Path("runs/demo"), help="folder for demo.png (default runs/demo)")
    p.add_argument("--no-plot", action="store_true", help="skip the figure")
    p.set_defaults(func=run)


def run(args):
    from tqdm import tqdm

    from minilm.experiments.demo import Demo, DemoConfig, summarize
    cfg = DemoConfig(steps=args.steps)
    runs, demos = [], []
    start = time.time()
    for seed in range(args.seed, args.seed + args.seeds):
        demo = Demo(seed, cfg)
        bar = tqdm(total=cfg.steps, desc=f"demo seed {seed}", file=sys.stderr, leave=False,
                   disable=not sys.stderr.isatty())
        demo.train(progress=lambda step, g, m: (bar.update(1), bar.set_postfix(gpt=f"{g:.3f}", mlm=f"{m:.3f}")))
        bar.close()
        res = demo.results()
        res["seed"] = seed
        runs.append(res)
        demos.append(demo)
        if not args.json:
            _print_run(res)
    elapsed = time.time() - start
    figure = None
    if not args.no_plot:
        from minilm.plots import demo_figure
        figure = demo_figure(demos[0], args.out / "demo.png")
    if args.json:
        payload = runs[0] if args.seeds == 1 else runs
        print(json.dumps(payload))
    else:
        if args.seeds > 1:
            s = summarize(runs)
            n = s["seeds"]
            print(f"\nover {n} seeds: top two after 'cats ' are e and d in {s['top2_is_e_and_d']}/{n}; "
                  f"cloze fills 'f' in {s['cloze_is_f']}/{n} ('f' among its top three in "
                  f"{s['cloze_f_in_top3']}/{n}); birds' [CLS] farther from the others than "
                  f"cats' from dogs' in {s['birds_farther_than_cats_dogs']}/{n}")
        if figure:
            print(f"figure: {figure}")
        print(f"({elapsed:.1f} s)", file=sys.stderr)
    return 0


def _top(pairs):
    """[['e', 0.58], ['d', 0.42], ...] -> "'e' 0.58, 'd' 0.42, ..." """
    return ", ".join(f"{c!r} {p:.2f}" for c, p in pairs)


def _print_run(r):
    print(f"seed {r['seed']}: GPT loss {r['gpt_loss']:.3f} | MLM loss (fixed masks) {r['mlm_loss']:.3f}\n"
          f"  after 'cats ':      {_top(r['continuation'])}\n"
          f"  cloze 'cats eat _': {_top(r['cloze_top'])}\n"
          f"  [CLS] distance birds-vs-others {r['cls_dist_birds_others']:.3f}, "
          f"cats-vs-dogs {r['cls_dist_cats_dogs']:.3f}")
