"""Re-write the experiment pages docs/experiments/NAME.md from the runs recorded in NAME.json, running
nothing: after a change to a page's wording, its notes or its claims (the "Agrees with the paper?"
line), not to what is measured. The runs on the English text minilm ships (``--corpus real``) are
recorded the same way in docs/experiments/real/ and rendered with the others.

The plan is rebuilt from the recorded settings; if the code's plan would now run with other
settings, the record no longer describes it and the tool refuses (re-run the experiment instead:
``minilm experiment NAME --jobs 2 --out docs/experiments --no-progress``). The command line, the
seeds and the wall-clock time on the page are the recorded run's; the PNG is left as it was.
``--check`` writes nothing and fails if a page or a record's verdict is not what its runs give
(tests/models/test_docs.py runs it), so the verdicts on the pages are always computed from the runs.
``--plots`` also redraws NAME.png from the recorded runs, as the runner draws it: after a change to
the title or to which metrics come first (the plotted ones).

    python tools/render_experiment_pages.py              # every page
    python tools/render_experiment_pages.py masking      # one
    python tools/render_experiment_pages.py --plots bakeoff
    python tools/render_experiment_pages.py --check
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "docs" / "experiments"
REAL = EXPERIMENTS / "real"      # the same experiments on --corpus real (the English text minilm ships)
sys.path.insert(0, str(ROOT))


def _command(record: dict, md_path: Path) -> str:
    """The command that made the record: stored in it since the runner writes it, else the old page's."""
    if record.get("command"):
        return record["command"]
    if md_path.exists():
        for line in md_path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^`(minilm experiment [^`]+)`", line)
            if m:
                return m.group(1)
    return f"minilm experiment {record['name']}"


def render(name: str, folder: Path = EXPERIMENTS, plot: bool = False) -> tuple[str, dict]:
    """(the page's Markdown, the record with its command and verdict) for experiment ``name``, from
    ``folder``/NAME.json (docs/experiments, or its ``real/`` for the runs on ``--corpus real``);
    ``plot``: also redraw ``folder``/NAME.png."""
    from minilm.experiments import available, claims, config_of, report
    from minilm.experiments.runner import values_of
    module = available()[name]
    json_path, md_path = folder / f"{name}.json", folder / f"{name}.md"
    record = json.loads(json_path.read_text(encoding="utf-8"))
    plan = module.plan(config_of(module.CONFIG, record["settings"]))
    if json.loads(json.dumps(plan.settings)) != record["settings"]:
        changed = sorted(k for k in set(plan.settings) | set(record["settings"])
                         if json.loads(json.dumps(plan.settings.get(k))) != record["settings"].get(k))
        raise SystemExit(f"render_experiment_pages: {json_path} was run with other settings than the code's "
                         f"plan now has ({', '.join(changed)}); re-run the experiment")
    values = values_of(plan, record["runs"])
    command = _command(record, md_path)
    cpu = sum(r.get("cpu_seconds", 0.0) for r in record["runs"])
    md = report.markdown_report(name, plan, values, record["seeds"], command, record["seconds"], cpu)
    if plot:
        report.figure(name, plan, values, folder / f"{name}.png")
    return md, dict(record, command=command, agreement=claims.verdict(plan.claims, values,
                                                                   plan.settings.get("corpus")))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="experiments to render (default: every one with a record)")
    ap.add_argument("--check", action="store_true", help="write nothing; fail if a page is out of date")
    ap.add_argument("--plots", action="store_true", help="also redraw each NAME.png from its recorded runs")
    args = ap.parse_args(argv)
    from minilm.experiments import EXPERIMENTS as REGISTRY
    from minilm.io import atomic_write
    names = args.names or list(REGISTRY)
    pages = [(folder, n) for n in names for folder in (EXPERIMENTS, REAL) if (folder / f"{n}.json").exists()]
    if args.names and not any(n == name for _, n in pages for name in args.names):
        raise SystemExit(f"render_experiment_pages: no record of {args.names} in {EXPERIMENTS} or {REAL}")
    stale = []
    for folder, name in pages:
        md, record = render(name, folder, plot=args.plots and not args.check)
        md_path, json_path = folder / f"{name}.md", folder / f"{name}.json"
        old = json.loads(json_path.read_text(encoding="utf-8"))
        if args.check:
            if md_path.read_text(encoding="utf-8") != md or old.get("agreement") != record["agreement"]:
                stale.append(str(md_path.relative_to(EXPERIMENTS)))
            continue
        atomic_write(md_path, md)
        if old != record:
            atomic_write(json_path, json.dumps(record, indent=1, allow_nan=False))
        print(f"{md_path.relative_to(ROOT)}: {record['agreement'].get('verdict') or 'no claims'}")
    if stale:
        print("render_experiment_pages: out of date (run python tools/render_experiment_pages.py): "
              + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
