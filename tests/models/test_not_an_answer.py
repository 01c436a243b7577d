"""The tests' checkers are not answers: ``tests.helpers.numeric_grad`` refuses to run for a student's
exercise code, and the autograder's intake refuses a task file that imports the tests.

The planted case is the reviewer's: an ``exercises/task01_autograd/matmul.py`` whose
``matmul_backward`` returns the tests' own finite differences. It runs through
``pytest --impl exercises -m task1_4`` in a copy of the kit (cut off from this checkout's import
path, as a student's machine would be), once with the guard (the tests fail and say why) and once
with the guard taken out (the same file passes: the plant really is an answer the guard stops).
"""
from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from autograd import tasks
from tests.helpers import NotAnAnswer, numeric_grad
from tests.release_kit import ROOT, run_in

INTAKE = ROOT / "tools" / "autograder" / "intake.py"
MESSAGE = "numeric_grad is the tests' checker, not an answer"

CHEAT = '''from autograd.elementwise import unbroadcast
from tests.helpers import numeric_grad


def matmul_backward(grad_output, a, b):
    """Task 1.4: the tests' finite differences handed back as the answer."""
    return numeric_grad(lambda x: x @ b, a, grad_output), numeric_grad(lambda x: a @ x, b, grad_output)
'''


def test_numeric_grad_runs_for_tests_and_refuses_exercise_code():
    x, up = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, -1.0])
    np.testing.assert_allclose(numeric_grad(lambda z: z * z, x, up), 2 * x * up, rtol=1e-6)
    for filename, module in [("/kit/exercises/task01_autograd/matmul.py", "student"),  # by its folder
                             ("<planted>", "exercises.task01_autograd.matmul")]:      # by its package
        scope = {"__name__": module, "numeric_grad": numeric_grad}
        exec(compile("def answer(x, up):\n    return numeric_grad(lambda z: z * z, x, up)\n", filename, "exec"), scope)
        with pytest.raises(NotAnAnswer, match=MESSAGE) as caught:
            scope["answer"](x, up)
        assert "line 2 (answer)" in str(caught.value)


@pytest.fixture
def kit(tmp_path) -> Path:
    """A copy of the kit that can run module 1's graded tests, with the planted matmul.py."""
    if not tasks.solutions_available():
        pytest.skip("needs a full checkout")
    kit = tmp_path / "kit"
    shutil.copytree(ROOT, kit, ignore=shutil.ignore_patterns(".git", ".venv", "runs", "docs", "__pycache__",
                                                             ".pytest_cache", ".hypothesis", "*.egg-info"))
    (kit / "exercises" / "task01_autograd" / "matmul.py").write_text(CHEAT, encoding="utf-8")
    return kit


def _task_1_4(kit: Path):
    return run_in(kit, "pytest", "--impl", "exercises", "-m", "task1_4", "-q", "-p", "no:randomly",
                  "tests/graded/test_task01_autograd.py", timeout=300)


def test_a_slot_that_calls_numeric_grad_fails_task_1_4_saying_why(kit):
    run = _task_1_4(kit)
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "4 failed" in run.stdout.splitlines()[-1], out[-3000:]
    assert MESSAGE in out and "exercises/task01_autograd/matmul.py, line 7 (matmul_backward)" in out, out[-3000:]

    helpers = kit / "tests" / "helpers.py"  # the guard taken out: the same file is a passing answer
    text = helpers.read_text(encoding="utf-8")
    assert text.count('refuse_exercise_callers("numeric_grad")') == 1
    helpers.write_text(text.replace('refuse_exercise_callers("numeric_grad")', "pass"), encoding="utf-8")
    unguarded = _task_1_4(kit)
    assert unguarded.returncode == 0 and "4 passed" in unguarded.stdout.splitlines()[-1], unguarded.stdout[-3000:]


@pytest.fixture(scope="module")
def intake():
    """tools/autograder/intake.py as a module (it is not a package's)."""
    if not INTAKE.is_file():
        pytest.skip("the autograder's templates are not in a student release")
    spec = importlib.util.spec_from_file_location("intake_under_test", INTAKE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("code", [
    "from tests.helpers import numeric_grad\n",
    "import tests.helpers\n",
    "import tests\n",
    "from conftest import Impl\n",
    "from ... import tests\n",
    "from ...tests import helpers\n",
    "import importlib\nhelpers = importlib.import_module('tests.helpers')\n",
    "ng = __import__('tests.helpers', fromlist=['numeric_grad']).numeric_grad\n",
    "import runpy\nng = runpy.run_path('../../tests/helpers.py')['numeric_grad']\n",
])
def test_intake_refuses_a_file_that_imports_the_tests(intake, code):
    bad, _ = intake.scan('"""My answer: the tests check it, it does not call them."""\n' + code)
    assert bad and "line" in bad and "not the student's answer" in bad, (code, bad)
    assert intake.scan('"""Uses no tests."""\nimport numpy as np\n\ntests = 3\nnote = "the tests expect this"\n') \
        == (None, [])
