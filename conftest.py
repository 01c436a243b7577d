"""Shared pytest set-up: the ``--impl`` option and the ``impl`` fixture of the graded tests.

This file sits at the top of the kit, not in ``tests/``, because pytest reads the top-level
``conftest.py`` before it parses the command line from any folder of the kit: so
``pytest --impl exercises -m task1_2`` works as written (pytest would otherwise take ``exercises``
for a path and never learn the option), as do ``--impl=exercises`` and runs from a subfolder.

* ``pytest`` grades ``solutions/`` (all green in a full checkout).
* ``pytest --impl exercises`` (or ``MINILM_IMPL=exercises pytest``) grades the student's ``exercises/``.

Only graded tests look at ``--impl``: they reach a slot through the ``impl`` fixture, while the library
itself keeps every other slot on the reference, so one unfinished task never fails another.
"""
from __future__ import annotations

import os
from pathlib import Path

# one BLAS thread for the test run (minilm itself sets none; the autograder's children run with 1):
# must happen before numpy is imported
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from autograd import tasks  # noqa: E402
from minilm.grading import selfcheck  # noqa: E402


def pytest_addoption(parser):
    parser.addoption(
        "--impl", choices=tasks.IMPLEMENTATIONS, default=None,
        help="whose task slots the graded tests call: solutions (default in a full checkout) "
             "or exercises (your code). MINILM_IMPL sets the default.")


def pytest_cmdline_main(config):
    """``pytest --impl exercises ...``: run under the grader's per-test limits (minilm/grading/selfcheck.py),
    so that an endless loop stops with "timed out" and a crashed kernel is named, not silent."""
    if selfcheck.wanted(config):
        return selfcheck.supervise(config)
    return None


def pytest_configure(config):
    if os.environ.get(selfcheck.ENV):  # the supervised child: tell the supervisor each test's start and end
        config.pluginmanager.register(selfcheck.Beacon(int(os.environ[selfcheck.ENV])), "minilm-selfcheck")
    chosen = config.getoption("--impl") or os.environ.get("MINILM_IMPL") or None
    config._minilm_impl = tasks._check(chosen) if chosen else tasks.default_impl()
    # The library runs on the reference wherever it exists; graded tests pick their own slot.
    tasks.set_impl("solutions" if tasks.solutions_available() else "exercises")
    _testpaths_from_anywhere(config)


def _testpaths_from_anywhere(config):
    """``pytest`` with no path, run from a folder of the kit that holds no tests (docs/, exercises/),
    collects the kit's testpaths as it does from the top, instead of finding nothing there."""
    source = getattr(config, "args_source", None)
    here = Path(str(config.invocation_params.dir)).resolve()
    top = Path(str(config.rootpath)).resolve()
    if source is None or source.name != "INVOCATION_DIR" or here == top or not here.is_relative_to(top) \
            or "tests" in here.relative_to(top).parts:
        return
    config.args[:] = [str(top / p) for p in config.getini("testpaths")] or [str(top)]


def pytest_report_header(config):
    return f"minilm: graded tests call the slots of {config._minilm_impl}/"


class Impl:
    """What the ``impl`` fixture gives a graded test: ``impl("task01_autograd.elementwise")`` is that
    module of the implementation under test; ``with impl.use("task04_gpt"):`` runs the library's own
    pipeline on it (capstones)."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, module: str):
        return tasks.load(module, self.name)

    def use(self, *task_packages: str):
        return tasks.use(self.name, *task_packages)


@pytest.fixture
def impl(request) -> Impl:
    return Impl(request.config._minilm_impl)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


# Tasks 2.1, 2.2, 2.4 and 2.5 teach what the engine also computes (softmax, cross-entropy, the attention
# softmax, layer norm, GELU): in its numba kernels and in the composed twins the fused ops are tested
# against (autograd/functional.py). While their graded tests run, the engine runs those ops on the task
# slots themselves (the NumPy backend), so a slot that answers by calling the engine (F.layer_norm,
# F.softmax, ...) calls itself in a student release and in the autograder; and the composed twins refuse
# to run, so ``F._softmax_composed`` is no answer either.
_ENGINE_TWINS = {"task2_1": ("_softmax_composed", "_log_softmax_composed"), "task2_2": ("_cross_entropy_composed",),
                 "task2_4": ("_scaled_masked_softmax_composed",), "task2_5": ("_gelu_composed",)}


def _not_an_answer(name: str, task: str):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"autograd.functional.{name} is the engine's own twin of Task {task}, not an answer "
                           f"to it: compute it with NumPy in your slot")
    return refuse


@pytest.fixture(autouse=True)
def _engine_runs_on_the_slots(request, monkeypatch):
    marks = [m for m in _ENGINE_TWINS if request.node.get_closest_marker(m)]
    if not marks:
        yield
        return
    from autograd import functional, kernels
    for mark in marks:
        for name in _ENGINE_TWINS[mark]:
            monkeypatch.setattr(functional, name, _not_an_answer(name, mark[4:].replace("_", ".")))
    with kernels.use_backend("numpy"):
        yield
