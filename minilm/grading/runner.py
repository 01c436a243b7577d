"""The parent side of ``minilm grade``: child processes for the task modules, a time limit per test.

This process never imports a student's code. It knows the graded tests from the manifest (their
tasks, points and time limits), starts ``minilm.grading.child`` for a group of task modules, reads
the child's events from a pipe, and believes only what fits the manifest:

* a test the manifest does not list, a result for a test that is not running, a test reported
  twice, an oversized or garbled event: the child's report is forged — the run is *flagged*;
* the grader's own checks (``canary.py``) run last in every child: if the one that must fail is
  reported passed, or the one that must pass failed, the run is *flagged*. A child that hangs in
  them is treated like one that died between tests (below): what it ran is graded again;
* a test past its CPU limit (``manifest.Entry.cpu_limit``) or its wall-clock limit is killed —
  *timed out* — and a child that dies in a test (a segfault in a kernel, ``os.abort``) leaves that
  test *crashed*. Either costs only that test: a new child re-runs the rest (the results of a child
  that did not reach its closing checks are not kept, so they are graded again).
* a numba kernel does no bounds checks, so one task's out-of-bounds write can kill the process
  later, in an innocent test of another task or between tests. So a test that dies after tests of
  other tasks ran in its process is not judged there: its task and theirs are *set apart* — from
  then on each runs in children of its own, where a kernel can only break its own task — and it is
  graded again in its task's child. A test that dies where only its own task ran (seen even as the
  first test of a process, under load) runs again alone and gets what it does there
  (``MAX_RERUNS`` such re-runs per run, then crashes are believed at once).
* a child that dies (or hangs in the closing checks) outside any test proves nothing it ran: the
  next child runs half as many tests, until a test that breaks its process alone is *crashed*.
* a child killed by a signal before it has listed its tests (the out-of-memory killer, a stray
  kill) is started once more; only a second such death says the module "could not start".

After each child, its process group and any orphan it left (this process is a child subreaper on
Linux) are killed, so no daemon outlives its module or keeps its pipe open.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import canary
from .manifest import Entry, wall_limit
from .processes import _LIVE, MAX_EVENT, _cpu_seconds, _Lines, kill_orphans, start_child
from .verdict import (MAX_MESSAGE, NOT_RUN, TestResult, crashed, record_result, task_key, timed_out,
                      writer_note)

STARTUP_LIMIT = 300.0  # seconds for a child to import and collect (numba's first compile is slow)
MAX_RERUNS = 4  # tests that crashed after others re-run alone, at most this many per run
CHECK_LIMIT = 30.0  # seconds of CPU for one of the grader's own checks (under --timeout: at least 5)


class ModuleRun:
    """Grade task modules (one, or a few in one process): start children until every one of their
    tests has a final result, or the run is flagged."""

    def __init__(self, modules, impl: str, task: str | None, *, root: Path, entries: dict[str, Entry],
                 timeout: float | None = None, preexec=None, env=None, verbose: bool = False,
                 stop: threading.Event | None = None, on_student: set | None = None, label: str = ""):
        self.modules = [modules] if isinstance(modules, int) else sorted(modules)
        self.label = label or ("module " if len(self.modules) == 1 else "modules ") + ", ".join(map(str, self.modules))
        self.impl, self.task, self.root = impl, task, Path(root)
        self.timeout, self.preexec, self.env, self.verbose = timeout, preexec, env, verbose
        self.stop = stop or threading.Event()
        self.entries = {n: e for n, e in entries.items() if e.module in self.modules and (not task or e.task == task)}
        self.tests: dict[str, TestResult] = {n: TestResult(n, e.task, e.points, e.hidden, uses=e.uses)
                                             for n, e in self.entries.items()}
        self.on_student = set(on_student or ())  # modules whose slots the library runs on student code here
        self.problem = ""  # a failure outside any test (collection, start-up)
        self.flags: list[str] = []  # why this run's report cannot be believed
        self.proc: subprocess.Popen | None = None
        self.timed_out_tasks: set[str] = set()
        self.child_seconds = 0.0
        self.batch: int | None = None  # how many of the tests left the next child runs (None: all)
        self.rerun: str | None = None  # the test the next child runs alone (it crashed after others)
        self.rerun_done: set[str] = set()
        self._rerun_why: dict[str, tuple] = {}  # that test -> (exit code, the tasks that ran before it, first?)
        self.apart: list[str] = []  # tasks that run in children of their own (a test died beside them)
        self._regrouped = False  # the last child set a task apart, or died at start: the next one runs
        # differently or again, which counts as progress (no narrowing)
        self._check_hung = False  # the last child hung in the grader's closing checks
        self._start_retried = False  # a child was killed before listing its tests, and started again
        self.notes: list[str] = []  # what the report says beside the table (tasks only: no test names)

    # ---- the loop over children ------------------------------------------------------------------
    def run(self) -> "ModuleRun":
        while not self.stop.is_set() and not self.flags:
            done = {n for n, t in self.tests.items() if t.status != NOT_RUN}
            if len(done) == len(self.tests):
                break
            self._regrouped = False
            finished = self._one_child(done)
            if finished or self.problem:
                break
            progress = self._regrouped or {n for n, t in self.tests.items() if t.status != NOT_RUN} != done
            if not progress and not self.rerun and not self._narrow(len(self.tests) - len(done)):
                break  # (after progress a narrowed batch stays narrow until its culprit is found)
        if self.flags:
            for t in self.tests.values():
                t.flag = self.flags[0]
        return self

    def _narrow(self, left: int) -> bool:
        """The child died outside any test and nothing it ran counts: a test before left the process
        broken (an out-of-bounds write kills it later, between tests or at exit). The next child runs
        half as many tests; a test that leaves the process dead when it runs alone is *crashed*.
        False when there is nothing left to try."""
        if self.batch != 1:
            self.batch = max(1, (self.batch or left) // 2)
            return True
        if not self._ran:  # the one test never started: the module itself does not load
            self.problem = (f"the test process of {self.label} keeps dying outside any test "
                            f"(exit code {self.proc.returncode})")
            return False
        code = self.proc.returncode if self.proc.returncode is not None else -9
        crashed(self.tests[self._ran[0]], code, self.impl, after=True, hung=self._check_hung)
        self.batch = None
        return True

    def _one_child(self, done: set) -> bool:
        """Run one child over the tests not in ``done``; True when it finished them all."""
        # the checks live inside the kit (a folder pytest never collects by itself), so that pytest
        # looks for conftest.py files only there and not in a shared folder such as /tmp
        (self.root / ".grading").mkdir(exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="checks-", dir=self.root / ".grading"))
        folder.chmod(0o755)
        scratch = Path(tempfile.mkdtemp(prefix="minilm-grade-"))  # the child's TMPDIR, removed after it
        try:
            first_task = min((self.entries[n].task for n in self.tests if n not in done), key=task_key,
                             default=f"{self.modules[0]}.1")
            path, checks = canary.write(folder, self.modules[0], "task" + first_task.replace(".", "_"))
            reader = _Lines(self._start_child(done, path, scratch))
            t0 = time.monotonic()
            try:
                return self._follow_child(reader, checks)
            finally:
                reader.close()
                self._kill()
                self.child_seconds += time.monotonic() - t0
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(scratch, ignore_errors=True)

    def _start_child(self, done: set, canary_file: Path, scratch: Path) -> int:
        """Start ``minilm.grading.child`` as ``self.proc``; returns the pipe it writes its events to.
        The tests it is to run go on its stdin (a child running as another user needs no file of ours)."""
        read_fd, write_fd = os.pipe()
        cmd = [sys.executable, "-m", "minilm.grading.child", "--impl", self.impl, "--module",
               ",".join(map(str, self.modules)), "--fd", str(write_fd), "--root", str(self.root),
               "--canary", str(canary_file)]
        if self.task:
            cmd += ["--task", self.task]
        env = {k: v for k, v in os.environ.items() if k not in ("MINILM_IMPL", "PYTEST_ADDOPTS", "PYTHONPATH")}
        env.update({"PYTHONPATH": str(self.root), "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg",
                    "TMPDIR": str(scratch), "MINILM_GRADING_CHILD": "1"})
        env.update(self.env or {})
        out = sys.stderr.fileno() if self.verbose else subprocess.DEVNULL  # --verbose: pytest's own output
        try:
            self.proc = start_child(cmd, cwd=self.root, env=env, stdin=subprocess.PIPE, stdout=out,
                                    stderr=subprocess.STDOUT, pass_fds=(write_fd,), start_new_session=True,
                                    preexec_fn=self.preexec)
        finally:
            os.close(write_fd)
        todo = self._todo(done)
        try:
            self.proc.stdin.write(json.dumps({"run": todo}).encode("utf-8"))
            self.proc.stdin.close()
        except BrokenPipeError:  # the child died at once: its exit code tells below
            pass
        return read_fd

    def _todo(self, done: set) -> list[str]:
        """The tests the next child runs: a crashed test alone, or the first ``batch`` of those left —
        of the tasks not set apart, or else of the first task set apart that has tests left."""
        if self.rerun:
            todo, self.rerun = [self.rerun], None
            self.rerun_done.add(todo[0])
            return todo
        left = sorted(n for n in self.tests if n not in done)
        shared = [n for n in left if self.tests[n].task not in self.apart]
        if not shared:
            task = next(t for t in self.apart if any(self.tests[n].task == t for n in left))
            shared = [n for n in left if self.tests[n].task == task]
        return shared[:self.batch]

    def _follow_child(self, reader: "_Lines", checks: list) -> bool:
        """Read the child's events until it ends, runs past a limit, forges, or we are stopped."""
        self._current = None
        self._pending: dict[str, dict] = {}  # results of this child, kept once its closing checks pass
        self._checks = {c.name: c for c in checks}
        self._seen_checks: dict[str, str] = {}
        self._listed: set[str] = set()
        self._ran: list[str] = []  # the graded tests this child started, in order
        self._finished = False
        self._check_hung = False
        self._deadline = time.monotonic() + STARTUP_LIMIT
        while True:
            if self.stop.is_set():
                return False
            line = reader.next_line(0.25)
            if line is None:  # nothing yet: is the test within its limits, is the child alive?
                if self._over_limit() or (self.proc.poll() is not None and not reader.ready(0.05)):
                    return self._ended(self.proc.poll())
                continue
            if line == "":
                return self._ended(self.proc.wait())
            if isinstance(line, bytes):
                return self._forged(f"sent an event of over {MAX_EVENT // 1024} KB on the report channel")
            try:
                event = json.loads(line)
                kind = event["event"]
            except (ValueError, TypeError, KeyError):
                return self._forged(f"sent something that is not an event on the report channel: {line[:80]!r}")
            if not self._on_event(kind, event):
                return False

    def _on_event(self, kind: str, event: dict) -> bool:
        """Take one event; False when the child's report can no longer be believed."""
        if kind == "collected":
            names = [str(t.get("nodeid")) for t in event.get("tests", []) if isinstance(t, dict)]
            extra = [n for n in names if n not in self.entries and not self._check_of(n)]
            if extra:
                return self._forged(f"reported a test the grader does not know: {extra[0]}")
            self._listed = set(names)
            for n, t in self.tests.items():
                if t.status == NOT_RUN and n not in self._listed and self.task in (None, t.task):
                    t.message = "not collected: its test file did not load (see the file's error above)"
            self._deadline = time.monotonic() + STARTUP_LIMIT
        elif kind == "collect_error":
            self.problem = f"could not collect {event.get('nodeid')}:\n{str(event.get('message'))[:MAX_MESSAGE]}"
        elif kind == "start":
            nodeid = event.get("nodeid")
            if nodeid in self._pending or nodeid in self._seen_checks or self._current is not None or (
                    nodeid not in self.tests and not self._check_of(nodeid)) or (
                    nodeid in self.tests and self.tests[nodeid].status != NOT_RUN):
                return self._forged(f"started a test out of turn: {nodeid}")
            self._current = nodeid
            if nodeid in self.tests:
                self._ran.append(nodeid)
            self._started, self._cpu0 = time.monotonic(), _cpu_seconds(self.proc.pid)
            entry = self.entries.get(nodeid)
            self._cpu_limit = (entry.cpu_limit(self.timeout, entry.task in self.timed_out_tasks) if entry else
                               CHECK_LIMIT if self.timeout is None else min(CHECK_LIMIT, max(5.0, self.timeout)))
            self._deadline = self._started + wall_limit(self._cpu_limit)
        elif kind == "result":
            nodeid = event.get("nodeid")
            if nodeid != self._current:
                return self._forged(f"reported a result for a test that was not running: {nodeid}")
            event["cpu"] = _cpu_seconds(self.proc.pid) - self._cpu0
            check = self._check_of(nodeid)
            if check is not None:
                self._seen_checks[check.name] = str(event.get("outcome"))
            else:
                self._pending[nodeid] = event
            self._current, self._deadline = None, time.monotonic() + STARTUP_LIMIT
        elif kind == "done":
            self._finished = True
        else:
            return self._forged(f"sent an unknown event {kind!r}")
        return True

    def _check_of(self, nodeid) -> "canary.Canary | None":
        return next((c for c in self._checks.values() if isinstance(nodeid, str) and c.matches(nodeid)), None)

    def _over_limit(self) -> bool:
        now = time.monotonic()
        if self._current is None:
            if now > self._deadline:
                if not self._listed:
                    self.problem = (f"the graded tests of {self.label} did not start within "
                                    f"{STARTUP_LIMIT:.0f} s (importing or collecting hung)")
                return True
            return False
        cpu = _cpu_seconds(self.proc.pid) - self._cpu0
        if cpu > self._cpu_limit or now > self._deadline:
            test = self.tests.get(self._current)
            if test is None:  # it hung in the grader's own closing checks: a process broken by a test before
                self._check_hung = True  # (or a student's code that makes them hang): nothing it ran counts
            else:
                timed_out(test, cpu, now - self._started, self._cpu_limit, self.timeout)
                self.timed_out_tasks.add(test.task)
            return True
        return False

    def _ended(self, code) -> bool:
        """The child is gone (or was stopped for a limit): keep what it proved; True if it finished."""
        self._kill()
        if self.stop.is_set():
            return False
        current = self._current
        if current is not None and current in self.tests and self.tests[current].status == NOT_RUN:
            code = code if code is not None else -9
            own = self.tests[current].task
            ran = [n for n in self._ran[:self._ran.index(current)]  # a stub's test runs no kernel
                   if "NotImplementedError" not in str(self._pending.get(n, {}).get("exc", ""))]
            before = sorted({self.tests[n].task for n in ran}, key=task_key)
            others = [t for t in before if t != own]
            if others and self._set_apart([own] + others):  # another task's write? judge it away from them
                self._rerun_why.setdefault(current, (code, others, False))
            elif current not in self.rerun_done and len(self.rerun_done) < MAX_RERUNS:
                self.rerun = current  # does it die alone too, or was it its own task's earlier write?
                self._rerun_why.setdefault(current, (code, before, self._ran[:1] == [current]))
            else:
                crashed(self.tests[current], code, self.impl, alone=current in self.rerun_done)
        if not self._finished:
            if current is None and not self._listed and not self.problem:
                if code is not None and code < 0 and not self._start_retried:
                    # killed by a signal before it listed its tests (out of memory, a stray kill): once
                    # more, the same tests, so that a machine's hiccup does not cost a module's points
                    self._start_retried = self._regrouped = True
                    return False
                self.problem = f"the graded tests of {self.label} could not start (exit code {code})"
            return False  # its other results are not kept: they are graded again by the next child
        if self.problem:  # a test file did not load: pytest ran nothing, the closing checks included
            return False
        wrong = [c for c in self._checks.values()
                 if self._seen_checks.get(c.name) != ("passed" if c.must_pass else "failed")]
        if wrong:
            c = wrong[0]
            seen = self._seen_checks.get(c.name, "never reported")
            self._forged(f"the grader's own check {c.name}, which must {'pass' if c.must_pass else 'fail'}, "
                         f"was reported {seen}: the test report was tampered with")
            return False
        for nodeid, event in self._pending.items():
            record_result(self.tests[nodeid], event)
            if nodeid in self._rerun_why:  # it died once, and alone it did not
                code, before, first = self._rerun_why.pop(nodeid)
                note = writer_note(self.tests[nodeid], code, before, first, alone=nodeid in self.rerun_done,
                                   impl=self.impl)
                if note not in self.notes:
                    self.notes.append(note)
        return all(t.status != NOT_RUN for t in self.tests.values())

    def _set_apart(self, tasks: list[str]) -> bool:
        """Run these tasks in children of their own from now on; True if one was not already."""
        new = [t for t in tasks if t not in self.apart]
        self.apart += new
        self._regrouped = self._regrouped or bool(new)
        return bool(new)

    def _forged(self, why: str) -> bool:
        self.flags.append(f"{self.label}: the test process {why}" if not why.startswith("the grader") else
                          f"{self.label}: {why}")
        self._kill()
        return False

    def _kill(self) -> None:
        """End the child, its process group, and any orphan of it that this process adopted."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        _LIVE.discard(self.proc.pid)
        kill_orphans()

