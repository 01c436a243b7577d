"""The task-slot switch: one place that decides whose code runs for each task slot.

A *task slot* is a function a student writes (``mul_backward``, ``mask_tokens``, ...). Its reference
body lives in ``solutions/``; ``exercises/`` is generated from it with the bodies replaced by
``raise NotImplementedError("Task M.N: name")``. The library never imports either package directly.
It binds each slot once, through :func:`bind`::

    mul_backward = tasks.bind("task01_autograd.elementwise", "mul_backward")  # Task 1.2

and the bound function looks the implementation up *when it is called*, so that

* ``MINILM_IMPL=exercises`` (or ``minilm --impl exercises``) runs the whole kit on the student's code;
* ``with tasks.use("exercises", "task04_gpt"):`` swaps in one task module only (graded capstones);
* a graded test can call ``tasks.load(module, impl)`` directly while every other slot stays on the
  reference, so one unfinished task never fails another.

The default implementation is ``solutions`` where that package exists (a full checkout) and
``exercises`` otherwise (a student release).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os

from .errors import MiniLMError

IMPLEMENTATIONS = ("solutions", "exercises")

_overrides: dict[str, str] = {}  # task package ("task04_gpt") -> implementation, set by use()
_impl: str | None = None  # the global choice; None = not decided yet (read MINILM_IMPL lazily)


def solutions_available() -> bool:
    """True in a full checkout; False in a student release, which ships no ``solutions/``."""
    return importlib.util.find_spec("solutions") is not None


def default_impl() -> str:
    """``MINILM_IMPL`` if set, else ``solutions`` when it exists, else ``exercises``."""
    env = os.environ.get("MINILM_IMPL", "").strip()
    if env:
        return _check(env)
    return "solutions" if solutions_available() else "exercises"


def _check(impl: str) -> str:
    if impl not in IMPLEMENTATIONS:
        raise MiniLMError(f"unknown implementation {impl!r}: expected one of {IMPLEMENTATIONS}")
    if impl == "solutions" and not solutions_available():
        raise MiniLMError("implementation 'solutions' was asked for, but this copy has no solutions/ "
                          "package (a student release): use 'exercises'")
    return impl


def get_impl(module: str | None = None) -> str:
    """The implementation that runs the slots of ``module`` (e.g. ``"task04_gpt.loss"``) now."""
    global _impl
    if module is not None:
        top = module.split(".")[0]
        if top in _overrides:
            return _overrides[top]
    if _impl is None:
        _impl = default_impl()
    return _impl


def set_impl(impl: str) -> None:
    """Choose globally whose task code runs: ``"solutions"`` or ``"exercises"``."""
    global _impl
    _impl = _check(impl)


@contextlib.contextmanager
def use(impl: str, *task_packages: str):
    """Temporarily run the slots of the named task packages (all, if none named) on ``impl``."""
    global _impl
    _check(impl)
    saved_overrides, saved_impl = dict(_overrides), _impl
    try:
        if task_packages:
            for pkg in task_packages:
                _overrides[pkg.split(".")[0]] = impl
        else:
            _overrides.clear()
            _impl = impl
        yield
    finally:
        _overrides.clear()
        _overrides.update(saved_overrides)
        _impl = saved_impl


def load(module: str, impl: str | None = None):
    """Import ``<impl>.<module>``, e.g. ``load("task01_autograd.elementwise", "exercises")``."""
    impl = _check(impl) if impl is not None else get_impl(module)
    return importlib.import_module(f"{impl}.{module}")


def bind(module: str, name: str):
    """A function that calls slot ``name`` of task module ``module`` on the implementation chosen
    at call time. Bind once, at module level, with a comment pointing to the slot's file."""

    def slot(*args, **kwargs):
        return getattr(load(module), name)(*args, **kwargs)

    slot.__name__ = slot.__qualname__ = name
    slot.__doc__ = f"Task slot {name}: see solutions/{module.replace('.', '/')}.py (or exercises/)."
    slot.slot_module, slot.slot_name = module, name
    return slot
