"""A fresh process for what only a fresh process can measure: start-up time and peak memory.

``python -m minilm.bench.probe FRAMEWORK [--steps N] [--sizes JSON]`` builds GPT-mini in a new
interpreter (ours: ``minilm``; or ``torch``), runs N training steps and prints one JSON line:

    {"framework": ..., "first_step_at": <time.time() when the first step ended>,
     "baseline_mb": <RSS before the model was built>, "peak_mb": <peak RSS of the whole run>}

The parent records ``time.time()`` before it starts the child, so ``first_step_at − start`` is the
time from an empty interpreter to the first finished training step: imports, loading (or, with a
cold numba cache, compiling) the kernels, building the model, one step. ``peak_mb`` is the peak
RSS during the steps after the first (the steady state: model, optimiser state, activations,
gradients, and the framework itself); ``baseline_mb`` the RSS after the framework's imports and
one step of a tiny model, which loads every kernel a step needs.
Each framework runs in a process of its own, so neither sees the other's freed memory.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograd import kernels
from minilm.bench.timing import peak_rss_mb, reset_peak_rss, rss_mb
from minilm.bench.workloads import TINY, Sizes, gpt_mini


def _child(framework: str, steps: int, sizes_json: str) -> dict:
    sizes = Sizes(**json.loads(sizes_json)) if sizes_json else Sizes()
    if framework == "torch":
        from minilm.bench import vs_torch as bench_torch  # imports torch: only in the torch probe
        threads = kernels.get_num_threads()["numba"]  # as many as the engine would use here
        build = lambda s: bench_torch.gpt_mini(s, threads=threads)[0]  # noqa: E731
    else:
        build = lambda s: gpt_mini(s).step  # noqa: E731
    build(TINY)()         # load (or compile) every kernel a step uses: part of the framework
    baseline = rss_mb()   # the interpreter, NumPy, the framework and its kernels
    step = build(sizes)
    step()
    first = time.time()
    reset_peak_rss()      # steady state from here: the peak of the training steps themselves
    for _ in range(max(1, steps - 1)):
        step()
    return {"framework": framework, "first_step_at": first, "baseline_mb": baseline, "peak_mb": peak_rss_mb()}


def run_probe(framework: str, *, steps: int = 3, sizes=None, cold_cache: bool = False,
              threads: int | None = None, timeout: float = 300.0) -> dict:
    """Start a child process; returns its JSON plus ``seconds_to_first_step`` and ``step_peak_mb``
    (peak minus baseline: what the model, the optimiser and a training step hold at most)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if threads:
        env["MINILM_THREADS"] = str(threads)  # the engine's threads; bench_torch uses the same
    sizes_json = json.dumps(dataclasses.asdict(sizes)) if sizes is not None else ""
    cmd = [sys.executable, "-m", "minilm.bench.probe", framework, "--steps", str(steps), "--sizes", sizes_json]
    with tempfile.TemporaryDirectory(prefix="minilm-numba-cache-") as cache:
        if cold_cache:
            env["NUMBA_CACHE_DIR"] = cache  # empty: every kernel compiles
        start = time.time()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=root)
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-3:]
        return {"framework": framework, "error": " | ".join(tail) or f"exit code {done.returncode}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["seconds_to_first_step"] = result["first_step_at"] - start
    if result.get("peak_mb") is not None and result.get("baseline_mb") is not None:
        result["step_peak_mb"] = result["peak_mb"] - result["baseline_mb"]
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m minilm.bench.probe")
    p.add_argument("framework", choices=("minilm", "torch"))
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--sizes", default="")
    args = p.parse_args(argv)
    print(json.dumps(_child(args.framework, args.steps, args.sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
