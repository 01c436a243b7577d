"""The leak check of tools/make_student_release.py: does a file quote a reference solution?

A solution is the text between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` in ``solutions/``. A file
quotes one when it holds

* a run of WINDOW consecutive non-blank lines of a block (the whole block when it is shorter),
  compared after stripping each line (``fragments`` / ``leaks``): a copy pasted into a doc page or
  another module; or, in a Python file,
* a run of STMT_WINDOW statements of a block, compared as syntax trees with every local name
  numbered by first appearance (``code_fragments`` / ``code_leaks``): a copy whose names were
  changed or whose indentation moved is the same copy. Windows of fewer than MIN_NODES syntax-tree
  nodes are ignored: a line such as ``B, H, T, _ = q.shape`` is too common to be a quote.
"""
from __future__ import annotations

import ast
import copy
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
WINDOW = 3  # consecutive lines of a solution block that must not appear in the release
TASK_RE = re.compile(r"Task (\d+\.\d+)")


class ReleaseError(Exception):
    pass


@dataclass
class Block:
    file: str          # "task05_bert/masking.py", relative to solutions/
    task: str          # "5.2": the first "Task M.N" of the enclosing function's docstring
    func: str          # the enclosing function
    indent: str
    span: tuple        # (first, last) line index of the markers, 0-based, inclusive
    lines: list        # the stripped non-blank lines between the markers


def solution_blocks(root: Path = ROOT) -> list[Block]:
    """Every ``# BEGIN SOLUTION`` … ``# END SOLUTION`` block under ``root/solutions``."""
    blocks = []
    for path in sorted((root / "solutions").rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        funcs = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        lines, start = text.splitlines(), None
        for i, line in enumerate(lines):
            if line.strip() == BEGIN:
                start = i
            elif line.strip() == END and start is not None:
                func = max((f for f in funcs if f.lineno <= start + 1 <= f.end_lineno), key=lambda f: f.lineno)
                task = TASK_RE.search(ast.get_docstring(func) or "")
                if task is None:
                    raise ReleaseError(f"solutions/{path.relative_to(root / 'solutions')}:{start + 1}: a solution "
                                       f"block in {func.name!r}, whose docstring names no 'Task M.N'")
                body = [l.strip() for l in lines[start + 1:i] if l.strip()]
                indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
                blocks.append(Block(path.relative_to(root / "solutions").as_posix(), task.group(1), func.name,
                                    indent, (start, i), body))
                start = None
    return blocks


def fragments(blocks) -> dict[tuple, str]:
    """Every run of WINDOW lines of each block (the whole block if shorter) -> where it comes from."""
    out = {}
    for b in blocks:
        n = min(WINDOW, len(b.lines))
        for i in range(len(b.lines) - n + 1):
            out.setdefault(tuple(b.lines[i:i + n]), f"solutions/{b.file}:{b.span[0] + 1}")
    return out


def leaks(path: Path, frags: dict) -> list[str]:
    """The solution blocks that ``path`` quotes (empty if none, or if it is not text)."""
    try:
        lines = [s for s in (l.strip() for l in path.read_text(encoding="utf-8").splitlines()) if s]
    except (UnicodeDecodeError, OSError):
        return []
    sizes = {len(k) for k in frags}
    found = {frags[tuple(lines[i:i + n])] for n in sizes for i in range(len(lines) - n + 1)
             if tuple(lines[i:i + n]) in frags}
    return sorted(found)


# ---- the same check on normalised code: a renamed copy is still a copy ---------------------------
STMT_WINDOW = 3  # consecutive statements of a solution block, compared after renaming
MIN_NODES = 36   # AST nodes; a smaller window (``B, H, T, _ = q.shape``...) is too common to be a quote
_NAME = "__n__"


def _header(stmt: ast.stmt) -> ast.AST:
    """A copy of ``stmt`` without its nested statements (they follow it in the stream), with every
    name and argument marked for renaming."""
    node = copy.deepcopy(stmt)
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        if isinstance(getattr(node, field, None), list):
            setattr(node, field, [])
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            sub.id = _NAME + sub.id
        elif isinstance(sub, ast.arg):
            sub.arg = _NAME + sub.arg
    return node


def _stream(body) -> list[tuple[str, int]]:
    """The statements of ``body`` in source order, nested ones after their parent: (dump, node count)."""
    out = []
    for stmt in body:
        head = _header(stmt)
        out.append((ast.dump(head, annotate_fields=False), sum(1 for _ in ast.walk(head))))
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                out.extend(_stream(inner))
        for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
            out.extend(_stream(part.body))
    return out


def _canonical(window) -> str | None:
    """The window's dumps with names numbered by first appearance; None if the window is too small."""
    if sum(n for _, n in window) < MIN_NODES:
        return None
    names: dict[str, str] = {}
    text = "\n".join(d for d, _ in window)
    return re.sub(re.escape(_NAME) + r"(\w+)", lambda m: names.setdefault(m.group(1), f"v{len(names)}"), text)


def code_fragments(blocks, root: Path = ROOT) -> dict[str, str]:
    """Every run of STMT_WINDOW statements of each block (the whole block if shorter), normalised."""
    out = {}
    for b in blocks:
        lines = (root / "solutions" / b.file).read_text(encoding="utf-8").splitlines()
        try:
            tree = ast.parse(textwrap.dedent("\n".join(lines[b.span[0] + 1:b.span[1]])))
        except SyntaxError:
            continue
        stream = _stream(tree.body)
        n = min(STMT_WINDOW, len(stream))
        for i in range(len(stream) - n + 1):
            key = _canonical(stream[i:i + n])
            if key is not None:
                out.setdefault(key, f"solutions/{b.file}:{b.span[0] + 1}")
    return out


def code_leaks(path: Path, cfrags: dict) -> list[str]:
    """The solution blocks that the Python file ``path`` copies, renamed or re-indented or not."""
    if path.suffix != ".py" or not cfrags:
        return []
    try:
        stream = _stream(ast.parse(path.read_text(encoding="utf-8")).body)
    except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
        return []
    found = set()
    for n in range(1, STMT_WINDOW + 1):
        for i in range(len(stream) - n + 1):
            key = _canonical(stream[i:i + n])
            if key is not None and key in cfrags:
                found.add(cfrags[key])
    return sorted(found)

