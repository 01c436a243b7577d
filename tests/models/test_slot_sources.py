"""Slots are pieces (STYLE 14): a slot takes arrays, never the model, and never reaches another slot
through the library. The library runs the composite steps and hands each slot the arrays it needs.

Read from the source of solutions/ and exercises/, one task folder at a time. A slot file may import
helpers from minilm (argument checks, a distribution, a character table), but nothing that is, holds
or calls a slot binding: the bindings (``tasks.bind`` / ``tasks.slots``), a module that makes them,
or a library function that calls one. Every task folder is checked.
"""
import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir() and p.name.startswith("task"))


def _is_binding(obj) -> bool:
    return getattr(obj, "slot_module", None) is not None


def _reaches_a_slot(obj) -> bool:
    """A slot binding, a module that holds one, or a function whose code names one."""
    if inspect.ismodule(obj):
        return any(_is_binding(value) for value in vars(obj).values())
    if _is_binding(obj):
        return True
    if inspect.isfunction(obj):
        return any(_is_binding(obj.__globals__.get(name)) for name in obj.__code__.co_names)
    return False


def _imported(node):
    """(what the import names, the object it binds) for each name of an import statement from minilm."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "minilm":
                yield alias.name, importlib.import_module(alias.name)
    elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "minilm":
        module = importlib.import_module(node.module)
        for alias in node.names:
            obj = getattr(module, alias.name, None)
            if obj is None:
                obj = importlib.import_module(f"{node.module}.{alias.name}")
            yield f"{node.module}.{alias.name}", obj


def test_every_task_folder_is_checked():
    assert len(FOLDERS) == 12 and FOLDERS[0] == "task01_autograd"


@pytest.mark.parametrize("folder", FOLDERS)
def test_slots_take_arrays_and_reach_no_other_slot(folder):
    paths = [p for d in ("solutions", "exercises") for p in sorted((ROOT / d / folder).glob("*.py"))]
    assert paths, f"no slot files found for {folder}"
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            names = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
            assert "model" not in names, f"{path}: {fn.name} receives the model"
        for node in ast.walk(tree):
            for name, obj in _imported(node):
                assert not _reaches_a_slot(obj), \
                    f"{path}: imports {name}, which is, holds or calls a slot of the library"
            if isinstance(node, ast.Attribute) and node.attr in ("slots", "bind"):
                assert getattr(node.value, "id", None) != "tasks", f"{path}: calls other slots through tasks.{node.attr}"


def test_the_check_finds_a_slot_behind_an_import():
    """The check itself: each kind of forbidden import is caught, a plain helper is not."""
    from minilm.corruption import bart, roberta
    assert _reaches_a_slot(bart)                        # a module of bindings (``import ... as bart_lib``)
    assert _reaches_a_slot(bart.poisson_span_lengths)   # a binding
    assert _reaches_a_slot(roberta.roberta_mask)        # a library function that calls slots
    assert not _reaches_a_slot(bart.truncated_poisson_pmf)
