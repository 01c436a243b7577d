"""The task-slot switch: one place that decides whose code runs for each task slot.

A *task slot* is a function a student writes (``mul_backward``, ``mask_tokens``, ...). Its reference
body lives in ``solutions/``; ``exercises/`` is generated from it with the bodies replaced by
``raise NotImplementedError("Task M.N: name")``. The library never imports either package directly.
It binds each slot once, through :func:`bind`, or all the slots of one task module at once, through
:func:`slots`::

    mask_tokens = tasks.bind("task05_bert.masking", "mask_tokens")  # Task 5.2
    slots = tasks.slots("task01_autograd.elementwise")  # Task 1.2; then slots.mul_backward(...)

and the bound function looks the implementation up *when it is called*, so that

* ``MINILM_IMPL=exercises`` (or ``minilm --impl exercises``) runs the whole kit on the student's code;
* ``with tasks.use("exercises", "task04_gpt"):`` swaps in one task module only (graded capstones);
* a graded test can call ``tasks.load(module, impl)`` directly while every other slot stays on the
  reference, so one unfinished task never fails another.

The default implementation is ``solutions`` where that package exists (a full checkout) and
``exercises`` otherwise (a student release).
"""
from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import os
import re
import sys

from .errors import MiniLMError

IMPLEMENTATIONS = ("solutions", "exercises")

_overrides: dict[str, str] = {}  # task package ("task04_gpt") -> implementation, set by use()
_impl: str | None = None  # the global choice; None = not decided yet (read MINILM_IMPL lazily)
_traced: set | None = None  # (module, name) of every slot called inside trace(); None = not tracing


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
    # every slot call comes here: once the module is imported, sys.modules skips import_module's machinery
    loaded = sys.modules.get(f"{impl}.{module}")
    return loaded if loaded is not None else importlib.import_module(f"{impl}.{module}")


def bind(module: str, name: str):
    """A function that calls slot ``name`` of task module ``module`` on the implementation chosen
    at call time. Bind once, at module level, with a comment pointing to the slot's file."""

    def slot(*args, **kwargs):
        if _traced is not None:
            _traced.add((module, name))
        return getattr(load(module), name)(*args, **kwargs)

    slot.__name__ = slot.__qualname__ = name
    slot.__doc__ = f"Task slot {name}: see solutions/{module.replace('.', '/')}.py (or exercises/)."
    slot.slot_module, slot.slot_name = module, name
    return slot


class Slots:
    """The slots of one task module as attributes, bound once for a whole library module::

        slots = tasks.slots("task01_autograd.elementwise")  # Task 1.2: solutions/task01_autograd/elementwise.py
        ...
        return slots.mul_backward(grad_output, a, b)

    Each attribute is :func:`bind`'s function for that name (made on first use, then kept)."""

    def __init__(self, module: str):
        self.module = module
        self._bound: dict = {}

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._bound:
            self._bound[name] = bind(self.module, name)
        return self._bound[name]

    def __repr__(self) -> str:
        return f"tasks.slots({self.module!r})"


def slots(module: str) -> Slots:
    """All the slots of task module ``module``: ``slots(module).name(...)`` calls ``bind(module, name)``."""
    return Slots(module)


@contextlib.contextmanager
def trace():
    """Record the slots called inside the block: ``with trace() as seen: ...`` leaves
    ``{(module, name), ...}`` in ``seen`` (how the recipes' slot lists are checked)."""
    global _traced
    saved, _traced = _traced, set()
    try:
        yield _traced
    finally:
        seen, _traced = _traced, saved
        if saved is not None:
            saved.update(seen)


_STUB_RE = re.compile(r"Task (\d+\.\d+)")


def _stub_task(body) -> str | None:
    """``"7.2"`` if a statement of ``body`` is the generated ``raise NotImplementedError("Task 7.2: ...")``."""
    for node in body:
        if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                and getattr(node.exc.func, "id", None) == "NotImplementedError" and node.exc.args
                and isinstance(node.exc.args[0], ast.Constant) and isinstance(node.exc.args[0].value, str)):
            match = _STUB_RE.match(node.exc.args[0].value)
            if match:
                return match.group(1)
    return None


def unfinished(slots, impl: str = "exercises") -> list[tuple[str, str, str]]:
    """Which of ``slots`` (``(module, name)`` pairs) are still the generated stubs in ``impl``.

    Read from the source files, never imported, so that one file with a SyntaxError cannot hide the
    others. Returns ``(task, "module.name", why)`` sorted by task: ``why`` is ``"stub"`` (the body,
    or one method's body for a class, is still ``raise NotImplementedError("Task ...")``), or the
    reason the file cannot be read (``"SyntaxError: ... (file, line N)"``, ``"file not found"``).
    """
    found, trees = [], {}
    for module, name in sorted(set(slots)):
        if module not in trees:
            spec = None
            try:
                spec = importlib.util.find_spec(f"{impl}.{module}")
            except ImportError:
                pass
            if spec is None or not spec.origin:
                trees[module] = "file not found"
            else:
                try:
                    with open(spec.origin, encoding="utf-8") as fh:
                        trees[module] = ast.parse(fh.read(), filename=spec.origin)
                except SyntaxError as e:
                    trees[module] = f"SyntaxError: {e.msg} ({e.filename}, line {e.lineno})"
        tree = trees[module]
        if isinstance(tree, str):
            found.append(("?", f"{module}.{name}", tree))
            continue
        for node in tree.body:
            if getattr(node, "name", None) != name:
                continue
            bodies = [node.body] if not isinstance(node, ast.ClassDef) else [
                item.body for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
            tasks_seen = [t for t in map(_stub_task, bodies) if t]
            if tasks_seen:
                found.append((tasks_seen[0], f"{module}.{name}", "stub"))
            break
    return sorted(found, key=lambda f: ([int(x) if x.isdigit() else 0 for x in f[0].split(".")], f[1]))
