"""The layers of the kit, and what each may import. Read from the source with ``ast``: nothing is
imported, so a file that cannot even be imported is still checked.

    autograd/                 the engine: never imports minilm, solutions or exercises. The one way
                              in to the task code is autograd/tasks.py reaching ``<impl>.<module>``
                              by name through importlib (ALLOWED_DYNAMIC below lists those calls).
    solutions/, exercises/    the two implementations of the task slots: neither imports the other.
    minilm/models, blocks, corruption, tokenizers
                              the library: never the command layer (minilm.commands, minilm.cli).
    minilm/                   never imports tests/ or tools/.

Every import counts: at module level, inside functions, under ``if``/``try``, relative ones
(resolved against the file's package), and importlib calls whose target is a string literal or an
f-string with a literal head (``f"minilm.commands.{name}"``). A dynamic import whose target is
computed (``import_module(name)``) cannot be read: inside autograd/ it fails unless listed in
ALLOWED_DYNAMIC; elsewhere it is not checked.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DYNAMIC = {"importlib.import_module", "import_module", "importlib.util.find_spec", "find_spec",
           "__import__", "importlib.__import__"}

# autograd/tasks.py: (function, call) — the calls that reach solutions/ or exercises/ by name
ALLOWED_DYNAMIC = {
    ("solutions_available", 'importlib.util.find_spec("solutions")'),      # does solutions/ exist?
    ("load", 'importlib.import_module(f"{impl}.{module}")'),               # the slot's module
    ("unfinished", 'importlib.util.find_spec(f"{impl}.{module}")'),        # its file, read as text
}
ALLOWED_DYNAMIC = {(fn, ast.unparse(ast.parse(call, mode="eval"))) for fn, call in ALLOWED_DYNAMIC}


def python_files(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py") if "__pycache__" not in p.parts)


def _package(path: Path) -> list[str]:
    """The dotted package a file's relative imports start from: minilm/grading/report.py -> minilm.grading."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1]  # a module's package; for __init__.py, the package itself


def _dynamic_target(call: ast.Call) -> str | None:
    """"minilm.x" for import_module("minilm.x"), the literal head of an f-string ("minilm.commands."),
    "" for a target computed at run time (or an f-string that starts with a variable)."""
    if not call.args:
        return ""
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return arg.values[0].value
    return ""


def imports(path: Path) -> list[tuple[int, str, list[str], str | None, ast.AST]]:
    """(line, source text, imported dotted names, enclosing function, node) of every import in
    ``path``. ``from a import b`` yields both ``a`` and ``a.b`` (b may be a submodule); a computed
    dynamic target yields the empty name."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path))
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            names = None
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    package = _package(path)
                    package = package[:len(package) - (child.level - 1)]
                    base = ".".join(package + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in child.names if a.name != "*"]
            elif isinstance(child, ast.Call) and ast.unparse(child.func) in DYNAMIC:
                names = [_dynamic_target(child)]
            if names is not None:
                found.append((child.lineno, ast.get_source_segment(text, child) or ast.unparse(child),
                              names, function, child))
            visit(child, inner)

    visit(tree, None)
    return found


def _hits(name: str, packages) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def violations(files, forbidden, why: str, allow=lambda path, node, function: False) -> list[str]:
    out = []
    for path in files:
        for line, source, names, function, node in imports(path):
            if allow(path, node, function):
                continue
            bad = [n for n in names if _hits(n, forbidden) or (n == "" and "" in forbidden)]
            if bad:
                shown = " ".join(source.split())
                out.append(f"{path.relative_to(ROOT)}:{line}: {shown!r} — {why}")
    return out


def _assert_none(found: list[str]):
    assert not found, f"{len(found)} import(s) cross a layer:\n  " + "\n  ".join(found)


def test_autograd_imports_no_minilm_and_no_task_code():
    def allow(path, node, function):
        return (path == ROOT / "autograd" / "tasks.py" and isinstance(node, ast.Call)
                and (function, ast.unparse(node)) in ALLOWED_DYNAMIC)

    _assert_none(violations(
        python_files("autograd"), {"minilm", "solutions", "exercises", ""},
        "autograd/ is the engine and stands alone; it reaches the task code only through the importlib calls "
        "that autograd/tasks.py makes by name (ALLOWED_DYNAMIC in this test)", allow))


def test_the_allowed_dynamic_imports_still_exist():
    """If autograd/tasks.py changes how it loads the task code, update ALLOWED_DYNAMIC, not the rule."""
    calls = {(fn, ast.unparse(node)) for *_, fn, node in imports(ROOT / "autograd" / "tasks.py")
             if isinstance(node, ast.Call)}
    assert ALLOWED_DYNAMIC <= calls, f"autograd/tasks.py no longer makes {sorted(ALLOWED_DYNAMIC - calls)}"


@pytest.mark.parametrize("side, other", [("solutions", "exercises"), ("exercises", "solutions")])
def test_solutions_and_exercises_never_import_each_other(side, other):
    _assert_none(violations(python_files(side), {other},
                            f"{side}/ must not import {other}/: the two implementations of a slot stand apart "
                            "(exercises/ is generated from solutions/ by tools/make_exercises.py)"))


def test_library_layers_never_import_the_command_layer():
    folders = ("minilm/models", "minilm/blocks", "minilm/corruption", "minilm/tokenizers")
    _assert_none(violations(python_files(*folders), {"minilm.commands", "minilm.cli"},
                            "models, blocks, corruption and tokenizers are library code; the commands call "
                            "them, never the reverse"))


def test_minilm_never_imports_tests_or_tools():
    _assert_none(violations(python_files("minilm"), {"tests", "tools"},
                            "the library must run without the repository's tests/ and tools/ "
                            "(a student release or an installed copy may not have them)"))


def test_the_scanner_sees_every_kind_of_import(tmp_path, monkeypatch):
    """The rules above would pass vacuously if the scanner missed imports: show it finds each kind."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    pkg = tmp_path / "minilm" / "models"
    pkg.mkdir(parents=True)
    (pkg / "x.py").write_text(
        "import minilm.cli\n"                                  # module level
        "def f():\n"
        "    from ..commands import train\n"                   # function-local, relative
        "    from minilm import commands\n"                    # a submodule as a name
        "    importlib.import_module(f'minilm.commands.{n}')\n"  # dynamic, literal head
        "    import minilm.data\n",                            # allowed
        encoding="utf-8")
    found = violations([pkg / "x.py"], {"minilm.commands", "minilm.cli"}, "no")
    assert [f.split(":")[1] for f in found] == ["1", "3", "4", "5"], found


