"""Record (or check) what every experiment computes in its --quick mode for seed 0.

The tables in the READMEs come from full-size runs that take up to 20 minutes each; a refactor must
not move them, and re-running all of them to find out costs hours. A run is a pure function of
(condition, seed, settings), so the quick runs are a cheap fingerprint of the same code: if each
experiment's --quick numbers for seed 0 are unchanged to the last digit, so are its full tables.

    python tools/make_experiment_fingerprints.py            # rewrite tests/data/experiments_quick.json
    python tools/make_experiment_fingerprints.py --check    # exit 1 and name every difference

``tests/models/test_experiment_fingerprints.py`` (slow) runs the check. Rewrite the file only when a
change is *meant* to move the numbers, and then re-run the full experiments and the table sync
(tools/sync_experiment_tables.py) too.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from record_results import minilm_json  # tools/ is on the path: python tools/..., or tests' import_tool

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "experiments_quick.json"
ONE_THREAD = {"NUMBA_NUM_THREADS": "1", "MINILM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def experiment_names() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from minilm.experiments import EXPERIMENTS
    return list(EXPERIMENTS)


def quick_run(name: str, out, seeds: int | None = None, jobs: int = 2) -> dict:
    """The ``--json`` result of ``minilm experiment NAME --quick`` (``seeds`` seeds, else the
    experiment's own), run in a child process as a user runs it, in ``jobs`` worker processes of one
    thread each (the numbers depend on the thread count, not on the number of workers)."""
    argv = ["experiment", name, "--quick", "--jobs", str(jobs), "--json", "--no-progress", "--out", str(out)] \
        + (["--seeds", str(seeds)] if seeds else [])
    return minilm_json(argv, who="make_experiment_fingerprints", label=" ".join(["minilm.cli", *argv]), env=ONE_THREAD)


def fingerprint_of(result: dict) -> dict:
    """{"settings": ..., "runs": {condition: {metric: value}}} of a quick run's seed 0."""
    return {"settings": result["settings"],
            "runs": {run["condition"]: run["metrics"] for run in result["runs"] if run["seed"] == 0}}


def fingerprint(name: str) -> dict:
    """:func:`fingerprint_of` ``minilm experiment NAME --quick`` for seed 0 alone."""
    with tempfile.TemporaryDirectory() as out:
        return fingerprint_of(quick_run(name, out, seeds=1))


def differences(name: str, want: dict, got: dict) -> list[str]:
    """One line per setting or number that moved."""
    out = []
    for key in sorted(set(want["settings"]) | set(got["settings"])):
        a, b = want["settings"].get(key, "(absent)"), got["settings"].get(key, "(absent)")
        if a != b:
            out.append(f"{name}: setting {key} was {a!r}, is now {b!r}")
    for cond in list(want["runs"]) + [c for c in got["runs"] if c not in want["runs"]]:
        a, b = want["runs"].get(cond), got["runs"].get(cond)
        if a is None or b is None:
            out.append(f"{name}: condition {cond!r} {'is new' if a is None else 'is gone'}")
            continue
        for metric in sorted(set(a) | set(b)):
            if a.get(metric) != b.get(metric):
                out.append(f"{name} / {cond} / {metric}: was {a.get(metric)!r}, is now {b.get(metric)!r}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the recorded file, change nothing")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these experiments only")
    args = ap.parse_args(argv)
    names = args.only or experiment_names()
    got = {name: fingerprint(name) for name in names}
    if not args.check:
        recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
        GOLDEN.write_text(json.dumps({**recorded, **got}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN.relative_to(ROOT)} ({len(got)} experiments)")
        return 0
    recorded = json.loads(GOLDEN.read_text())
    problems = []
    for name in names:
        if name not in recorded:
            problems.append(f"{name}: not recorded in {GOLDEN.relative_to(ROOT)}")
        else:
            problems += differences(name, recorded[name], got[name])
    print("\n".join(problems) or f"{len(names)} experiments compute what they computed when recorded")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
