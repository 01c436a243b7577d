"""gpt-vs-bert along pre-training: both fine-tuned rows at several step budgets, and a plot.

BERT's Appendix C.1 (Figure 5) plots MNLI dev accuracy of the masked LM and the left-to-right LM
against pre-training steps: the MLM "does converge slightly slower", but is ahead almost from the
start. ``minilm experiment gpt-vs-bert`` measures one budget (500 steps); this tool re-runs its two
fine-tuned rows (``GPT fine-tuned``, ``BERT fine-tuned``, each with its own ``run_one``: the same
pre-training text, vocabulary, sizes and fine-tuning as the experiment) at each budget of
``--steps``, every budget a complete run with its own warm-up and cosine decay (not checkpoints
of one run, whose learning rate would still be high early on).

    python tools/gpt_vs_bert_steps.py                       # 250,500,1000,2000 steps, seeds 0-2, 2 jobs
    python tools/gpt_vs_bert_steps.py --steps 100,200 --seeds 0 --out /tmp/trend

It writes ``gpt-vs-bert-steps.json`` (every run's scores, and the mean and standard deviation per
model and budget) and ``gpt-vs-bert-steps.png`` (entailment, agreement and cloze against steps)
into ``--out`` (default docs/experiments).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = {"entailment": "entailment (%)", "agreement": "agreement at the subject (%)", "cloze": "cloze (%)"}


def _one(job):
    steps, seed, condition = job
    os.environ["MINILM_THREADS"] = "1"
    sys.path.insert(0, str(ROOT))
    from dataclasses import replace
    from minilm.experiments import gpt_vs_bert, settings_of
    settings = settings_of(replace(gpt_vs_bert.GptVsBertConfig(), steps=steps))
    t0 = time.process_time()
    scores = gpt_vs_bert.run_one(condition, seed, settings)
    return {"steps": steps, "seed": seed, "condition": condition, "cpu_s": time.process_time() - t0,
            **{k: float(scores[k]) for k in METRICS}}


def summarize(runs: list[dict]) -> dict:
    """``{condition: {steps: {metric: [mean, sd]}}}`` over seeds (sd 0 for one seed)."""
    import numpy as np
    out: dict = {}
    for r in runs:
        out.setdefault(r["condition"], {}).setdefault(str(r["steps"]), []).append(r)
    return {c: {s: {m: [float(np.mean([r[m] for r in rs])), float(np.std([r[m] for r in rs]))] for m in METRICS}
                for s, rs in sorted(by.items(), key=lambda kv: int(kv[0]))} for c, by in out.items()}


def plot(summary: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(METRICS), figsize=(4 * len(METRICS), 3.4))
    for ax, (metric, label) in zip(axes, METRICS.items()):
        for condition, by in summary.items():
            steps = [int(s) for s in by]
            mean = [100 * by[s][metric][0] for s in by]
            sd = [100 * by[s][metric][1] for s in by]
            ax.errorbar(steps, mean, yerr=sd, marker="o", capsize=3, label=condition)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(steps, [str(s) for s in steps])
        ax.set_xlabel("pre-training steps")
        ax.set_title(label)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", default="250,500,1000,2000", help="pre-training step budgets, comma-separated")
    ap.add_argument("--seeds", default="0,1,2", help="seeds, comma-separated")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (one thread each)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "experiments"), help="folder for the JSON and the plot")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from minilm.experiments.gpt_vs_bert import BERT_FT, GPT_FT
    from minilm.io import atomic_write
    steps = [int(s) for s in args.steps.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = [(n, seed, c) for n in steps for seed in seeds for c in (GPT_FT, BERT_FT)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    command = "python tools/gpt_vs_bert_steps.py" + (" " + " ".join(argv) if argv else "")
    runs, t0 = [], time.time()

    def save(complete: bool) -> dict:            # after every run: an interrupted sweep keeps what it measured
        record = {"command": command, "steps": steps, "seeds": seeds, "complete": complete,
                  "summary": summarize(runs), "runs": runs, "wall_min": round((time.time() - t0) / 60, 1),
                  "cpu_min": round(sum(r["cpu_s"] for r in runs) / 60, 1)}
        atomic_write(out / "gpt-vs-bert-steps.json", json.dumps(record, indent=1))
        return record

    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        for r in pool.map(_one, jobs):
            runs.append(r)
            save(False)
            print(f"[{len(runs)}/{len(jobs)}] {r['condition']}, {r['steps']} steps, seed {r['seed']}: "
                  + ", ".join(f"{m} {100 * r[m]:.1f}" for m in METRICS) + f" ({r['cpu_s']:.0f} CPU-s)", flush=True)
    record = save(True)
    plot(record["summary"], out / "gpt-vs-bert-steps.png")
    print(f"wrote {out / 'gpt-vs-bert-steps.json'} and {out / 'gpt-vs-bert-steps.png'} "
          f"({record['wall_min']} min wall-clock, {record['cpu_min']} CPU-min)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
