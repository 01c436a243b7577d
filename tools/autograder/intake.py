"""Take a student's submission in: find its exercises, keep only the files the kit knows, scan them.

No code of the submission runs here: files are located by name, read as text and parsed with
``ast`` (parsing executes nothing). Three layouts are accepted, in this order:

1. ``exercises/`` at the top of the submission (a GitHub repository linked to Gradescope, or a zip
   of the repository's contents);
2. ``NAME/exercises/`` one folder down (the repository folder zipped whole);
3. bare task files: ``taskNN_*/FILE.py`` folders, or ``FILE.py`` at the top when only one task module
   has a file of that name (``matmul.py``, ``masking.py``, ``loss.py`` exist in two modules: put
   those in their ``taskNN_*`` folder).

Only ``exercises/taskNN_*/FILE.py`` files whose path exists in the kit are taken (``__init__.py``
excepted: it holds no task, the kit's own stays). Everything else is ignored and listed.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 1_000_000  # a task file larger than this is not a hand-written answer
TASK_DIR_RE = re.compile(r"^task\d\d_\w+$")
STUB_RE = re.compile(r'NotImplementedError\(\s*"Task (\d+\.\d+)')
# names whose use may tamper with the grading from inside the student's own child: shown for review
REVIEW = {
    "pytest": "imports pytest (could patch the test run's reports)",
    "_pytest": "imports _pytest (could patch the test run's reports)",
    "ctypes": "imports ctypes (raw memory access)",
    "gc": "imports gc (can reach any live object, e.g. the test's expected values)",
    "inspect": "imports inspect (can read the calling test's frame)",
    "builtins": "imports builtins (can replace built-in functions)",
    "importlib": "imports importlib (imports chosen at run time)",
    "subprocess": "imports subprocess (runs other programs)",
    "socket": "imports socket (network)",
    "multiprocessing": "imports multiprocessing (processes outside the grader's watch)",
}
REVIEW_ATTRS = {("sys", "modules"): "uses sys.modules (can swap modules, e.g. the tests' helpers)",
                ("sys", "_getframe"): "uses sys._getframe (can read the calling test's frame)",
                ("os", "system"): "uses os.system (runs other programs)"}
REVIEW_CALLS = {"__import__": "calls __import__ (imports chosen at run time)", "exec": "calls exec",
                "eval": "calls eval", "compile": "calls compile", "globals": "calls globals()"}
# the tests' own code: its checkers compute what the tests expect (tests.helpers.numeric_grad), so a
# task file that reaches it is refused like one that reaches solutions/
TEST_CODE = ("tests", "conftest")
TEST_CODE_REASON = "the tests' code is the checker, not the student's answer"
TEST_MODULE_RE = re.compile(r"^\s*(tests|conftest)(\.\w+)*\s*$")            # "tests.helpers", for import_module
TEST_PATH_RE = re.compile(r"(^|[/\\])(tests[/\\].*\.py|conftest\.py)\s*$")  # "tests/helpers.py", for run_path


@dataclass
class Intake:
    layout: str = ""
    taken: dict = field(default_factory=dict)      # "task01_autograd/backward.py" -> source Path
    ignored: list = field(default_factory=list)    # "conftest.py (not a task file)"
    forbidden: dict = field(default_factory=dict)  # "task01_autograd/backward.py" -> reason (0 for its tasks)
    review: dict = field(default_factory=dict)     # file -> [reasons] (graded as usual, shown for review)


def known_files(kit: Path) -> dict[str, set[str]]:
    """The kit's task files ``"task01_autograd/backward.py"`` -> the tasks whose stubs they hold."""
    out = {}
    for path in sorted((kit / "exercises").glob("task*_*/*.py")):
        if path.name != "__init__.py" and TASK_DIR_RE.match(path.parent.name):
            out[f"{path.parent.name}/{path.name}"] = set(STUB_RE.findall(path.read_text(encoding="utf-8")))
    return out


def reference_blocks(kit: Path, min_lines: int = 4) -> list[tuple[str, tuple]]:
    """(task, stripped lines) of every ``# BEGIN SOLUTION`` block of at least ``min_lines`` lines."""
    out = []
    for path in sorted((kit / "solutions").glob("task*_*/*.py")):
        lines, start = path.read_text(encoding="utf-8").splitlines(), None
        for i, line in enumerate(lines):
            if line.strip() == "# BEGIN SOLUTION":
                start = i
            elif line.strip() == "# END SOLUTION" and start is not None:
                body = tuple(l.strip() for l in lines[start + 1:i] if l.strip() and not l.strip().startswith("#"))
                task = STUB_RE.search((kit / "exercises" / path.parent.name / path.name).read_text(encoding="utf-8"))
                if len(body) >= min_lines and task:
                    out.append((f"{path.parent.name}/{path.name}", body))
                start = None
    return out


