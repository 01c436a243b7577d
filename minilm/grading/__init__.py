"""Grade the exercises with the graded tests: the engine of ``minilm grade``, ``tools/check_stubs.py``
and the autograder.

Each graded test carries a task marker (``task2_1``), a points marker (``points(2)``, default 1), and
may be held back from students (``hidden``). :func:`grade` runs every task module's tests in child
processes (:mod:`.runner`, :mod:`.child`) so that a crash or a hang in one task costs only that task,
and sums up each task with one status (:mod:`.verdict`). :mod:`.report` prints the table and writes
Gradescope's results.json. Nothing here imports a student's code, and nothing a child says is taken
on trust: the tests, their points and their time limits come from the manifest (:mod:`.manifest`),
and the grader's own checks (:mod:`.canary`) vouch for each child's report.
"""
from __future__ import annotations

import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from autograd.errors import MiniLMError

from . import manifest, processes
from .report import format_table, results_json, write_results
from .runner import ModuleRun
from .verdict import BLOCKED, CRASHED, FAILED, NOT_RUN, PASSED, TIMED_OUT, TaskSummary, TestResult, task_key

ROOT = Path(__file__).resolve().parents[2]
TASK_ARG = re.compile(r"\d+(\.(\d+|capstone))?")

__all__ = ["Report", "TaskSummary", "TestResult", "format_table", "grade", "modules",
           "results_json", "write_results"]


@dataclass
class Report:
    tasks: list = field(default_factory=list)  # TaskSummary, in task order
    problems: list = field(default_factory=list)  # failures outside any test, one line each
    flags: list = field(default_factory=list)  # reports the grader could not believe, one line each
    notes: list = field(default_factory=list)  # what the grader saw beside the tests (no points), one line each
    interrupted: bool = False
    impl: str = "exercises"
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return bool(self.tasks) and not self.problems and not self.flags and all(
            t.status == "passed" for t in self.tasks)

    @property
    def tests(self) -> list:
        return [t for s in self.tasks for t in s.tests]


def modules(root: Path = ROOT) -> list[int]:
    """The task modules that have graded tests under ``root/tests/graded``."""
    found = set()
    for f in (Path(root) / "tests" / "graded").rglob("test_task*_*.py"):
        m = re.match(r"test_task(\d+)_", f.name)
        if m:
            found.add(int(m.group(1)))
    return sorted(found)


def grade(impl: str = "exercises", task: str | None = None, *, timeout: float | None = None,
          jobs: int | None = None, root: Path = ROOT, only=None, manifest_path=None, module_roots=None, child_preexec=None,
          child_env=None, after_module=None, verbose: bool = False, progress=None) -> Report:
    """Run the graded tests of ``task`` ("2.1"), a module ("2") or all, against ``impl``.

    Which tests exist, what they are worth and how long each may run come from the manifest
    (``root/tests/graded/manifest.json``, or ``manifest_path``), never from a child. ``timeout``
    fixes one CPU limit for every test instead (``--timeout``). The modules are shared out among
    ``jobs`` children; with ``module_roots(M) -> [Path, ...]`` (the autograder) each module runs in
    each of its own kit copies, one after the other, and ``after_module(run)`` is called after each.
    ``only`` limits the grading to those modules. ``child_preexec`` and ``child_env`` (a dict, or ``child_env(M) -> dict``) go to the children.
    ``progress(ModuleRun)`` is called as each finishes. Ctrl-C stops the children and returns what
    was graded, ``interrupted=True``.
    """
    t0 = time.monotonic()
    wanted = [m for m in _wanted_modules(task, timeout, root) if only is None or m in only]
    one_task = task if task and "." in task else None
    stop = threading.Event()
    jobs = 1 if verbose else max(1, jobs or min(2, os.cpu_count() or 1))
    processes.become_subreaper()
    env_of = child_env if callable(child_env) else (lambda m: child_env)
    kw = dict(timeout=timeout, preexec=child_preexec, verbose=verbose, stop=stop)
    if module_roots is None:  # one kit for all: a child per job saves start-ups (a crash still costs one test)
        entries = manifest.load(root, manifest_path)
        student = set(modules(root)) if not (Path(root) / "solutions").is_dir() else set()  # a release: all yours
        runs = [ModuleRun(wanted[i::jobs], impl, one_task, root=root, entries=entries, env=env_of(None),
                          on_student=student, **kw) for i in range(min(jobs, len(wanted)))]
    else:  # kit copies per module: the library runs the graded module on the student's code
        runs = []
        for m in wanted:
            for i, r in enumerate(module_roots(m)):
                runs.append(ModuleRun(m, impl, one_task, root=r, entries=manifest.load(r, manifest_path),
                                      env=env_of(m), on_student={m}, label=f"module {m}" + (" (held back)" if i else ""),
                                      **kw))
    report = Report(impl=impl)
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = [pool.submit(_run_and_tell, r, progress, after_module) for r in runs]
    try:
        for f in futures:
            f.result()
    except KeyboardInterrupt:
        report.interrupted = True
        stop.set()
        for r in runs:
            r._kill()
    finally:
        pool.shutdown(wait=True)
    _collect(report, runs)
    report.seconds = time.monotonic() - t0
    return report


