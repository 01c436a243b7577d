"""Run one experiment over seeds: every (seed, condition) pair once, then the table and the plot.

Runs go seed by seed (all conditions of seed 0, then seed 1, ...), so a run stopped early still
has balanced rows. After every run the numbers so far are written to OUT/NAME.json (atomically);
``--resume`` reuses the runs there whose settings match, so an interrupted experiment picks up
where it stopped. ``--jobs N`` runs N pairs at once in separate processes (one thread each).
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from autograd.errors import ConfigError
from minilm.experiments import claims, report
from minilm.io import atomic_write

FORMAT = "minilm-experiment/1"


def _jsonable(obj):
    """``obj`` with every NaN / infinity replaced by None: strict JSON has no NaN."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(_jsonable(obj), indent=1, allow_nan=False))


def _previous_runs(path: Path, name: str, settings: dict) -> dict:
    """{(condition, seed): metrics} from an earlier OUT/NAME.json with the same settings."""
    if not path.exists():
        return {}
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"--resume: {path} is not readable JSON ({e}); delete it or drop --resume") from None
    if old.get("format") != FORMAT or old.get("name") != name:
        raise ConfigError(f"--resume: {path} is not a {name} experiment file")
    if old.get("settings") != json.loads(json.dumps(settings)):
        print(f"--resume: {path} was made with other settings; starting afresh", file=sys.stderr)
        return {}
    return {(r["condition"], r["seed"]): r for r in old.get("runs", [])}


TRACE_ENV = "MINILM_TRACE_SLOTS"  # a file: each run appends the task slots it called, "module name" a line


def _run_pair(module_name: str, condition: str, seed: int, settings: dict) -> dict:
    import importlib
    from autograd import tasks
    module = importlib.import_module(module_name)
    t0, c0 = time.time(), time.process_time()
    with tasks.trace() as seen:
        metrics = module.run_one(condition, seed, settings)
    if os.environ.get(TRACE_ENV):  # the experiments' slow tests check minilm/recipes/slot_paths.json with it
        with open(os.environ[TRACE_ENV], "a", encoding="utf-8") as f:
            f.write("".join(f"{m} {n}\n" for m, n in sorted(seen)))
    metrics = {k: float(v) for k, v in metrics.items()}
    metrics = {k: v if math.isfinite(v) else None for k, v in metrics.items()}  # NaN is not JSON: null, shown "–"
    return {"condition": condition, "seed": seed, "metrics": metrics,
            "seconds": round(time.time() - t0, 1), "cpu_seconds": round(time.process_time() - c0, 1)}


def run_experiment(name: str, module, cfg=None, *, quick: bool, seeds: list[int], out_dir, jobs: int = 1,
                   resume: bool = False, progress: bool = True, command: str = "") -> dict:
    """Run the plan of ``module`` for ``cfg`` (an instance of ``module.CONFIG``; None: its defaults,
    or ``CONFIG.quick()`` when ``quick``); return the result (also written as OUT/NAME.{json,md,png})."""
    if len(seeds) < 1:
        raise ConfigError("minilm experiment: --seeds must be at least 1")
    if cfg is None:
        cfg = module.CONFIG.quick() if quick else module.CONFIG()
    plan = module.plan(cfg)
    out_dir = Path(out_dir)
    json_path = out_dir / f"{name}.json"
    done = _previous_runs(json_path, name, plan.settings) if resume else {}
    pairs = [(c, s) for s in seeds for c in plan.conditions]
    runs = [dict(done[(c, s)], condition=c, seed=s) for c, s in pairs if (c, s) in done]
    todo = [(c, s) for c, s in pairs if (c, s) not in done]
    if runs:
        print(f"reusing {len(runs)} runs from {json_path}", file=sys.stderr)
    t0 = time.time()

    def record(run):
        runs.append(run)
        _write_json(json_path, {"format": FORMAT, "name": name, "title": plan.title, "settings": plan.settings,
                                "quick": quick, "runs": runs})

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(pairs), initial=len(pairs) - len(todo), desc=f"experiment {name}",
                   file=sys.stderr, dynamic_ncols=True)
    if jobs <= 1:
        _run_in_turn(module.__name__, todo, plan.settings, record, bar)
    else:
        _run_in_processes(module.__name__, todo, plan.settings, record, bar, jobs)
    if bar is not None:
        bar.close()
    result = _result(name, plan, runs, seeds, out_dir, quick=quick, seconds=time.time() - t0,
                     command=command or f"minilm experiment {name}")
    _write_json(json_path, result)
    return _jsonable(result)


def _run_in_turn(module_name: str, todo, settings: dict, record, bar) -> None:
    """Run the (condition, seed) pairs one after the other in this process; ``record`` each."""
    for c, s in todo:
        if bar is not None:
            bar.set_postfix_str(f"{c}, seed {s}")
        record(_run_pair(module_name, c, s, settings))
        if bar is not None:
            bar.update(1)


def _run_in_processes(module_name: str, todo, settings: dict, record, bar, jobs: int) -> None:
    """Run the pairs ``jobs`` at a time in spawned processes of one thread each; ``record`` each
    as it finishes. The processes share a scratch folder for work a seed's conditions have in
    common (``minilm.experiments.shared``)."""
    import multiprocessing
    from autograd import tasks
    from minilm.experiments import shared
    saved = {k: os.environ.get(k) for k in ("MINILM_THREADS", "MINILM_IMPL")}
    os.environ["MINILM_THREADS"] = "1"                 # one thread per process: jobs share the cores
    os.environ["MINILM_IMPL"] = tasks.get_impl()
    try:
        with shared.folder_for_workers(), \
                ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_run_pair, module_name, c, s, settings) for c, s in todo]
            for f in as_completed(futures):
                record(f.result())
                if bar is not None:
                    bar.update(1)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def values_of(plan, runs: list) -> dict:
    """``{condition: {metric: [one value per seed, in seed order]}}`` of the recorded ``runs``."""
    values: dict = {}
    for r in sorted(runs, key=lambda r: (r["seed"], plan.conditions.index(r["condition"]))):
        for k, v in r["metrics"].items():
            values.setdefault(r["condition"], {}).setdefault(k, []).append(v)
    return values


def _result(name: str, plan, runs: list, seeds, out_dir: Path, *, quick: bool, seconds: float,
            command: str) -> dict:
    """The table, the report (OUT/NAME.md), the figure (OUT/NAME.png) and the result dict of ``runs``."""
    values = values_of(plan, runs)
    cpu = sum(r.get("cpu_seconds", 0.0) for r in runs)  # the load-independent cost (reused runs included)
    md = report.markdown_report(name, plan, values, seeds, command, seconds, cpu)
    md_path = out_dir / f"{name}.md"
    md_path.write_text(md, encoding="utf-8")
    png = report.figure(name, plan, values, out_dir / f"{name}.png")
    summary = {m.key: {c: dict(zip(("mean", "sd"), report.mean_sd(values.get(c, {}).get(m.key, []))),
                           values=values.get(c, {}).get(m.key, [])) for c in plan.conditions}
               for m in plan.metrics}
    return {"format": FORMAT, "name": name, "title": plan.title, "quick": quick, "seeds": list(seeds),
            "command": command, "agreement": claims.verdict(plan.claims, values, plan.settings.get("corpus")), "settings": plan.settings,
            "conditions": plan.conditions,
            "metrics": [m.key for m in plan.metrics], "summary": summary, "runs": runs,
            "table": report.markdown_table(plan, values), "markdown": str(md_path), "png": str(png),
            "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1)}