def verbatim(text: str, blocks) -> list[str]:
    """The reference files whose solution blocks ``text`` contains line for line (comments aside)."""
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
    joined = "\n" + "\n".join(lines) + "\n"
    return sorted({f for f, body in blocks if "\n" + "\n".join(body) + "\n" in joined})


def _all_files(top: Path) -> list[Path]:
    return sorted(p for p in top.rglob("*") if p.is_file() or p.is_symlink())


def find_layout(sub: Path, known) -> tuple[str, dict[str, Path], Path | None]:
    """(layout description, {kit path: file}, the folder taken as exercises/ or None)."""
    if (sub / "exercises").is_dir():
        return "exercises/ at the top of the submission", {}, sub / "exercises"
    down = sorted(p for p in sub.glob("*/exercises") if p.is_dir())
    if down:
        note = "" if len(down) == 1 else f" (several found: {', '.join(str(p.relative_to(sub)) for p in down)}; took the first)"
        return f"a repository one folder down: {down[0].relative_to(sub)}/{note}", {}, down[0]
    by_name: dict[str, list[str]] = {}
    for rel in known:
        by_name.setdefault(rel.split("/")[1], []).append(rel)
    picked = {}
    for path in _all_files(sub):
        rel = path.relative_to(sub).as_posix()
        if rel in known:
            picked[rel] = path
        elif "/" not in rel and len(by_name.get(rel, [])) == 1:
            picked.setdefault(by_name[rel][0], path)
    return "bare task files (no exercises/ folder)", picked, None


def scan(text: str) -> tuple[str | None, list[str]]:
    """(the reason this file gets 0, or None; the reasons to review it). Reads the AST only."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None, []  # the grader reports it (status "error", with the line)
    docstrings = {id(n.value) for n in ast.walk(tree)
                  if isinstance(n, ast.Expr) and isinstance(getattr(n, "value", None), ast.Constant)}
    review = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else []
            if node.level and any(a.name == "solutions" for a in node.names):
                return f"imports solutions (line {line}): the reference is not the student's answer", []
            if node.level:  # from .. import tests, from ..tests import helpers
                relative = [a.name for a in node.names] + [(node.module or "").split(".")[0]]
                hit = next((n for n in relative if n in TEST_CODE), None)
                if hit:
                    return f"imports {hit} (line {line}): {TEST_CODE_REASON}", []
        else:
            names = []
        for name in names:
            top = name.split(".")[0]
            if top == "solutions":
                return f"imports {name} (line {line}): the reference is not the student's answer", []
            if top in TEST_CODE:
                return f"imports {name} (line {line}): {TEST_CODE_REASON}", []
            if top in REVIEW:
                review.append((line, REVIEW[top]))
        if isinstance(node, ast.Name) and node.id == "solutions":
            return f"uses the name 'solutions' (line {line}): the reference is not the student's answer", []
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in docstrings:
            value = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            if "solutions" in value:
                return (f"reaches the reference by name or path (line {line}: {value[:60]!r}): the reference is not "
                        f"the student's answer", [])
            if TEST_MODULE_RE.match(value) or TEST_PATH_RE.search(value):
                return f"reaches the tests by name or path (line {line}: {value[:60]!r}): {TEST_CODE_REASON}", []
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            reason = REVIEW_ATTRS.get((node.value.id, node.attr))
            if reason:
                review.append((line, reason))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REVIEW_CALLS:
            review.append((line, REVIEW_CALLS[node.func.id]))
    return None, [f"line {n}: {why}" for n, why in sorted(set(review))]


def take(sub: Path, kit: Path) -> Intake:
    """Decide, for every file of the submission, whether it is taken; scan what is taken."""
    known = known_files(kit)
    out = Intake()
    if not sub.is_dir():
        out.layout = f"no submission folder at {sub}"
        return out
    out.layout, picked, ex_dir = find_layout(sub, known)
    blocks = reference_blocks(kit)
    for path in _all_files(sub):
        shown = path.relative_to(sub).as_posix()
        rel = None
        if ex_dir is not None and ex_dir in path.parents:
            cand = path.relative_to(ex_dir).as_posix()
            rel = cand if cand in known else None
        elif ex_dir is None:
            rel = next((k for k, p in picked.items() if p == path), None)
        if rel is None:
            why = "a symbolic link" if path.is_symlink() else "not a task file of the kit"
            if path.name == "__init__.py" and ex_dir is not None and ex_dir in path.parents:
                why = "a package __init__.py: it holds no task, the kit's own is used"
            out.ignored.append(f"{shown} ({why})")
            continue
        if path.is_symlink() or path.stat().st_size > MAX_BYTES:
            out.ignored.append(f"{shown} ({'a symbolic link' if path.is_symlink() else 'larger than 1 MB'})")
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        bad, review = scan(text)
        same = verbatim(text, blocks)
        if same:  # e.g. copied from another module's reference read out during an earlier run
            review.append(f"holds solution blocks of {', '.join(same)} verbatim")
        if bad:
            out.forbidden[rel] = bad
        else:
            out.taken[rel] = path
        if review:
            out.review[rel] = review
    return out
