"""What one graded test and one task came to: the statuses and the student-facing reason.

A test ends in one of

    passed · failed · not implemented (its own task's stub raised) · blocked (another task's stub
    raised) · timed out · crashed · error (SyntaxError / ImportError in an exercise file) · not run

and a task takes the status of its tests by these rules, first match wins:

1. every test passed                                   -> passed
2. a test crashed / timed out / hit an error           -> crashed / timed out / error
3. no test passed and some raised the task's own stub  -> not started
4. every failure is another task's stub, or a test
   that runs on another task which did not pass       -> blocked (by Task X.Y)
5. otherwise                                           -> failed

Before all of these: a task whose tests ran in a child whose report the grader could not believe
(``runner.py``) is *flagged*, and scores 0.

The reasons the parent itself writes on a test are here too: the child's result (``record_result``),
a limit passed (``timed_out``), a process that died (``crashed``), and the report's note on a test
that died once and lived when it ran again (``writer_note``); ``runner.py`` decides when.
"""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from .manifest import wall_limit
from .processes import _signal_name, describe_crash

PASSED, FAILED, NOT_IMPLEMENTED, BLOCKED = "passed", "failed", "not implemented", "blocked"
TIMED_OUT, CRASHED, ERROR, NOT_RUN = "timed out", "crashed", "error", "not run"
FLAGGED = "flagged"
TASK_STATUSES = ("passed", "failed", "not started", "blocked", "crashed", "timed out", "error", "not run", "flagged")

NIE_RE = re.compile(r"Task (\d+\.(?:\d+|capstone))")
MAX_MESSAGE = 4000  # characters of a failure message kept
FLOOD_LINES = 60  # more lines than a screenful: the task is told so (printing in a loop slows grading)

# Lines of a failure that carry no information for a student: the bare exception name and the
# headers that numpy.testing puts before the err_msg.
_NOISE = re.compile(r"^(AssertionError:?|Not equal to tolerance.*|Arrays are not (almost )?equal.*|"
                    r"Not equal to \d+ decimals.*|Items are not equal:?|)$")
_ARRAY_DUMP = re.compile(r"^\s*(ACTUAL|DESIRED|x|y):\s")


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class
    nodeid: str
    task: str  # "2.1" or "4.capstone"
    points: float
    hidden: bool = False
    status: str = NOT_RUN
    message: str = ""  # the reason, as a student reads it
    blocked_by: str = ""  # "3.2" when another task's stub raised
    printed_lines: int = 0
    duration: float = 0.0
    cpu: float = 0.0  # CPU seconds the test took, measured by the parent
    uses: tuple = ()  # other tasks this test reaches through the library (from the manifest)
    flag: str = ""  # why the report of this test's run cannot be believed (then it scores 0)

    @property
    def score(self) -> float:
        return self.points if self.status == PASSED and not self.flag else 0.0

    @property
    def name(self) -> str:
        return self.nodeid.split("::", 1)[-1]

    @property
    def file(self) -> str:
        return self.nodeid.split("::", 1)[0]


