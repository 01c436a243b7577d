#!/usr/bin/env python3
"""Write ``tests/graded/manifest.json``: every graded test, its task, points, visibility, the CPU time
the reference takes for it, and the other tasks it reaches through the library.

    python tools/make_grading_manifest.py                  # measure (about three minutes) and write
    python tools/make_grading_manifest.py --check          # the manifest lists exactly the graded tests
    python tools/make_grading_manifest.py --untimed [--root KIT]  # list the tests without timing them
                                                           # (no reference time: each gets the floor limit)

Each task module is measured in a fresh process with an empty numba cache, in the order the grader
runs it, so that a kernel's first compilation is counted in the test that pays for it. ``uses`` comes
from ``autograd.tasks.trace``: the slots a test calls through the library, mapped to their tasks by
the stubs in ``exercises/``. The grader reads the file (``minilm/grading/manifest.py``) to know which
tests exist and what they are worth before any student code runs, and to set each test's time limit.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilm.grading import manifest  # noqa: E402

TASK_RE = re.compile(r"^task(\d+)_(\d+|capstone)$")


def pytest_args(root: Path = ROOT) -> list[str]:
    return ["-p", "no:cacheprovider", "-p", "no:randomly", "-qq", "-o", "addopts=--strict-markers",
            "-m", "slow or not slow", "--rootdir", str(root), "-c", str(root / "setup.cfg")]


def task_of(item) -> str | None:
    for mark in item.iter_markers():
        m = TASK_RE.match(mark.name)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return None


class Listing:
    """Collects task, points and visibility of every graded test (and, when run, its CPU time and uses)."""

    def __init__(self):
        self.rows: dict[str, dict] = {}

    def pytest_collection_modifyitems(self, items):
        for item in items:
            task = task_of(item)
            if task is None:
                continue
            pts = item.get_closest_marker("points")
            self.rows[item.nodeid] = {"nodeid": item.nodeid, "task": task, "hidden": item.get_closest_marker("hidden")
                                      is not None, "points": float(pts.args[0]) if pts and pts.args else 1.0}


class Measure(Listing):
    def __init__(self):
        super().__init__()
        self.failed: list[str] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        from autograd import tasks
        t0 = time.process_time()
        with tasks.trace() as seen:
            yield
        row = self.rows.get(item.nodeid)
        if row is not None:
            row["cpu_seconds"] = time.process_time() - t0
            row["slots"] = sorted(f"{m}:{n}" for m, n in seen)

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed.append(report.nodeid)


def graded_files(module: int | None = None, root: Path = ROOT) -> list[str]:
    pattern = f"test_task{module:02d}_*.py" if module is not None else "test_task*_*.py"
    return sorted(str(f) for f in (root / "tests" / "graded").rglob(pattern))


def measure_module(module: int, out: Path) -> int:
    """(in a fresh process) Run one module's graded tests on the reference; write the rows to ``out``."""
    from autograd import tasks
    plugin = Measure()
    code = pytest.main([*graded_files(module), "--impl", "solutions", *pytest_args()], plugins=[plugin])
    slots = {tuple(s.split(":")) for r in plugin.rows.values() for s in r.get("slots", [])}
    task_of_slot = {name: task for task, name, why in tasks.unfinished(slots, "exercises") if why == "stub"}
    for r in plugin.rows.values():
        used = {task_of_slot.get(s.replace(":", ".")) for s in r.pop("slots", [])}
        r["uses"] = sorted((u for u in used if u and u != r["task"]), key=_task_key)
    out.write_text(json.dumps({"rows": list(plugin.rows.values()), "failed": plugin.failed}), encoding="utf-8")
    return int(code)


def _task_key(task: str):
    a, _, b = task.partition(".")
    return int(a), int(b) if b.isdigit() else 99


def collected(root: Path = ROOT) -> dict[str, dict]:
    plugin = Listing()
    code = pytest.main([*graded_files(root=root), "--collect-only", *pytest_args(root)], plugins=[plugin])
    if code not in (0, 5):
        raise SystemExit(f"collecting the graded tests failed (pytest exit {code})")
    return plugin.rows


def check() -> int:
    """The manifest lists exactly the collected graded tests, with the same task, points and visibility."""
    have = {n: e for n, e in manifest.load(ROOT, existing_only=False).items()}
    want = collected()
    problems = [f"not in the manifest: {n}" for n in want if n not in have]
    problems += [f"in the manifest but not a graded test: {n}" for n in have if n not in want]
    problems += [f"{n}: manifest says task {have[n].task}, {have[n].points:g} points, hidden={have[n].hidden}; "
                 f"the test says task {w['task']}, {w['points']:g} points, hidden={w['hidden']}"
                 for n, w in want.items() if n in have and (have[n].task, have[n].points, have[n].hidden)
                 != (w["task"], w["points"], w["hidden"])]
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print("tests/graded/manifest.json is out of date: run python tools/make_grading_manifest.py", file=sys.stderr)
    return 1 if problems else 0


def build() -> int:
    modules = sorted({int(re.match(r"test_task(\d+)_", Path(f).name).group(1)) for f in graded_files()})
    rows, failed = [], []
    for m in modules:
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if k not in ("MINILM_IMPL", "PYTEST_ADDOPTS")}
            env.update(NUMBA_CACHE_DIR=str(Path(tmp) / "numba"), PYTHONDONTWRITEBYTECODE="1",
                       OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", MPLBACKEND="Agg")
            out = Path(tmp) / "rows.json"
            t0 = time.monotonic()
            subprocess.run([sys.executable, __file__, "--measure", str(m), "--out", str(out)], cwd=ROOT, env=env,
                           stdout=subprocess.DEVNULL)
            got = json.loads(out.read_text(encoding="utf-8"))
            rows += got["rows"]
            failed += got["failed"]
            print(f"module {m}: {len(got['rows'])} tests, {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if failed:
        print("the reference fails graded tests (fix them first):\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    entries = [manifest.Entry(r["nodeid"], r["task"], r["points"], r["hidden"], r.get("cpu_seconds", 0.0),
                              tuple(r.get("uses", ()))) for r in rows]
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    (ROOT / manifest.PATH).write_text(manifest.dump(entries, machine), encoding="utf-8")
    print(f"wrote {manifest.PATH}: {len(entries)} tests, {sum(e.points for e in entries):g} points, reference "
          f"{sum(e.cpu_seconds for e in entries):.0f} CPU-seconds", file=sys.stderr)
    return 0


def untimed(root: Path) -> int:
    rows = collected(root)
    entries = [manifest.Entry(r["nodeid"], r["task"], r["points"], r["hidden"]) for r in rows.values()]
    (root / manifest.PATH).write_text(manifest.dump(entries, "not timed (--untimed)"), encoding="utf-8")
    print(f"wrote {root / manifest.PATH}: {len(entries)} tests, not timed", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the manifest lists the graded tests")
    ap.add_argument("--untimed", action="store_true", help="list the graded tests without running them")
    ap.add_argument("--root", type=Path, default=ROOT, help="the kit (default: this checkout)")
    ap.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure is not None:
        return measure_module(args.measure, args.out)
    if args.untimed:
        return untimed(args.root.resolve())
    return check() if args.check else build()


if __name__ == "__main__":
    sys.exit(main())
