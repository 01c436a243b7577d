"""Run the graded tests and score them: the engine of ``minilm grade`` and ``tools/check_stubs.py``.

Each graded test carries a task marker (``task2_1``) and a points marker (``points(2)``, default 1).
A task is *not started* when every one of its tests fails with ``NotImplementedError`` (the untouched
stub), *passed* when all pass, and *failed* otherwise. The Gradescope results file has the fields
``score``, ``max_score`` and ``tests: [{name, score, max_score, output}]``.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograd.errors import MiniLMError

ROOT = Path(__file__).resolve().parent.parent
GRADED_DIR = ROOT / "tests" / "graded"
TASK_RE = re.compile(r"^task(\d+)_(\d+|capstone)$")


@dataclass
class TestResult:
    nodeid: str
    task: str  # "2.1" or "4.capstone"
    points: float
    outcome: str = "failed"  # passed | failed | skipped
    message: str = ""
    not_implemented: bool = False

    @property
    def score(self) -> float:
        return self.points if self.outcome == "passed" else 0.0


@dataclass
class TaskSummary:
    task: str
    tests: list = field(default_factory=list)

    @property
    def points(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_points(self) -> float:
        return sum(t.points for t in self.tests)

    @property
    def status(self) -> str:
        if all(t.outcome == "passed" for t in self.tests):
            return "passed"
        if all(t.not_implemented for t in self.tests):
            return "not started"
        return "failed"

    @property
    def reason(self) -> str:
        for t in self.tests:
            if t.outcome != "passed":
                return f"{t.nodeid.split('::')[-1]}: {t.message}"
        return ""


class _Collector:
    """A pytest plugin that records each graded test's task, points, outcome and first error line."""

    def __init__(self, wanted=None):
        self.wanted = wanted  # None, "2" (a module) or "2.1" (a task)
        self.results: dict[str, TestResult] = {}
        self.collect_errors: list[str] = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(f"{report.nodeid}: {_first_line(report)}")

    def pytest_collection_modifyitems(self, config, items):
        keep, drop = [], []
        for item in items:
            task = None
            for mark in item.iter_markers():
                m = TASK_RE.match(mark.name)
                if m:
                    task = f"{m.group(1)}.{m.group(2)}"
                    break
            task = task or "?"
            if self.wanted and task != self.wanted and task.split(".")[0] != self.wanted:
                drop.append(item)
                continue
            keep.append(item)
            points = item.get_closest_marker("points")
            pts = float(points.args[0]) if points and points.args else 1.0
            self.results[item.nodeid] = TestResult(item.nodeid, task, pts)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_runtest_logreport(self, report):
        res = self.results.get(report.nodeid)
        if res is None:
            return
        if report.when == "call" and report.passed and res.outcome != "failed-setup":
            res.outcome = "passed"
        elif report.failed:
            res.outcome = "failed"
            res.message = _first_line(report)
            text = str(report.longrepr)
            res.not_implemented = "NotImplementedError" in text and "Task " in text
        elif report.skipped and report.when in ("setup", "call"):
            res.outcome = "skipped"
            res.message = _first_line(report)


def _first_line(report) -> str:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None:
        msg = crash.message
    elif isinstance(report.longrepr, tuple):  # skip reports: (file, line, reason)
        msg = str(report.longrepr[2])
    else:
        msg = str(report.longrepr)
    msg = msg.strip().splitlines()[0] if msg.strip() else ""
    return msg[:200]


def run_graded(impl: str = "exercises", task: str | None = None, tests_dir: Path = GRADED_DIR,
               echo: bool = False) -> list[TaskSummary]:
    """Run the graded tests against ``impl`` (only ``task`` "2.1" or module "2" if given)."""
    import pytest

    if not tests_dir.is_dir():
        raise MiniLMError(f"graded tests not found at {tests_dir}: run minilm grade from a source checkout "
                          f"installed with 'pip install -e .'")
    args = [str(tests_dir), "--impl", impl, "-p", "no:cacheprovider", "--rootdir", str(ROOT),
            "-c", str(ROOT / "setup.cfg"), "-q", "-o", "addopts=--strict-markers", "-m", "slow or not slow"]
    if task and not re.fullmatch(r"\d+(\.(\d+|capstone))?", task):
        raise MiniLMError(f"--task {task!r}: expected a task id like 2.1 or a module number like 2")
    collector = _Collector(task)
    out = io.StringIO()
    env_before = os.environ.get("MINILM_IMPL")
    with contextlib.redirect_stdout(out if not echo else _Stderr()):
        code = pytest.main(args, plugins=[collector])
    if env_before is not None:
        os.environ["MINILM_IMPL"] = env_before
    if collector.collect_errors or code in (2, 3, 4):
        raise MiniLMError("the graded tests could not be collected:\n  " + "\n  ".join(
            collector.collect_errors or [out.getvalue()[-2000:]]))
    by_task: dict[str, TaskSummary] = {}
    for res in collector.results.values():
        by_task.setdefault(res.task, TaskSummary(res.task)).tests.append(res)
    return sorted(by_task.values(), key=lambda s: _task_key(s.task))


class _Stderr:
    def write(self, s):
        import sys
        return sys.stderr.write(s)

    def flush(self):
        import sys
        sys.stderr.flush()


def _task_key(task: str):
    major, _, minor = task.partition(".")
    return (int(major) if major.isdigit() else 99, int(minor) if minor.isdigit() else 99)


def results_json(summaries: list[TaskSummary]) -> dict:
    """Gradescope's results.json: total score and one entry per test."""
    tests = []
    for s in summaries:
        for t in s.tests:
            tests.append({"name": f"Task {t.task}: {t.nodeid.split('::', 1)[-1]}", "score": t.score,
                          "max_score": t.points, "output": t.message or t.outcome})
    return {"score": sum(s.points for s in summaries), "max_score": sum(s.max_points for s in summaries),
            "tests": tests}


def format_table(summaries: list[TaskSummary]) -> str:
    rows = [("task", "points", "status", "reason")]
    for s in summaries:
        rows.append((s.task, f"{s.points:g}/{s.max_points:g}", s.status, s.reason[:90]))
    total = sum(s.points for s in summaries), sum(s.max_points for s in summaries)
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(3)) + "  " + r[3] for r in rows]
    lines.insert(1, "-" * (sum(widths) + 12))
    lines.append(f"total: {total[0]:g} / {total[1]:g} points")
    return "\n".join(lines)


def write_results(path: Path, summaries: list[TaskSummary]) -> None:
    """Write results.json atomically (temporary file + rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(results_json(summaries), indent=2), encoding="utf-8")
    os.replace(tmp, path)