@dataclass
class TaskSummary:
    task: str
    tests: list = field(default_factory=list)
    command: str = ""  # the command that shows the full failure
    waits_for: list = field(default_factory=list)  # a capstone: its module's tasks still not started

    @property
    def points(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_points(self) -> float:
        return sum(t.points for t in self.tests)

    @property
    def status(self) -> str:
        states = [t.status for t in self.tests]
        if any(t.flag for t in self.tests):
            return FLAGGED
        if all(s == PASSED for s in states):
            return "passed"
        if self.waits_for and PASSED not in states:
            return "not started"
        for severe in (CRASHED, TIMED_OUT, ERROR):
            if severe in states:
                return severe
        failing = [t for t in self.tests if t.status != PASSED]
        if NOT_IMPLEMENTED in states and PASSED not in states:
            return "not started"
        if failing and all(t.status == BLOCKED for t in failing):
            return "blocked by " + ", ".join(f"Task {b}" for b in self.blocked_by)
        if all(s == NOT_RUN for s in states):
            return "not run"
        return "failed"

    @property
    def failing(self) -> list:
        """The tests that did not pass, the most telling first (a crash before a plain failure)."""
        order = (CRASHED, TIMED_OUT, ERROR, FAILED, NOT_IMPLEMENTED, BLOCKED, NOT_RUN)
        return sorted((t for t in self.tests if t.status != PASSED), key=lambda t: order.index(t.status))

    @property
    def blocked_by(self) -> list:
        return sorted({t.blocked_by for t in self.tests if t.blocked_by}, key=task_key)

    @property
    def reason(self) -> str:
        """The first informative failure, and a word on floods of printing."""
        status = self.status
        if status == FLAGGED:
            return next(t.flag for t in self.tests if t.flag) + " — 0 points, flagged for the instructor's review"
        notes = []
        flood = max(self.tests, key=lambda t: t.printed_lines, default=None)
        if flood is not None and flood.printed_lines > FLOOD_LINES:
            notes.append(f"{flood.name} printed {flood.printed_lines:,} lines ({flood.duration:.1f} s): "
                         f"printing inside a loop slows grading; remove the debug prints")
        if status == "passed" or status == "not started":
            return "\n".join(notes)
        failing = self.failing
        first = failing[0]
        text = f"{first.name}: {first.message}" if first.message else first.name
        more = len(failing) - 1
        if more:
            text += f"\n({more} more test{'s' if more > 1 else ''} of this task did not pass)"
        return "\n".join([text, *notes])


def task_key(task: str):
    major, _, minor = task.partition(".")
    return (int(major) if major.isdigit() else 99, int(minor) if minor.isdigit() else 99)


def explain(text: str, max_lines: int = 8) -> str:
    """The lines of a failure a student should read: the assertion's own message first.

    Drops a bare ``AssertionError:`` line, NumPy's "Not equal to tolerance" header and its dumps
    of the whole arrays; keeps the err_msg, the mismatch counts and the largest differences.
    """
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    kept = [ln for ln in lines if not _NOISE.match(ln.strip()) and not _ARRAY_DUMP.match(ln)]
    # pytest's assertion rewriting adds "assert ..." and "+  where ..." explanations after the
    # message; keep them only when the test gave no message of its own.
    if kept and not kept[0].lstrip().startswith("assert "):
        kept = [ln for ln in kept if not ln.lstrip().startswith(("+", "assert ", "where "))] or kept
    if len(kept) > max_lines:
        kept = kept[:max_lines] + ["…"]
    return "\n".join(kept).strip()


def classify_exception(exc_type: str, message: str, own_task: str) -> tuple[str, str]:
    """(status, blocked_by) of a test that raised ``exc_type(message)``."""
    if exc_type == "NotImplementedError":
        m = NIE_RE.search(message)
        if m:
            other = m.group(1)
            return (NOT_IMPLEMENTED, "") if other == own_task else (BLOCKED, other)
    if exc_type in ("SyntaxError", "IndentationError", "TabError", "ImportError", "ModuleNotFoundError"):
        return ERROR, ""
    return FAILED, ""


def wrap(text: str, width: int) -> list[str]:
    out = []
    for para in text.splitlines() or [""]:
        out.extend(textwrap.wrap(para, width=max(width, 30), break_long_words=True,
                                 break_on_hyphens=False) or [""])
    return out


# ---- what the parent writes on a test: the child's result, a limit passed, a crash -------------------
def record_result(test: TestResult, event: dict) -> None:
    """Set ``test`` from the child's ``result`` event: its outcome, exception type and message."""
    test.printed_lines = int(event.get("lines", 0) or 0)
    test.duration = float(event.get("duration", 0.0) or 0.0)
    test.cpu = event["cpu"]
    outcome = event.get("outcome")
    if outcome == "passed":
        test.status = PASSED
        return
    text = str(event.get("message", ""))[:MAX_MESSAGE]
    if outcome == "skipped":
        test.status, test.message = FAILED, f"skipped: {text}"
        return
    status, blocked_by = classify_exception(str(event.get("exc", "")), text, test.task)
    test.status, test.blocked_by = status, blocked_by
    message = explain(text) or f"{event.get('exc') or 'the test'} failed"
    if status == BLOCKED:
        message = f"needs Task {blocked_by}, which is still a stub: {message.splitlines()[0]}"
    elif status == ERROR:
        message = f"{message}\n(every test that uses this file fails until it imports)"
    test.message = message


def timed_out(test: TestResult, cpu: float, wall: float, cpu_limit: float, timeout: float | None) -> None:
    """``test`` ran past its CPU limit or its wall-clock limit (``--timeout``, or the manifest's)."""
    test.status, test.duration = TIMED_OUT, wall
    which = (f"{cpu:.0f} s of CPU (the limit is {cpu_limit:g} s" if cpu > cpu_limit else
             f"{wall:.0f} s of wall-clock time (the limit is {wall_limit(cpu_limit):g} s")
    source = "--timeout" if timeout is not None else "8 × the reference's time, at least 30 s"
    test.message = (f"still running after {which}: {source}) — an endless loop, a loop that never "
                    f"reaches its exit condition, or a wait that never ends?")


def crashed(test: TestResult, code: int, impl: str, *, alone: bool = False, after: bool = False,
            hung: bool = False) -> None:
    """``test``'s process died with exit ``code`` in it (``alone``: again when it ran alone), or just
    after it ran alone (``after``; ``hung``: the process hung in the grader's closing checks)."""
    test.status = CRASHED
    if hung:
        what = ("the test process hung in the grader's closing checks, just after this test, which ran alone "
                "in it: the test's code leaves the process broken")
    elif after:
        what = (describe_crash(code).replace(" in the middle of this test", "")
                + ", just after this test, which ran alone in it: the test's code leaves the process broken")
    else:
        what = describe_crash(code) + (" (again when it ran alone in a fresh process)" if alone else "")
    test.message = what + (
                     f". If it runs a numba kernel (which does no bounds checks), NUMBA_DISABLE_JIT=1 "
                     f"pytest --impl {impl} -m task{test.task.replace('.', '_')} runs it as plain "
                     f"Python and shows the IndexError.")


def writer_note(test: TestResult, code: int, before: list[str], first: bool, *, alone: bool, impl: str) -> str:
    """The report's note on a test that died once (exit ``code``, after tests of the tasks ``before``,
    or as the ``first`` test of its process) and lived when it ran again, ``alone`` or apart from those
    tasks: which kernels may write out of bounds (its own: such a write does not always crash at once;
    or an earlier task's)."""
    how = _signal_name(code) if code < 0 else f"exit code {code}"
    suspects = [test.task] + [t for t in before if t != test.task]
    marks = " or ".join(f"task{t.replace('.', '_')}" for t in suspects)
    after = (" as the first test of its process" if first else
             f" after tests of Task {', '.join(before)} had run in it" if before else " after other tests")
    again = "alone" if alone else "apart from them"
    return (f"a test of Task {test.task} died ({how}){after}, and {test.status} when it ran again {again} in a "
            f"fresh process, so it is graded on that run. An out-of-bounds write in a numba kernel (numba does no "
            f"bounds checks) does not always crash at once — Task {' or '.join(suspects)} may write one: "
            f"NUMBA_DISABLE_JIT=1 pytest --impl {impl} -m \"{marks}\" runs them as plain Python and "
            f"shows the IndexError.")
