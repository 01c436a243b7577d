"""The processes of ``minilm grade``: what a child's exit code says, its CPU time, the orphans it
leaves, and a line reader over its report pipe that a silent or flooding child cannot block.

Used by the parent (``runner.py``, one child per group of task modules) and by the documented
self-check (``selfcheck.py``). Linux-first: /proc gives CPU times and adopted orphans; elsewhere the
wall clock stands in and orphans are not hunted.
"""
from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

MAX_EVENT = 256 * 1024  # bytes: the child cuts messages to a few KB, so a longer line is not its reporter's
_LIVE: set[int] = set()  # pids of the children now running (their orphans are fair game, they are not)
_SPAWNING = threading.Lock()  # held from a child's fork until its pid is in _LIVE, and while orphans are hunted
_CLK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _signal_name(code: int) -> str:
    """``"SIGSEGV"`` for the exit code -11 of a process a signal killed."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def describe_crash(code: int) -> str:
    """What an exit code says about a test process that died in the middle of a test."""
    if code >= 0:
        return f"the test process exited with code {code} in the middle of this test (sys.exit / os._exit?)"
    name = _signal_name(code)
    why = {"SIGSEGV": "a segmentation fault: memory read or written out of bounds", "SIGABRT": "aborted",
           "SIGKILL": "killed (out of memory?)", "SIGBUS": "a bus error: memory read or written out of bounds"}
    return f"the test process died with {name} ({why.get(name, name)})"


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` and its threads, from /proc; wall-clock elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLK
    except (OSError, IndexError, ValueError):
        return time.monotonic() if not os.path.exists("/proc/self/stat") else 0.0


def become_subreaper() -> None:
    """Adopt the orphans of our children (Linux), so that a daemon forked by a test can be found and ended."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def start_child(cmd, **popen_args) -> subprocess.Popen:
    """``subprocess.Popen(cmd, ...)``, with its pid in ``_LIVE`` before any orphan hunt can see it.

    The grader runs modules in threads. Without the lock, one thread's ``kill_orphans`` could find the
    child another thread had just started (our child, not yet in ``_LIVE``) and kill it: seen in CI as
    a module whose tests "could not start (exit code -9)"."""
    with _SPAWNING:
        proc = subprocess.Popen(cmd, **popen_args)
        _LIVE.add(proc.pid)
    return proc


def kill_orphans() -> None:
    """Kill the processes this process adopted (their parent, one of our children, is gone)."""
    with _SPAWNING:
        _kill_orphans()


def _kill_orphans() -> None:
    me = str(os.getpid())
    for _ in range(5):
        found = []
        for entry in Path("/proc").glob("[0-9]*") if os.path.isdir("/proc") else []:
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            ppid = next((l.split()[1] for l in status.splitlines() if l.startswith("PPid:")), "")
            if ppid == me and int(entry.name) not in _LIVE and _is_grading_child(entry):
                found.append(int(entry.name))
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError, PermissionError):
                pass


def _is_grading_child(proc: Path) -> bool:
    """An adopted process that started life in one of our children (its environment says so)."""
    try:
        return b"MINILM_GRADING_CHILD=1" in (proc / "environ").read_bytes()
    except OSError:
        return True  # unreadable: another user's, i.e. a module user the autograder created


class _Lines:
    """Line reader over a pipe with a timeout (select), so a silent child cannot block us. A line over
    ``MAX_EVENT`` bytes comes back as ``bytes`` (its start), the rest of it is dropped."""

    def __init__(self, fd: int):
        self.fd, self.buf, self.eof = fd, b"", False

    def ready(self, timeout: float) -> bool:
        return bool(self.buf) or bool(select.select([self.fd], [], [], timeout)[0])

    def next_line(self, timeout: float):
        """A decoded line; '' at end of file; None when nothing came within ``timeout``."""
        while b"\n" not in self.buf:
            if len(self.buf) > MAX_EVENT:
                head, self.buf = self.buf[:80], b""
                return head
            if self.eof or not select.select([self.fd], [], [], timeout)[0]:
                if self.eof and self.buf:
                    line, self.buf = self.buf, b""
                    return line.decode("utf-8", "replace")
                return "" if self.eof else None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
                continue
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        if len(line) > MAX_EVENT:
            return line[:80]
        return line.decode("utf-8", "replace") or self.next_line(timeout)

    def close(self):
        os.close(self.fd)
