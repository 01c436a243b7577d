"""The graded tests as the grader knows them, before any student code runs: ``tests/graded/manifest.json``.

The parent of ``minilm grade`` (and the autograder) takes the list of graded tests, their tasks,
points and visibility from this file, never from a child: a child that reports a test the manifest
does not list, or points of its own, is not believed. Each entry also carries

* ``cpu_seconds`` — the CPU time the reference took for the test, measured with a cold numba cache
  (``tools/make_grading_manifest.py``; the autograder re-measures on the grading machine), from
  which the test's time limit is drawn: ``max(FLOOR, MARGIN × cpu_seconds)`` seconds of CPU;
* ``uses`` — the other tasks whose slots the test reaches through the library, so that a failure
  downstream of a task that did not pass says so instead of blaming the task under test.

CPU time, not wall-clock time, is what the limit counts: a busy machine slows a test's clock, not its
CPU time. A wall-clock limit, ``WALL_FACTOR`` times larger, still stops a test that sleeps or waits.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograd.errors import MiniLMError

PATH = Path("tests") / "graded" / "manifest.json"
MARGIN = 8.0  # × the reference's CPU time
FLOOR = 30.0  # CPU seconds: no test's limit is below this (a cold numba compile takes a few seconds)
FLOOR_AFTER_TIMEOUT = 5.0  # once a test of a task timed out, its siblings get max(this, MARGIN × reference)
WALL_FACTOR = 3.0  # wall-clock limit = WALL_FACTOR × CPU limit + WALL_SLACK (a loaded machine, a sleep)
WALL_SLACK = 60.0
TASK = re.compile(r"\d+\.(\d+|capstone)")


@dataclass(frozen=True)
class Entry:
    nodeid: str  # "tests/graded/test_task01_autograd.py::test_diamond_graph"
    task: str  # "1.1", "4.capstone"
    points: float
    hidden: bool = False
    cpu_seconds: float = 0.0  # the reference's, measured
    uses: tuple = field(default_factory=tuple)  # other tasks reached through the library: ("1.2", "3.3")

    @property
    def module(self) -> int:
        return int(self.task.split(".")[0])

    @property
    def file(self) -> str:
        return self.nodeid.split("::", 1)[0]

    def cpu_limit(self, fixed: float | None = None, after_timeout: bool = False) -> float:
        """Seconds of CPU this test may use: ``fixed`` if given (``--timeout``), else drawn from the
        reference's time; tighter for the siblings of a test that already timed out."""
        floor = FLOOR_AFTER_TIMEOUT if after_timeout else FLOOR
        measured = max(floor, MARGIN * self.cpu_seconds)
        if fixed is not None:
            return min(float(fixed), measured) if after_timeout else float(fixed)
        return measured


def wall_limit(cpu_limit: float) -> float:
    return WALL_FACTOR * cpu_limit + WALL_SLACK


def load(root: Path, path: Path | None = None, *, existing_only: bool = True) -> dict[str, Entry]:
    """The manifest's entries by nodeid, in file order. ``existing_only`` drops the entries whose
    test file is not under ``root`` (a student release has no held-back tests)."""
    root = Path(root)
    path = Path(path) if path is not None else root / PATH
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MiniLMError(f"{path}: the list of graded tests is missing (python tools/make_grading_manifest.py "
                          f"writes it in a full checkout)") from None
    except ValueError as e:
        raise MiniLMError(f"{path}: not valid JSON ({e})") from None
    out: dict[str, Entry] = {}
    for i, raw in enumerate(data.get("tests", [])):
        entry = _entry(raw, f"{path}: tests[{i}]")
        if existing_only and not (root / entry.file).is_file():
            continue
        out[entry.nodeid] = entry
    return out


def _entry(raw: dict, where: str) -> Entry:
    try:
        entry = Entry(nodeid=str(raw["nodeid"]), task=str(raw["task"]), points=float(raw["points"]),
                      hidden=bool(raw.get("hidden", False)), cpu_seconds=float(raw.get("cpu_seconds", 0.0)),
                      uses=tuple(str(u) for u in raw.get("uses", ())))
    except (KeyError, TypeError, ValueError) as e:
        raise MiniLMError(f"{where}: expected nodeid, task, points (and hidden, cpu_seconds, uses): {e}") from None
    if not TASK.fullmatch(entry.task) or entry.points <= 0 or entry.cpu_seconds < 0 or "::" not in entry.nodeid:
        raise MiniLMError(f"{where}: {raw!r} is not a graded test entry (task like 2.1, points > 0)")
    return entry


def dump(entries, measured_on: str) -> str:
    """The manifest's text: one test a line, so that a diff shows which tests changed."""
    lines = [json.dumps({"nodeid": e.nodeid, "task": e.task, "points": e.points, "hidden": e.hidden,
                         "cpu_seconds": round(e.cpu_seconds, 3), "uses": list(e.uses)}, ensure_ascii=False)
             for e in entries]
    head = json.dumps({"about": "the graded tests, their points and the reference's CPU time: written by "
                                "tools/make_grading_manifest.py, do not edit by hand",
                       "measured_on": measured_on})[:-1]
    return head + ', "tests": [\n' + ",\n".join(lines) + "\n]}\n"
