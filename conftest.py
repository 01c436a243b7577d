"""Shared pytest set-up: the ``--impl`` option and the ``impl`` fixture of the graded tests.

* ``pytest`` grades ``solutions/`` (all green in a full checkout).
* ``pytest --impl exercises`` (or ``MINILM_IMPL=exercises pytest``) grades the student's ``exercises/``.

Only graded tests look at ``--impl``: they reach a slot through the ``impl`` fixture, while the library
itself keeps every other slot on the reference, so one unfinished task never fails another.
"""
from __future__ import annotations

import os

# one BLAS thread, as minilm/__init__.py sets for the CLI: must happen before numpy is imported
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from autograd import tasks  # noqa: E402


def pytest_addoption(parser):
    parser.addoption(
        "--impl", choices=tasks.IMPLEMENTATIONS, default=None,
        help="whose task slots the graded tests call: solutions (default in a full checkout) "
             "or exercises (your code). MINILM_IMPL sets the default.")


def pytest_configure(config):
    chosen = config.getoption("--impl") or os.environ.get("MINILM_IMPL") or None
    config._minilm_impl = tasks._check(chosen) if chosen else tasks.default_impl()
    # The library runs on the reference wherever it exists; graded tests pick their own slot.
    tasks.set_impl("solutions" if tasks.solutions_available() else "exercises")


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
