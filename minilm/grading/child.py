"""The child side of ``minilm grade``: run one task module's graded tests, report each on a pipe.

    python -m minilm.grading.child --impl exercises --module 3 --fd 5 --root KIT --canary FILE [--task 3.1] < RUN

The parent (``minilm.grading.runner``) starts this in a fresh process for one or more task modules, reads one
JSON line per event from file descriptor ``--fd``, and enforces the time limit itself: a test that
hangs, segfaults or aborts takes only this process down, and the parent starts a new one for the
tests that are left. Its stdin is ``{"run": [nodeid, ...]}``: the tests to run (others are
deselected); the ``--canary`` file, the grader's own checks, runs after them.

Nothing this process says is taken on trust: the parent checks it against the manifest and the
canary checks (``minilm/grading/runner.py``).

Events: ``{"event": "collected", "tests": [...]}``, ``{"event": "start", "nodeid": ...}``,
``{"event": "result", "nodeid": ..., "status": ..., "message": ...}``, ``{"event": "done"}``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

import pytest

TASK_RE = re.compile(r"^task(\d+)_(\d+|capstone)$")
MAX_MESSAGE = 4000  # characters: a longer assertion message (a dumped array) is cut here


def _scrub_foreign_kits(root: Path) -> None:
    """Import minilm, autograd, exercises and solutions from ``root`` only.

    An editable install of another checkout (or a path entry holding one) would otherwise let this
    process import *that* checkout's ``solutions`` — in a student release, or in an autograder copy
    that leaves out the reference of the module being graded.
    """
    root = root.resolve()

    def inside(path) -> bool:
        try:
            Path(path).resolve().relative_to(root)
            return True
        except (ValueError, OSError):
            return False

    kit = ("minilm", "autograd", "exercises", "solutions")
    keep = []
    for finder in sys.meta_path:
        mapping = getattr(sys.modules.get(getattr(finder, "__module__", ""), None), "MAPPING", None)
        if isinstance(mapping, dict) and any(k in mapping and not inside(mapping[k]) for k in kit):
            continue  # setuptools' editable finder of another checkout
        keep.append(finder)
    sys.meta_path[:] = keep
    sys.path[:] = [str(root)] + [p for p in sys.path if os.path.realpath(p or ".") != str(root)
                                 and not any((Path(p or ".") / k / "__init__.py").is_file() for k in kit)]


class Reporter:
    """A pytest plugin that writes one JSON line per event to the parent's pipe."""

    def __init__(self, out, modules: set, task: str | None, run: set, canary: str):
        self.out, self.modules, self.task, self.run = out, modules, task, run  # modules: {"1", "3"}
        self.canary = os.path.realpath(canary)
        self.current: dict[str, dict] = {}

    def send(self, **event) -> None:
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()

    # ---- collection ------------------------------------------------------------------------
    def pytest_collectreport(self, report):
        if report.failed:
            self.send(event="collect_error", nodeid=report.nodeid, message=str(report.longrepr)[-3000:])

    def pytest_collection_modifyitems(self, config, items):
        keep, drop = [], []
        checks = []
        for item in items:
            if os.path.realpath(str(item.path)) == self.canary:
                checks.append(item)
                continue
            task = _task_of(item)
            if task is None or task.split(".")[0] not in self.modules or (self.task and task != self.task):
                drop.append(item)
                continue
            (keep if item.nodeid in self.run else drop).append(item)  # a test of one's own: not graded
        keep += checks  # last: they vouch for the report of everything before them
        listed = [{"nodeid": item.nodeid, "task": _task_of(item)} for item in keep]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
        self.send(event="collected", tests=listed)

    # ---- one test ----------------------------------------------------------------------------
    def pytest_runtest_logstart(self, nodeid, location):
        self.current[nodeid] = {"status": "passed", "message": "", "exc": "", "lines": 0, "t0": time.time()}
        self.send(event="start", nodeid=nodeid)

    def pytest_runtest_makereport(self, item, call):
        state = self.current.get(item.nodeid)
        if state is None or call.excinfo is None or state["exc"]:
            return
        exc = call.excinfo
        if exc.errisinstance(BaseException) and exc.typename == "Skipped":
            return
        state["exc"] = exc.typename
        state["message"] = _message(exc, item.nodeid)

    def pytest_runtest_logreport(self, report):
        state = self.current.get(report.nodeid)
        if state is None:
            return
        # each phase's report carries the output captured so far: the last one has all of it
        state["lines"] = max(state["lines"], (report.capstdout + report.capstderr).count("\n"))
        if report.failed:
            state["status"] = "failed"
        elif report.skipped and report.when != "teardown" and state["status"] == "passed":
            state["status"] = "skipped"
            if isinstance(report.longrepr, tuple):
                state["message"] = str(report.longrepr[2])

    def pytest_runtest_logfinish(self, nodeid, location):
        state = self.current.pop(nodeid, None)
        if state is not None:
            self.send(event="result", nodeid=nodeid, outcome=state["status"], exc=state["exc"],
                      message=state["message"], lines=state["lines"], duration=time.time() - state["t0"])

    def pytest_sessionfinish(self, session, exitstatus):
        self.send(event="done", exitstatus=int(exitstatus))


