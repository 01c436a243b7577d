"""The grade as a person reads it (a table) and as Gradescope reads it (results.json)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..io import atomic_open
from .verdict import wrap


def format_table(report, width: int | None = None) -> str:
    """One row per task — points, status, reason — with the reason wrapped, never cut, and the
    command that shows a failing task's full failure under it."""
    width = width or max(80, min(shutil.get_terminal_size((100, 24)).columns, 140))
    rows = [(s.task, f"{s.points:g}/{s.max_points:g}", s.status, s) for s in report.tasks]
    w_task = max([4] + [len(r[0]) for r in rows])
    w_pts = max([6] + [len(r[1]) for r in rows])
    w_status = max([6] + [min(len(r[2]), 24) for r in rows])
    indent = w_task + w_pts + w_status + 6
    lines = [f"{'task':<{w_task}}  {'points':<{w_pts}}  {'status':<{w_status}}  reason", "-" * min(width, 100)]
    for task, pts, status, summary in rows:
        reason = summary.reason
        text = wrap(reason, width - indent) if reason else [""]
        if summary.command and summary.status not in ("not started", "not run"):
            text.append(f"see it in full: {summary.command}")  # never wrapped: it is copied and pasted
        lines.append(f"{task:<{w_task}}  {pts:<{w_pts}}  {status:<{w_status}}  {text[0]}".rstrip())
        lines.extend(" " * indent + t for t in text[1:])
    total, most = sum(s.points for s in report.tasks), sum(s.max_points for s in report.tasks)
    done = sum(s.status == "passed" for s in report.tasks)
    lines.append(f"total: {total:g} / {most:g} points; {done} of {len(report.tasks)} tasks passed")
    for problem in report.problems:
        lines.append(f"problem: {problem}")
    if report.interrupted:
        lines.append("interrupted: the tasks above marked 'not run' were not graded")
    return "\n".join(lines)


def _test_output(test) -> str:
    if test.status == "passed":
        return "passed"
    return f"{test.status}: {test.message}" if test.message else test.status


def results_json(report) -> dict:
    """Gradescope's results.json: the total, an overall ``output`` (the table), one entry per test."""
    tests = []
    for s in report.tasks:
        for t in s.tests:
            tests.append({"name": f"Task {t.task}: {t.name}", "score": t.score, "max_score": t.points,
                          "status": "passed" if t.status == "passed" else "failed",
                          "output": _test_output(t), "visibility": "after_published" if t.hidden else "visible",
                          "extra_data": {"minilm_status": t.status, "task": t.task, "task_status": s.status}})
    return {"score": sum(s.points for s in report.tasks), "max_score": sum(s.max_points for s in report.tasks),
            "output": format_table(report, width=100), "tests": tests}


def write_results(path, report) -> None:
    """Write results.json atomically (a temporary file in the same folder, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "w", encoding="utf-8") as f:
        json.dump(results_json(report), f, indent=2)
