"""Checks whose outcome the grader knows: how a report forged inside the child is caught.

The student's code runs in the same process as the pytest that reports its results, so it can rewrite
any object there, the reporter included. The parent cannot stop that; it can notice it. Before each
child starts, the parent writes a test file of its own with two checks whose names it draws at random
(the child learns them only when it collects the file): one that must pass and one that must fail.
The file runs last, after every graded test of that child. A child whose report says the failing
check passed, the passing one failed, or either never ran, has a report the parent cannot believe:
every test of that child's modules scores 0 and the run is flagged for review, with the reason.

What this catches: a report channel written to by hand, a reporter patched to say "passed", events
invented for tests that never ran, a reporter silenced before the end. What it cannot catch: code
written against this very scheme, which runs the two checks honestly and forges only the graded
tests (the canary file is not one of the published test files). Held-back tests, the autograder's
review list, and a comparison with the instructor's own run are the defences there.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

WORDS = ("order", "shape", "value", "sum", "grad", "mask", "rows", "keys", "scale", "batch", "axis", "tokens",
         "ids", "loss", "norm", "span", "heads", "pairs", "merge", "step")


@dataclass(frozen=True)
class Canary:
    name: str  # the test function's name
    must_pass: bool

    def matches(self, nodeid: str) -> bool:
        return nodeid.endswith("::" + self.name)


def _name() -> str:
    a, b = secrets.choice(WORDS), secrets.choice(WORDS)
    return f"test_{a}_{b}_{secrets.token_hex(4)}"


def write(folder: Path, module: int, marker: str) -> tuple[Path, list[Canary]]:
    """Write the checks into ``folder`` (a folder the child can read and not write) for a child that
    grades ``module``; ``marker`` is a task marker of that module (``task1_1``)."""
    x, y = secrets.randbelow(10**6) + 2, secrets.randbelow(10**6) + 2
    checks = [Canary(_name(), True), Canary(_name(), False)]
    if secrets.randbelow(2):
        checks.reverse()
    body = ['"""Checks of the grader itself (see minilm/grading/canary.py)."""', "import pytest", ""]
    for c in checks:
        want = x * y if c.must_pass else x * y + 1 + secrets.randbelow(97)
        body += [f"@pytest.mark.{marker}", f"def {c.name}():", f"    assert {x} * {y} == {want}", "", ""]
    path = Path(folder) / f"test_task{module:02d}_{secrets.token_hex(4)}.py"
    path.write_text("\n".join(body), encoding="utf-8")
    path.chmod(0o644)
    return path, checks