def _task_of(item) -> str | None:
    for mark in item.iter_markers():
        m = TASK_RE.match(mark.name)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return None


def _message(excinfo, nodeid: str) -> str:
    """The exception's own text (cut to ``MAX_MESSAGE`` characters); for errors raised by student
    code, where in exercises/ it happened."""
    return _message_text(excinfo, nodeid)[:MAX_MESSAGE]


def _message_text(excinfo, nodeid: str) -> str:
    value = excinfo.value
    if isinstance(value, SyntaxError):
        where = f"{_short(value.filename)}, line {value.lineno}" if value.filename else "unknown file"
        code = (value.text or "").strip()
        return f"{type(value).__name__} in {where}: {value.msg}" + (f": {code}" if code else "")
    text = str(value)
    if type(value).__name__ == "Failed":  # pytest.fail("..."): the test's own words
        return text
    if isinstance(value, (AssertionError, NotImplementedError)):
        return text if isinstance(value, AssertionError) else f"NotImplementedError: {text}"
    if isinstance(value, RecursionError):
        text += (" — your code calls itself without end; if it calls the engine's own op (F.softmax, "
                 "F.layer_norm, F.cross_entropy, F.gelu), that op runs on your slot while its tests run: "
                 "compute it with NumPy instead")
    where = ""
    for frame in reversed(traceback.extract_tb(value.__traceback__)):
        if "exercises" in Path(frame.filename).parts or "solutions" in Path(frame.filename).parts:
            where = f" (at {_short(frame.filename)}, line {frame.lineno}: {(frame.line or '').strip()})"
            break
    return f"{type(value).__name__}: {text}{where}"


def _short(filename: str) -> str:
    parts = Path(filename).parts
    for anchor in ("exercises", "solutions", "tests"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor):])
    return filename


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--impl", required=True)
    p.add_argument("--module", required=True, help="a task module, or several: 1,3,5")
    p.add_argument("--task")
    p.add_argument("--fd", type=int, required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--canary", required=True, help="the grader's own checks, run last")
    args = p.parse_args(argv)
    root = Path(args.root)
    _scrub_foreign_kits(root)
    out = os.fdopen(args.fd, "w", encoding="utf-8", buffering=1)
    run = set(json.loads(sys.stdin.read() or "{}").get("run", []))  # the tests to grade
    sys.stdin = open(os.devnull)
    graded = root / "tests" / "graded"
    modules = {str(int(m)) for m in args.module.split(",")}
    files = sorted(str(f) for m in modules for f in graded.rglob(f"test_task{int(m):02d}_*.py"))
    if not files:
        out.write(json.dumps({"event": "collected", "tests": []}) + "\n")
        return 0
    pytest_args = [*files, args.canary, "--impl", args.impl, "-p", "no:cacheprovider", "-p", "no:randomly",
                   "--rootdir", str(root), "-c", str(root / "setup.cfg"), "-q", "-rN",
                   "-o", "addopts=--strict-markers", "-m", "slow or not slow"]
    return int(pytest.main(pytest_args, plugins=[Reporter(out, modules, args.task, run, args.canary)]))


if __name__ == "__main__":
    sys.exit(main())
