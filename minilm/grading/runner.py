"""The parent side of ``minilm grade``: child processes for the task modules, a time limit per test.

This process never imports a student's code. It starts ``minilm.grading.child`` for a group of task
modules (one group per job; one module per group when each module has its own kit copy), reads the
child's events from a pipe, and

* kills the child when one test runs past ``timeout`` seconds (a numba loop ignores signals; a
  SIGKILL does not) — that test is *timed out*, the rest of its task *not run*;
* notices when the child dies in the middle of a test (a segfault in a kernel, ``os.abort``, an
  out-of-memory kill) — that test is *crashed*, with the signal;

and in both cases starts a new child for the tests that are left, so one broken task costs only
itself. The groups run ``jobs`` at a time.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .verdict import (BLOCKED, CRASHED, ERROR, FAILED, NOT_RUN, PASSED, TIMED_OUT, TestResult,
                      classify_exception, explain)

STARTUP_LIMIT = 300.0  # seconds for a child to import and collect (numba's first compile is slow)


class ModuleRun:
    """Grade task modules (one, or a few in one process): start children until every one of their
    tests has a result."""

    def __init__(self, modules, impl: str, task: str | None, *, root: Path, timeout: float,
                 preexec=None, env=None, verbose: bool = False, stop: threading.Event | None = None):
        self.modules = [modules] if isinstance(modules, int) else sorted(modules)
        self.label = ("module " if len(self.modules) == 1 else "modules ") + ", ".join(map(str, self.modules))
        self.impl, self.task, self.root = impl, task, Path(root)
        self.timeout, self.preexec, self.env, self.verbose = timeout, preexec, env, verbose
        self.stop = stop or threading.Event()
        self.tests: dict[str, TestResult] = {}  # nodeid -> result, in collection order
        self.problem = ""  # a failure outside any test (collection, start-up)
        self.proc: subprocess.Popen | None = None
        self.given_up: set[str] = set()  # siblings of a timed-out test: not run, not retried

    # ---- the loop over children ------------------------------------------------------------------
    def run(self) -> "ModuleRun":
        stalled = 0
        while not self.stop.is_set():
            done = {n for n, t in self.tests.items() if t.status != NOT_RUN} | self.given_up
            if self.tests and len(done) == len(self.tests):
                break
            finished = self._one_child(done)
            if finished or self.problem:
                break
            now_done = {n for n, t in self.tests.items() if t.status != NOT_RUN} | self.given_up
            stalled = stalled + 1 if now_done == done else 0
            if stalled >= 2:  # the child dies between tests, twice with no progress
                self.problem = (f"the test process of {self.label} keeps dying outside any test "
                                f"(exit code {self.proc.returncode})")
                break
        return self

    def _one_child(self, done: set) -> bool:
        """Run one child, skipping the tests in ``done`` (sent on its stdin, so that a child running
        as another user needs no file of ours); True when it reported 'done'."""
        reader = _Lines(self._start_child(done))
        try:
            return self._follow_child(reader)
        finally:
            reader.close()
            if self.proc.poll() is None:
                self._kill()

    def _start_child(self, done: set) -> int:
        """Start ``minilm.grading.child`` as ``self.proc``; returns the pipe it writes its events to."""
        read_fd, write_fd = os.pipe()
        cmd = [sys.executable, "-m", "minilm.grading.child", "--impl", self.impl, "--module", ",".join(map(str, self.modules)),
               "--fd", str(write_fd), "--root", str(self.root)]
        if self.task:
            cmd += ["--task", self.task]
        env = {k: v for k, v in os.environ.items() if k not in ("MINILM_IMPL", "PYTEST_ADDOPTS", "PYTHONPATH")}
        env.update({"PYTHONPATH": str(self.root), "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"})
        env.update(self.env or {})
        out = sys.stderr.fileno() if self.verbose else subprocess.DEVNULL  # --verbose: pytest's own output
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdin=subprocess.PIPE, stdout=out,
                                         stderr=subprocess.STDOUT,
                                         pass_fds=(write_fd,), start_new_session=True, preexec_fn=self.preexec)
        finally:
            os.close(write_fd)
        try:
            self.proc.stdin.write("".join(n + "\n" for n in sorted(done)).encode("utf-8"))
            self.proc.stdin.close()
        except BrokenPipeError:  # the child died at once: its exit code tells below
            pass
        return read_fd

    def _follow_child(self, reader: "_Lines") -> bool:
        """Read the child's events until it ends, hangs past a limit, or we are stopped."""
        current, deadline = None, time.monotonic() + STARTUP_LIMIT
        finished = False
        while True:
            if self.stop.is_set():
                self._kill()
                return False
            line = reader.next_line(max(0.0, min(deadline - time.monotonic(), 0.5)))
            if line is None:  # no event yet
                if time.monotonic() < deadline:
                    continue
                self._kill()
                if current is None:
                    self.problem = (f"the graded tests of {self.label} did not start within "
                                    f"{STARTUP_LIMIT:.0f} s (importing or collecting hung)")
                else:
                    self._timed_out(current)
                return False
            if line == "":  # EOF: the child is gone
                code = self.proc.wait()
                if self.stop.is_set():  # we killed it (Ctrl-C): its test is not run, not crashed
                    return False
                if current is not None:
                    self._crashed(current, code)
                elif not finished and not self.tests:
                    self.problem = f"the graded tests of {self.label} could not start (exit code {code})"
                return finished
            current, deadline, finished = self._on_event(json.loads(line), current, deadline, finished)

    def _on_event(self, event: dict, current, deadline: float, finished: bool):
        """Take one event; returns the test running now, its deadline, and whether the child said 'done'."""
        kind = event["event"]
        if kind == "collected":
            for t in event["tests"]:
                if t["nodeid"] not in self.tests:
                    self.tests[t["nodeid"]] = TestResult(t["nodeid"], t["task"], t["points"], t["hidden"])
            deadline = time.monotonic() + STARTUP_LIMIT
        elif kind == "collect_error":
            self.problem = f"could not collect {event['nodeid']}:\n{event['message']}"
        elif kind == "start":
            current, deadline = event["nodeid"], time.monotonic() + self.timeout
        elif kind == "result":
            self._record(event)
            current, deadline = None, time.monotonic() + STARTUP_LIMIT
        elif kind == "done":
            finished = True
        return current, deadline, finished

    # ---- what became of a test -----------------------------------------------------------------------
    def _record(self, event: dict) -> None:
        test = self.tests.get(event["nodeid"])
        if test is None:
            return
        test.printed_lines, test.duration = event.get("lines", 0), event.get("duration", 0.0)
        outcome = event["outcome"]
        if outcome == "passed":
            test.status = PASSED
            return
        if outcome == "skipped":
            test.status, test.message = FAILED, f"skipped: {event['message']}"
            return
        status, blocked_by = classify_exception(event.get("exc", ""), event.get("message", ""), test.task)
        test.status, test.blocked_by = status, blocked_by
        message = explain(event.get("message", "")) or f"{event.get('exc') or 'the test'} failed"
        if status == BLOCKED:
            message = (f"needs Task {blocked_by}, which is still a stub: {message.splitlines()[0]}")
        elif status == ERROR:
            message = f"{message}\n(every test that uses this file fails until it imports)"
        test.message = message

    def _timed_out(self, nodeid: str) -> None:
        test = self.tests[nodeid]
        test.status, test.duration = TIMED_OUT, self.timeout
        test.message = (f"still running after {self.timeout:g} s (the limit; --timeout changes it): "
                        f"an endless loop, or a loop that never reaches its exit condition?")
        for other in self.tests.values():  # the same hang would cost each sibling the full limit again
            if other.task == test.task and other.status == NOT_RUN:
                other.message = f"not run: {test.name} of this task timed out"
                self.given_up.add(other.nodeid)

    def _crashed(self, nodeid: str, code: int) -> None:
        test = self.tests[nodeid]
        test.status = CRASHED
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            why = {"SIGSEGV": "a segmentation fault: memory read or written out of bounds",
                   "SIGABRT": "aborted", "SIGKILL": "killed (out of memory?)",
                   "SIGBUS": "a bus error: memory read or written out of bounds"}.get(name, name)
            test.message = f"the test process died with {name} ({why})"
        else:
            test.message = f"the test process exited with code {code} in the middle of this test (sys.exit / os._exit?)"
        test.message += (f". If it runs a numba kernel (which does no bounds checks), NUMBA_DISABLE_JIT=1 "
                         f"pytest --impl {self.impl} -m task{test.task.replace('.', '_')} runs it as plain "
                         f"Python and shows the IndexError.")

    def _kill(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self.proc.kill()
        self.proc.wait()


class _Lines:
    """Line reader over a pipe with a timeout (select), so a silent child cannot block us."""

    def __init__(self, fd: int):
        self.fd, self.buf = fd, b""

    def next_line(self, timeout: float):
        """A decoded line; '' at end of file; None when nothing came within ``timeout``."""
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if self.buf:
                    line, self.buf = self.buf, b""
                    return line.decode("utf-8", "replace")
                return ""
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8", "replace") or self.next_line(timeout)

    def close(self):
        os.close(self.fd)
