"""The grade as a person reads it (a table) and as Gradescope reads it (results.json)."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

from ..io import atomic_open
from .verdict import wrap

MAX_BYTES = 1_000_000  # results.json, whole: Gradescope shows it to the student
MAX_TOP_OUTPUT = 100_000  # characters of the top-level output


def format_table(report, width: int | None = None, visible_only: bool = False) -> str:
    """One row per task — points, status, reason — with the reason wrapped, never cut, and the
    command that shows a failing task's full failure under it. ``visible_only`` leaves out every
    held-back test (Gradescope's top-level output, which students see before grades are published)."""
    width = width or max(80, min(shutil.get_terminal_size((100, 24)).columns, 140))
    summaries = [_visible(s) for s in report.tasks] if visible_only else list(report.tasks)
    summaries = [s for s in summaries if s.tests]
    rows = [(s.task, f"{s.points:g}/{s.max_points:g}", s.status, s) for s in summaries]
    w_task = max([4] + [len(r[0]) for r in rows])
    w_pts = max([6] + [len(r[1]) for r in rows])
    w_status = max([6] + [min(len(r[2]), 24) for r in rows])
    indent = w_task + w_pts + w_status + 6
    lines = [f"{'task':<{w_task}}  {'points':<{w_pts}}  {'status':<{w_status}}  reason", "-" * min(width, 100)]
    for task, pts, status, summary in rows:
        reason = summary.reason
        text = wrap(reason, width - indent) if reason else [""]
        if summary.command and summary.status not in ("not started", "not run", "flagged"):
            text.append(f"see it in full: {summary.command}")  # never wrapped: it is copied and pasted
        lines.append(f"{task:<{w_task}}  {pts:<{w_pts}}  {status:<{w_status}}  {text[0]}".rstrip())
        lines.extend(" " * indent + t for t in text[1:])
    total, most = sum(s.points for s in summaries), sum(s.max_points for s in summaries)
    done = sum(s.status == "passed" for s in summaries)
    lines.append(f"total: {total:g} / {most:g} points; {done} of {len(summaries)} tasks passed")
    held = [t for s in report.tasks for t in s.tests if t.hidden]
    if visible_only and held:
        lines.append(f"and {len(held)} held-back tests ({sum(t.points for t in held):g} points), shown once grades "
                     f"are published")
    lines += [f"{label}: {text}" for label, text in remarks(report, flagged="FLAGGED for review")]
    if report.interrupted:
        lines.append("interrupted: the tasks above marked 'not run' were not graded")
    return "\n".join(lines)


def remarks(report, flagged: str) -> list[tuple[str, str]]:
    """What a grade says under its table, as ``(label, text)`` in the order every rendering prints it:
    each flag (labelled ``flagged``), each problem, each note. :func:`format_table` and
    ``markdown.format_markdown`` set them in their own type, and word an interruption each their own way."""
    return ([(flagged, flag) for flag in getattr(report, "flags", ())]  # reports the grader could not believe
            + [("problem", problem) for problem in report.problems]
            + [("note", note) for note in getattr(report, "notes", ())])


def _visible(summary):
    return dataclasses.replace(summary, tests=[t for t in summary.tests if not t.hidden])


def _test_output(test, limit: int) -> str:
    if test.flag:
        text = f"flagged: {test.flag} — 0 points, flagged for the instructor's review"
    elif test.status == "passed":
        text = "passed"
    else:
        text = f"{test.status}: {test.message}" if test.message else test.status
    return text if len(text) <= limit else text[:limit - 40] + f"\n… ({len(text) - limit + 40:,} characters cut)"


def results_json(report, output_limit: int = 2000) -> dict:
    """Gradescope's results.json (its "Autograder Specifications"): the total, the execution time, a
    top-level ``output`` that shows the visible tests only, and one entry per test, held-back tests
    with ``visibility: after_published``. The autograder's stdout stays hidden from students (it is
    for the instructor). Each test's ``output`` is cut to ``output_limit`` characters, and the file
    is kept under ``MAX_BYTES``."""
    while True:
        tests = []
        for s in report.tasks:
            for t in s.tests:
                tests.append({"name": f"Task {t.task}: {t.name}", "score": t.score, "max_score": t.points,
                              "status": "passed" if t.score == t.points else "failed",
                              "output": _test_output(t, output_limit),
                              "visibility": "after_published" if t.hidden else "visible",
                              "extra_data": {"task": t.task, "minilm_status": "flagged" if t.flag else t.status}})
        data = {"score": sum(s.points for s in report.tasks), "max_score": sum(s.max_points for s in report.tasks),
                "execution_time": round(report.seconds), "visibility": "visible", "stdout_visibility": "hidden",
                "output": format_table(report, width=100, visible_only=True)[:MAX_TOP_OUTPUT], "tests": tests}
        if len(json.dumps(data).encode("utf-8")) <= MAX_BYTES or output_limit <= 200:
            return data
        output_limit //= 2


def write_results(path, report, header: str = "") -> dict:
    """Write results.json atomically (a temporary file in the same folder, then a rename)."""
    data = results_json(report)
    if header:
        data["output"] = header + data["output"]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
    return data