# ---- no import cycle at module level -------------------------------------------------------------------
# An edge a -> b of this set is allowed to close a loop, with its reason; every other loop fails.
ALLOWED_CYCLE_EDGES = {
    # Tensor's operators call the ops, and the ops build Tensors: tensor.py imports ops as its last
    # line, once Tensor exists (tinygrad's tensor.py does the same with its function.py).
    ("autograd.tensor", "autograd.ops"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_level_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of each import that runs when ``path`` is imported: module level, in
    classes and under ``if``/``try``/``with``; not inside functions, not under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _package(path)
    found = []

    def visit(body):
        for node in body:
            if isinstance(node, ast.Import):
                found.extend((node.lineno, a.name, None) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[:len(package) - (node.level - 1)] + ([base] if base else []))
                found.extend((node.lineno, base, a.name) for a in node.names)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
            elif isinstance(node, (ast.ClassDef, ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def import_graph(*folders: str) -> dict[str, dict[str, int]]:
    """module -> {module it imports at module level: line}, over the files of ``folders``. ``from a
    import b`` points at a.b when that is a module of ours, else at a."""
    files = {_module_name(p): p for p in python_files(*folders)}
    graph = {}
    for name, path in files.items():
        edges = {}
        for line, base, item in module_level_imports(path):
            target = f"{base}.{item}" if item and f"{base}.{item}" in files else base
            while target and target not in files:  # import a.b.c of a module we do not have: its package
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The loops of ``graph``: its strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_no_import_cycle_at_module_level():
    """A loop of module-level imports makes the import order matter (a name is missing when the
    loop is entered from the other side), and function-local imports to dodge it hide the layers."""
    graph = import_graph("minilm", "autograd")
    for a, b in ALLOWED_CYCLE_EDGES:
        assert b in graph.get(a, {}), f"ALLOWED_CYCLE_EDGES: {a} no longer imports {b}: remove the entry"
        del graph[a][b]
    found = cycles(graph)
    shown = ["  " + " -> ".join(c) + "\n    " + "; ".join(f"{a} imports {b} (line {graph[a][b]})"
                                                       for a in c for b in graph[a] if b in c) for c in found]
    assert not found, "module-level import loops:\n" + "\n".join(shown)


def test_the_cycle_finder_finds_a_loop(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    pkg = tmp_path / "minilm"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text("from . import b\n", encoding="utf-8")
    (pkg / "b.py").write_text("import numpy\nfrom minilm.c import f\ndef g():\n    from . import a\n", encoding="utf-8")
    (pkg / "c.py").write_text("try:\n    from .a import x\nexcept ImportError:\n    pass\n", encoding="utf-8")
    graph = import_graph("minilm")
    assert graph["minilm.b"] == {"minilm.c": 2}, graph  # numpy is not ours; the local import does not count
    assert cycles(graph) == [["minilm.a", "minilm.b", "minilm.c"]]


# ---- short functions -------------------------------------------------------------------------------------
MAX_FUNCTION_LINES = 60
# path:function -> why it may be longer. Keep it empty where you can.
LONG_FUNCTIONS_ALLOWED: dict[str, str] = {}


def long_functions(*folders: str) -> dict[str, int]:
    """``"path:function": lines`` (def line to last line, nested functions included) of every function
    in ``folders`` longer than MAX_FUNCTION_LINES."""
    out = {}
    for path in python_files(*folders):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    out[f"{path.relative_to(ROOT).as_posix()}:{node.name}"] = n
    return out


def test_no_function_is_longer_than_60_lines():
    """A function that does not fit on a screen does several things: split it into named steps."""
    found = {k: n for k, n in long_functions("minilm", "autograd").items() if k not in LONG_FUNCTIONS_ALLOWED}
    assert not found, (f"functions over {MAX_FUNCTION_LINES} lines (split them, or add them to "
                       "LONG_FUNCTIONS_ALLOWED with the reason):\n  "
                       + "\n  ".join(f"{k}: {n} lines" for k, n in sorted(found.items())))


# ---- a root that says where you are ----------------------------------------------------------------------
MAX_ROOT_MODULES = 8


def test_the_root_of_minilm_holds_few_modules():
    """Loose files at the top of minilm/ hide where an idea lives: new code goes into a package
    (docs/architecture.md lists them)."""
    root = sorted(p.name for p in (ROOT / "minilm").glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, (f"minilm/ holds {len(root)} modules at its root ({', '.join(root)}); "
                                           f"at most {MAX_ROOT_MODULES}: move the new one into a package")
