#!/usr/bin/env python3
"""Write exercises/ from solutions/: same files, names, signatures and docstrings, stub bodies.

Every task slot in ``solutions/`` marks its reference body::

    def mul_backward(grad_output, a, b):
        \"\"\"Task 1.2: ... maths, shapes, hints ...\"\"\"
        # BEGIN SOLUTION
        ...reference code...
        # END SOLUTION

The lines from ``# BEGIN SOLUTION`` to ``# END SOLUTION`` (inclusive) become one line,
``raise NotImplementedError("Task 1.2: mul_backward")``, at the same indentation. The task id comes
from the enclosing function's docstring (its first ``Task M.N``); a block outside a function, or in
a function whose docstring names no task, is an error.

    python tools/make_exercises.py          # (re)write exercises/
    python tools/make_exercises.py --check  # exit 1 if exercises/ differs from what would be written
"""
from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
TASK_RE = re.compile(r"Task (\d+\.\d+)")

INIT_DOC = '''"""Your implementations of minilm's task slots. Fill in the bodies that raise NotImplementedError.

Generated from solutions/ by tools/make_exercises.py: the names, signatures and docstrings are the
reference's; only the bodies are left to you. Run the graded tests of one task with
``pytest --impl exercises -m task1_2`` or see everything with ``minilm grade``.
"""
'''


class StubError(Exception):
    pass


def _enclosing_function(tree: ast.AST, lineno: int):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.lineno <= lineno <= node.end_lineno:
                if best is None or node.lineno > best.lineno:
                    best = node
    return best


def stub_source(text: str, path: str) -> tuple[str, list[str]]:
    """Return the stub version of one solution file and the slots it holds ("1.2 mul_backward")."""
    tree = ast.parse(text, filename=path)
    lines = text.splitlines(keepends=True)
    out, slots, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == BEGIN:
            indent = line[: len(line) - len(line.lstrip())]
            func = _enclosing_function(tree, i + 1)
            if func is None:
                raise StubError(f"{path}:{i + 1}: {BEGIN} outside a function")
            doc = ast.get_docstring(func) or ""
            match = TASK_RE.search(doc)
            if not match:
                raise StubError(f"{path}:{i + 1}: function {func.name!r} has a solution block but its "
                                f"docstring names no 'Task M.N'")
            j = i + 1
            while j < len(lines) and lines[j].strip() != END:
                if lines[j].strip() == BEGIN:
                    raise StubError(f"{path}:{j + 1}: nested {BEGIN}")
                j += 1
            if j == len(lines):
                raise StubError(f"{path}:{i + 1}: {BEGIN} without {END}")
            out.append(f'{indent}raise NotImplementedError("Task {match.group(1)}: {func.name}")\n')
            slots.append(f"{match.group(1)} {func.name}")
            i = j + 1
            continue
        if line.strip() == END:
            raise StubError(f"{path}:{i + 1}: {END} without {BEGIN}")
        out.append(line)
        i += 1
    stub = "".join(out)
    ast.parse(stub, filename=path)  # the stub must still be valid Python
    return stub, slots


def expected_tree(src: Path) -> dict[str, str]:
    files = {}
    for path in sorted(src.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(src).as_posix()
        if rel == "__init__.py":
            files[rel] = INIT_DOC
            continue
        files[rel], _ = stub_source(path.read_text(encoding="utf-8"), f"solutions/{rel}")
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail (exit 1) if exercises/ has drifted")
    ap.add_argument("--src", type=Path, default=ROOT / "solutions")
    ap.add_argument("--dst", type=Path, default=ROOT / "exercises")
    args = ap.parse_args(argv)
    try:
        want = expected_tree(args.src)
    except StubError as e:
        print(f"make_exercises: {e}", file=sys.stderr)
        return 2
    have = {p.relative_to(args.dst).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(args.dst.rglob("*.py")) if "__pycache__" not in p.parts}
    if args.check:
        problems = []
        for rel in sorted(set(want) | set(have)):
            if rel not in have:
                problems.append(f"missing exercises/{rel}")
            elif rel not in want:
                problems.append(f"exercises/{rel} has no counterpart in solutions/")
            elif want[rel] != have[rel]:
                diff = difflib.unified_diff(have[rel].splitlines(), want[rel].splitlines(),
                                            f"exercises/{rel}", "expected", lineterm="", n=1)
                problems.append("\n".join(list(diff)[:12]))
        if problems:
            print("exercises/ is out of sync with solutions/ (run: python tools/make_exercises.py):",
                  file=sys.stderr)
            for p in problems:
                print(p, file=sys.stderr)
            return 1
        print(f"exercises/ is in sync with solutions/ ({len(want)} files)")
        return 0
    for rel in sorted(set(have) - set(want)):
        (args.dst / rel).unlink()
    for rel, text in want.items():
        target = args.dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if have.get(rel) != text:
            target.write_text(text, encoding="utf-8")
    print(f"wrote exercises/ ({len(want)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
