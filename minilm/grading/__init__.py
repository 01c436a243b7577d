"""Grade the exercises with the graded tests: the engine of ``minilm grade``, ``tools/check_stubs.py``
and the autograder.

Each graded test carries a task marker (``task2_1``), a points marker (``points(2)``, default 1), and
may be held back from students (``hidden``). :func:`grade` runs every task module's tests in child
processes (:mod:`.runner`, :mod:`.child`) so that a crash or a hang in one task costs only that task,
and sums up each task with one status (:mod:`.verdict`). :mod:`.report` prints the table and writes
Gradescope's results.json. Nothing here imports a student's code.
"""
from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from autograd.errors import MiniLMError

from .report import format_table, results_json, write_results
from .runner import ModuleRun
from .verdict import NOT_RUN, TaskSummary, TestResult, task_key

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TIMEOUT = 60.0  # seconds per test; the slowest graded test takes about 8 s on a 2-core laptop
TASK_ARG = re.compile(r"\d+(\.(\d+|capstone))?")

__all__ = ["DEFAULT_TIMEOUT", "Report", "TaskSummary", "TestResult", "format_table", "grade", "modules",
           "results_json", "write_results"]


@dataclass
class Report:
    tasks: list = field(default_factory=list)  # TaskSummary, in task order
    problems: list = field(default_factory=list)  # failures outside any test, one line each
    interrupted: bool = False
    impl: str = "exercises"

    @property
    def passed(self) -> bool:
        return bool(self.tasks) and not self.problems and all(t.status == "passed" for t in self.tasks)

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


def grade(impl: str = "exercises", task: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
          jobs: int | None = None, root: Path = ROOT, module_root=None, child_preexec=None, child_env=None,
          verbose: bool = False, progress=None) -> Report:
    """Run the graded tests of ``task`` ("2.1"), a module ("2") or all, against ``impl``.

    The modules are shared out among ``jobs`` children (one per module when ``module_root(M) ->
    Path`` gives each module its own kit copy, as the autograder does, without that module's
    reference); ``child_preexec`` and ``child_env`` are
    handed to the children (e.g. to drop privileges). ``progress(ModuleRun)`` is called as each
    module finishes. Ctrl-C stops the children and returns what was graded, ``interrupted=True``.
    """
    wanted = _wanted_modules(task, timeout, root)
    one_task = task if task and "." in task else None
    stop = threading.Event()
    jobs = 1 if verbose else max(1, jobs or min(2, os.cpu_count() or 1))
    if module_root is None:  # one kit for all: a child per job saves start-ups (a crash still costs one test)
        groups = [wanted[i::jobs] for i in range(min(jobs, len(wanted)))]
    else:  # a kit copy per module: a child per module
        groups = [[m] for m in wanted]
    runs = [ModuleRun(g, impl, one_task, root=module_root(g[0]) if module_root else root, timeout=timeout,
                      preexec=child_preexec, env=child_env, verbose=verbose, stop=stop) for g in groups]
    report = Report(impl=impl)
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = [pool.submit(_run_and_tell, r, progress) for r in runs]
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
    return report


def _wanted_modules(task: str | None, timeout: float, root: Path) -> list[int]:
    """The task modules to grade, after checking ``task``, ``timeout`` and that the tests exist."""
    if task is not None and not TASK_ARG.fullmatch(task):
        raise MiniLMError(f"--task {task!r}: expected a task id like 2.1 or a module number like 2")
    if timeout <= 0:
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
    """Gather the tests of ``runs`` by task into ``report`` (its problems, tasks and commands)."""
    by_task: dict[str, TaskSummary] = {}
    for r in runs:
        if r.problem:
            report.problems.append(f"{r.label}: {r.problem}")
        for t in r.tests.values():
            if t.status == NOT_RUN and not t.message:
                t.message = "not run: grading was interrupted" if report.interrupted else "not run"
            by_task.setdefault(t.task, TaskSummary(t.task)).tests.append(t)
    for s in by_task.values():
        s.command = _command(report.impl, s)
        if s.task.endswith(".capstone"):  # it runs its module's slots: not started while they are not
            module = s.task.split(".")[0] + "."
            s.waits_for = [t.task for t in by_task.values() if t.task.startswith(module) and t is not s
                           and t.status == "not started"]
    report.tasks = sorted(by_task.values(), key=lambda s: task_key(s.task))


def _run_and_tell(run: ModuleRun, progress):
    run.run()
    if progress is not None:
        progress(run)


def _command(impl: str, summary: TaskSummary) -> str:
    """The command that shows the first failing test of a task in full."""
    if not summary.failing:
        return ""
    first = summary.failing[0]
    prefix = "NUMBA_DISABLE_JIT=1 " if first.status == "crashed" else ""
    return f'{prefix}pytest --impl {impl} "{first.nodeid}"'
