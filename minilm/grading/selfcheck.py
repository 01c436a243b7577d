"""The self-check, ``pytest --impl exercises -m task5_1``, with the grader's time limits and crash reports.

A student's endless loop would otherwise hang pytest with no word, and a numba kernel that writes out
of bounds would kill it before its summary. So when pytest runs on ``exercises/`` the top-level
conftest.py hands the run to :func:`supervise`: the same command runs again in a child process (its
output goes straight to the terminal), whose plugin (:class:`Beacon`) tells this process, on a pipe,
when each test starts and ends. This process applies each graded test's limit from the manifest —
CPU seconds, as ``minilm grade`` does — and when a test runs past it, or the child dies in it, says
which test, why and what to try, then carries on with the tests that are left in a new child.

``MINILM_NO_LIMIT=1`` (or ``--pdb``/``--trace``, which wait for you) runs pytest as it is.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import manifest
from .processes import _cpu_seconds, _Lines, describe_crash

ENV = "MINILM_SELFCHECK_FD"


def wanted(config) -> bool:
    """Supervise this run? Only the student's code under plain pytest, not inside a grader's child."""
    if os.environ.get(ENV) or os.environ.get("MINILM_GRADING_CHILD") or os.environ.get("MINILM_NO_LIMIT"):
        return False
    opt = config.option
    if getattr(opt, "usepdb", False) or getattr(opt, "trace", False) or getattr(opt, "collectonly", False):
        return False
    return getattr(config, "_minilm_impl", None) == "exercises" or (
        (config.getoption("--impl") or os.environ.get("MINILM_IMPL")) == "exercises")


class Beacon:
    """(in the child) Write ``start NODEID`` and ``end NODEID OUTCOME`` lines on the supervisor's pipe."""

    def __init__(self, fd: int):
        self.out = os.fdopen(fd, "w", buffering=1)
        self.failed: set[str] = set()

    def pytest_runtest_logstart(self, nodeid, location):
        self.out.write(f"start {nodeid}\n")

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed.add(report.nodeid)

    def pytest_runtest_logfinish(self, nodeid, location):
        self.out.write(f"end {'failed' if nodeid in self.failed else 'done'} {nodeid}\n")


def supervise(config) -> int:
    """Run this pytest command in children under the limits; returns the exit code."""
    root = Path(str(config.rootpath))
    try:
        entries = manifest.load(root)
    except Exception:  # no manifest (a kit of one's own): the floor limit for every test
        entries = {}
    args = list(config.invocation_params.args)
    cwd = str(config.invocation_params.dir)
    skipped: list[str] = []
    events: list[str] = []
    hung: set[str] = set()  # tasks with a test that timed out: their other tests get a tighter limit
    code = 0
    while True:
        code, stopped = _one_child(args + [a for n in skipped for a in ("--deselect", n)], cwd, entries, hung)
        if stopped is None:
            break
        nodeid, why, finished = stopped
        events.append(f"{nodeid}: {why}")
        print(f"\n=== minilm: {nodeid} {why}\n=== carrying on with the tests that are left (a new process)\n",
              file=sys.stderr, flush=True)
        skipped += finished + [nodeid]
        if "timed out" in why and nodeid in entries:
            hung.add(entries[nodeid].task)
    if events:
        print("\n=== minilm self-check: these tests did not finish ===\n" + "\n".join(events), flush=True)
        print(f"=== {len(events)} stopped (timed out or crashed); the summary above counts the rest ===", flush=True)
        return 1
    return code


def _one_child(args, cwd, entries, hung):
    """One pytest child; (exit code, None) when it ended by itself, else (1, (nodeid, why, done))."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, **{ENV: str(write_fd)})
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=cwd, env=env, pass_fds=(write_fd,),
                            start_new_session=True)
    os.close(write_fd)
    reader = _Lines(read_fd)
    current, done = None, []
    try:
        while True:
            line = reader.next_line(0.25)
            if line is None:
                if current is not None:
                    nodeid, t0, cpu0, limit = current
                    cpu, wall = _cpu_seconds(proc.pid) - cpu0, time.monotonic() - t0
                    if cpu > limit or wall > manifest.wall_limit(limit):
                        _kill(proc)
                        return 1, (nodeid, f"timed out: still running after {cpu:.0f} s of CPU and {wall:.0f} s "
                                           f"(the limit is {limit:g} s of CPU, from the reference's time) — an "
                                           f"endless loop, or a loop that never reaches its exit condition?", done)
                if proc.poll() is not None and not reader.ready(0.05):
                    line = ""
                else:
                    continue
            if line == "" or isinstance(line, bytes):
                code = proc.wait()
                if current is not None and code != 0:
                    return 1, (current[0], f"crashed: {describe_crash(code)}. If it runs a numba kernel (which "
                                           f"does no bounds checks), run it again with NUMBA_DISABLE_JIT=1 in front "
                                           f"of the same command: it runs as plain Python and shows the "
                                           f"IndexError.", done)
                return code, None
            kind, _, rest = line.partition(" ")
            if kind == "start":
                entry = entries.get(rest)
                limit = entry.cpu_limit(after_timeout=entry.task in hung) if entry else manifest.FLOOR
                current = (rest, time.monotonic(), _cpu_seconds(proc.pid), limit)
            elif kind == "end":
                current = None
                done.append(rest.partition(" ")[2])
    finally:
        reader.close()
        _kill(proc)


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