def _wanted_modules(task: str | None, timeout: float, root: Path) -> list[int]:
    """The task modules to grade, after checking ``task``, ``timeout`` and that the tests exist."""
    if task is not None and not TASK_ARG.fullmatch(task):
        raise MiniLMError(f"--task {task!r}: expected a task id like 2.1 or a module number like 2")
    if timeout is not None and timeout <= 0:
        raise MiniLMError(f"--timeout {timeout}: expected a positive number of seconds")
    graded = Path(root) / "tests" / "graded"
    if not graded.is_dir():
        raise MiniLMError(f"graded tests not found at {graded}: run minilm grade from a source checkout "
                          f"(or a student release) installed with 'pip install -e .'")
    wanted = modules(root)
    if task is not None:
        wanted = [m for m in wanted if m == int(task.split(".")[0])]
        if not wanted:
            raise MiniLMError(f"--task {task}: no graded tests for module {task.split('.')[0]} "
                              f"(modules with tests: {', '.join(map(str, modules(root)))})")
    return wanted


def _collect(report: Report, runs: list[ModuleRun]) -> None:
    """Gather the tests of ``runs`` by task into ``report`` (its problems, flags, tasks and commands)."""
    by_task: dict[str, TaskSummary] = {}
    student: set[int] = set()
    for r in runs:
        if r.problem:
            report.problems.append(f"{r.label}: {r.problem}")
        report.flags.extend(r.flags[:1])
        report.notes.extend(r.notes)
        student |= r.on_student
        for t in r.tests.values():
            if t.status == NOT_RUN and not t.message:
                t.message = "not run: grading was interrupted" if report.interrupted else "not run"
            by_task.setdefault(t.task, TaskSummary(t.task)).tests.append(t)
    _blame_upstream(by_task, student)
    for s in by_task.values():
        s.command = _command(report.impl, s)
        if s.task.endswith(".capstone"):  # it runs its module's slots: not started while they are not
            module = s.task.split(".")[0] + "."
            s.waits_for = [t.task for t in by_task.values() if t.task.startswith(module) and t is not s
                           and t.status == "not started"]
    report.tasks = sorted(by_task.values(), key=lambda s: task_key(s.task))


def _blame_upstream(by_task: dict, student: set) -> None:
    """A failed, crashed or timed-out test that runs on another task of the student's that did not pass is
    *blocked* by that task: its failure may be only the other one's effect (a Task 3.2 that aborts the
    process aborts every test of 3.4 that calls it). Only tasks that fail on their own (in a test that
    reaches no failing task) are blamed, so two tasks that use each other never blame each other. A
    blocked test scores 0 like any other that did not pass: only what the student is told changes."""
    failing = {k for k, s in by_task.items() if any(t.status != PASSED for t in s.tests)}

    def upstream(t):
        return [u for u in t.uses if u in failing and u != t.task and int(u.split(".")[0]) in student]

    on_their_own = {t.task for s in by_task.values() for t in s.tests if t.status != PASSED and not upstream(t)}
    for s in by_task.values():
        for t in s.tests:
            culprits = [u for u in upstream(t) if u in on_their_own]
            if t.status in (FAILED, CRASHED, TIMED_OUT) and culprits:
                names = ", ".join(f"Task {u}" for u in culprits)
                said = "said" if t.status == FAILED else t.status
                t.status, t.blocked_by = BLOCKED, culprits[0]
                t.message = (f"this test runs on your {names}, which did not pass: fix {names} first (this failure "
                             f"may be only its effect). The test {said}: {t.message}")


def _run_and_tell(run: ModuleRun, progress, after_module):
    try:
        run.run()
    finally:
        if after_module is not None:
            after_module(run)
    if progress is not None:
        progress(run)


def _command(impl: str, summary: TaskSummary) -> str:
    """The command that shows the first failing test of a task in full."""
    if not summary.failing:
        return ""
    first = summary.failing[0]
    prefix = "NUMBA_DISABLE_JIT=1 " if first.status == "crashed" else ""
    return f'{prefix}pytest --impl {impl} "{first.nodeid}"'
