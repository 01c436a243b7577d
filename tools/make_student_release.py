#!/usr/bin/env python3
"""Write a student release of minilm into DIR: the kit without its solutions, as a fresh git repository.

    python tools/make_student_release.py DIR              # every task module is the student's
    python tools/make_student_release.py DIR --given 1,2,5.1  # these ship with their reference

The release is this checkout's working tree, except:

* no ``solutions/``, and no text from inside any ``# BEGIN SOLUTION`` … ``# END SOLUTION`` block
  anywhere: checked after writing (every run of 3 consecutive non-blank lines of a block, or the
  whole block when it is shorter, must not occur in any file; and in a Python file, no run of 3
  statements of a block, compared as syntax trees with every local name renamed, so that a renamed
  or re-indented copy is found too). A doc page that quotes solution code is left out with a
  warning; any other file that does stops the release;
* no held-back graded tests (``@pytest.mark.hidden``, in ``tests/graded/hidden/``: the autograder
  runs them) and no autograder templates (``tools/autograder/``, the Classroom 50 autograder
  included), checked after writing; the release carries ``.github/workflows/classroom.yml``
  instead, a plain GitHub Actions workflow (no GitHub Classroom action: Classroom is being sunset)
  that runs ``minilm grade`` on every push (``tools/autograder/classroom.py``);
* no maintainer machinery: ``.ci/``, every ``tools/make_*`` (exercises, golden files, releases),
  ``tools/check_stubs.py`` and any other tool that mentions ``solutions``, this tool's test; no
  caches, ``.venv``, ``runs/``, build output;
* ``setup.cfg`` packages no ``solutions`` and its pytest ``testpaths`` is ``tests/graded``: in the
  release, plain ``pytest`` grades the student's ``exercises/`` (the task slots fall back to
  ``exercises`` when there is no ``solutions`` package, see ``autograd/tasks.py``). The rule for
  what ``pytest`` runs: the graded tests, and nothing else. ``tests/engine`` and ``tests/models`` ship
  but stay out of ``testpaths``: they drive the library, which here runs on the student's slots, so
  they pass only when the tasks they touch are done (a final check: ``pytest tests/engine tests/models``);
  a test that touches no slot checks code the student never edits and grades nothing;
* ``README.md`` (and ``README.zh-TW.md``) are the student's first page: install, ``minilm grade``,
  ``exercises/task01_autograd/``, ``docs/tasks/01-autograd.md``, ``pytest -m task1_1``;
* ``--given 1,2,5.1``: the slots of those task modules and tasks hold their reference bodies in
  ``exercises/``, and a graded test file is left out when every test in it grades a given task (for a
  course that starts later in the catalogue or skips a module others run on; see docs/course-map.md).

DIR must not exist yet (or be empty) and must lie outside this checkout. The release is committed
once (``git init`` + one commit), so its history holds nothing else. Needs ``exercises/`` in sync
with ``solutions/`` (``python tools/make_exercises.py --check``).
"""
from __future__ import annotations

import argparse
import ast
import copy
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
WINDOW = 3  # consecutive lines of a solution block that must not appear in the release
SKIP_TOP = {".git", ".ci", ".venv", "venv", "solutions", "runs", "build", "dist"}
SKIP_ANY = {"__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", ".mypy_cache", ".ruff_cache"}
SKIP_SUFFIX = (".pyc", ".pyo", ".nbi", ".nbc", ".egg-info", ".DS_Store")
INSTRUCTOR_FILES = {"tools/check_stubs.py", "tests/models/test_student_release.py", "tests/models/test_autograder.py",
                    "tests/models/test_github_grading.py", "docs/instructors.md", "docs/instructors.zh-TW.md"}
HIDDEN_MARK = "mark.hidden"  # a held-back graded test (tests/graded/hidden/): the autograder's, not the student's
TASK_RE = re.compile(r"Task (\d+\.\d+)")
MARKER_RE = re.compile(r"^\s+(task(\d+)_(\d+|capstone)):\s*(.*)$")


class ReleaseError(Exception):
    pass


# ---- what goes in ------------------------------------------------------------------------------
def release_files(root: Path = ROOT) -> list[Path]:
    """The files of ``root`` that a release copies (paths relative to ``root``)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames
                             if not (rel_dir == Path(".") and d in SKIP_TOP) and d not in SKIP_ANY
                             and not d.endswith(SKIP_SUFFIX))
        for name in sorted(filenames):
            rel = rel_dir / name
            path = root / rel
            if (name.endswith(SKIP_SUFFIX) or path.is_symlink() or rel.as_posix() in INSTRUCTOR_FILES
                    or (rel_dir == Path(".") and name in SKIP_TOP)):  # in a git worktree, .git is a file
                continue
            if rel.parts[:2] == ("tools", "autograder") or (  # the Gradescope bundle's templates
                    rel.parts[:2] == ("tests", "graded") and name.endswith(".py")
                    and HIDDEN_MARK in path.read_text(encoding="utf-8", errors="ignore")):
                continue  # held-back tests never reach a student
            if rel.parts[0] == "tools" and (name.startswith("make_")  # generators: exercises, goldens, releases
                                            or "solutions" in path.read_text(encoding="utf-8", errors="ignore")):
                continue  # maintainers' tools: of no use to a student, and some read the reference
            out.append(rel)
    return out


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


# ---- rewritten files ---------------------------------------------------------------------------
def release_setup_cfg(text: str) -> str:
    """setup.cfg without the ``solutions`` package and with ``testpaths = tests/graded``."""
    lines, out, changed = text.splitlines(keepends=True), [], 0
    for line in lines:
        if line.strip() in ("solutions", "solutions.*"):
            changed += 1
            continue
        if re.match(r"^testpaths\s*=", line):
            line, changed = "testpaths = tests/graded\n", changed + 1
        out.append(line)
    if changed != 3:
        raise ReleaseError("setup.cfg: expected 'solutions', 'solutions.*' under [options.packages.find] "
                           "and one 'testpaths =' line; update release_setup_cfg() for the new layout")
    return "".join(out)


def task_table(root: Path, given) -> list[str]:
    """Markdown rows ``| module | folder | theory | tasks |`` from setup.cfg's task markers."""
    tasks: dict[int, list[str]] = {}
    for line in (root / "setup.cfg").read_text(encoding="utf-8").splitlines():
        m = MARKER_RE.match(line)
        if m and m.group(3).isdigit():
            desc = m.group(4).split(",", 1)[-1].strip()
            tasks.setdefault(int(m.group(2)), []).append(f"{m.group(2)}.{m.group(3)} {desc}")
    rows = ["| module | your code | theory | tasks |", "|---|---|---|---|"]
    for n in sorted(tasks):
        folder = next(iter(sorted((root / "exercises").glob(f"task{n:02d}_*"))), None)
        page = next(iter(sorted((root / "docs" / "tasks").glob(f"{n:02d}-*.md"))), None)
        where = f"`exercises/{folder.name}/`" if folder else "—"
        theory = f"[{page.name}](docs/tasks/{page.name})" if page else "—"
        done = [t for t in given if t.split(".")[0] == str(n)]
        note = f" (given: {', '.join(sorted(done))})" if done else ""
        name = folder.name.split("_", 1)[-1] if folder else ""
        rows.append(f"| {n} {name}{note} | {where} | {theory} | {' · '.join(tasks[n])} |")
    return rows


README = """# minilm — student release

{intro}

This copy has **no reference solutions**: every task slot in `exercises/` is yours to write.{given}

## Start here

1. Install, in this folder (Python 3.10 or newer):
   ```bash
   python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]"
   ```
2. See where you stand: `minilm grade` prints every task with its points, its status (`not started`
   for now) and the first failing check.
3. Open `exercises/task01_autograd/`. Each function that raises
   `NotImplementedError("Task 1.1: ...")` is a task; its docstring gives the maths, the shapes and
   what the tests check.
4. Read `docs/tasks/01-autograd.md`, the theory of task module 1.
5. Write Task 1.1 and grade it: `pytest -m task1_1`. Then run `minilm grade` again.

## What `pytest` does here

- `pytest` grades your work: it runs the graded tests (`tests/graded/`) on your `exercises/`.
  `pytest -m task3_1` runs one task; `pytest -m slow` runs the capstones (your code inside the
  real training pipeline); `minilm grade` runs them all and prints the score table
  (`minilm grade --json results.json` writes Gradescope's results file).
- Tasks build on each other, and so do their scores. This copy has no reference code: the library
  runs every task slot on your code, so a task whose tests go through another task's slot can only
  pass once that one works. The graded tests of Task 3.1 run attention through your autograd
  engine (module 1) and your softmax (Task 2.1); those of module 10 go through Task 1.1 and
  Task 3.3. Until then `minilm grade` shows the task as `blocked by Task 1.1` (its failures read
  `NotImplementedError: Task 1.1: ...`): finish that one first. `docs/course-map.md` shows which
  task needs which, how long each takes, and suggested orders.
- `tests/engine/` and `tests/models/` are the kit's own tests. Here they run the library on your
  code, so they pass only once the tasks they touch are done: `pytest tests/engine tests/models`
  is a good final check.

## Your grade on GitHub

Each push to GitHub runs `.github/workflows/classroom.yml`, a plain GitHub Actions workflow: it
installs this copy and runs `minilm grade --json results.json --summary "$GITHUB_STEP_SUMMARY"`.
The table — points, status and first failure of every task, and the total — is on the run's page
(*Actions* tab, the run, *Summary*), and `results.json` is attached to the run as the artifact
`grade-results`. The run stays red until every task passes: read the table, not the colour.
(GitHub Classroom, which graded such repositories before, is being sunset: GitHub announced it in
2026.)

## Running the kit on your code

Every `minilm` command runs on your `exercises/`: `minilm demo`, `minilm train gpt`,
`minilm plot masks`, ... A command that needs a task you have not written yet stops with
"a task slot is not implemented yet" and names the task.

## The tasks

{table}

## What is inside

```
autograd/     the engine: Tensor, Function (forward and backward side by side), nn, optim; the
              task-slot switch (tasks.py)
minilm/       the language-model kit built on the engine: tokenizers, blocks, models, corruptions
exercises/    YOUR CODE: one package per task module; fill in the bodies that raise NotImplementedError
tests/        graded/ (one marker per task: task1_1 ... ), engine/ and models/ (the kit's own tests)
docs/         tasks/ (one page per module), course-map.md
```
"""

README_ZH = """# minilm — 學生版

這份副本**不含參考解答**：`exercises/` 裡的每個任務函式都由你來寫。{given}

## 從這裡開始

1. 在此資料夾安裝（Python 3.10 以上）：
   ```bash
   python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]"
   ```
2. 執行 `minilm grade`，看每個任務的分數與狀態（目前都是 `not started`）。
3. 打開 `exercises/task01_autograd/`：每個 `raise NotImplementedError("Task 1.1: ...")` 的函式就是一個任務，
   docstring 寫了數學、形狀與測試會檢查什麼。
4. 閱讀 `docs/tasks/01-autograd.md`（第 1 單元的理論）。
5. 完成 Task 1.1 後評分：`pytest -m task1_1`，再執行一次 `minilm grade`。

在這份副本裡，`pytest` 只跑 `tests/graded/`，也就是替你的 `exercises/` 評分。

任務之間有相依關係，分數也是。這份副本沒有參考程式碼，函式庫的每個任務函式跑的都是你的程式碼；所以若某任務的
測試會經過另一個任務的函式，要等那個任務寫對了才能通過。例如 Task 3.1 會用到你寫的自動微分（第 1 單元）與
softmax（Task 2.1），第 10 單元的測試會經過 Task 1.1 與 Task 3.3。在那之前，`minilm grade` 會把該任務標為
`blocked by Task 1.1`：先完成那一個。任務的先後順序請見 `docs/course-map.md`。

每次 push 到 GitHub，`.github/workflows/classroom.yml`（一般的 GitHub Actions workflow）會安裝這份副本並執行
`minilm grade --json results.json --summary "$GITHUB_STEP_SUMMARY"`。成績表（每個任務的分數、狀態與第一個
失敗原因，以及總分）顯示在該次執行頁面的 *Summary*（*Actions* 分頁），`results.json` 則以 artifact
`grade-results` 附在該次執行上。在所有任務通過之前，執行結果都是紅色的：請看成績表，而不是顏色。
（以往替這類 repository 評分的 GitHub Classroom 即將停止服務：GitHub 於 2026 年宣布。）英文說明見 `README.md`。
"""


def readme_intro(root: Path) -> str:
    """The reference README's opening paragraph(s): the text between the title and the first ``##``."""
    text = (root / "README.md").read_text(encoding="utf-8") if (root / "README.md").is_file() else ""
    body = text.split("\n## ", 1)[0]
    body = "\n".join(l for l in body.splitlines() if not l.startswith("# ")).strip()
    return body or "minilm builds the Transformer pre-training families from scratch in NumPy."


# ---- the release ---------------------------------------------------------------------------------
def given_tasks(spec: str | None, blocks) -> set[str]:
    """``"1,2,5.1"`` -> every task id of modules 1 and 2, and 5.1 (ids as in ``"2.3"``)."""
    known = {b.task for b in blocks}
    out = set()
    for part in (p.strip() for p in (spec or "").split(",")):
        if not part:
            continue
        if re.fullmatch(r"\d+", part):
            found = {t for t in known if t.split(".")[0] == part}
        elif re.fullmatch(r"\d+\.\d+", part):
            found = {part} & known
        else:
            raise ReleaseError(f"--given {spec!r}: expected task modules and tasks such as 1,2,5.1")
        if not found:
            raise ReleaseError(f"--given: no task slot of {part} in solutions/")
        out |= found
    return out


def exercise_with_given(text: str, blocks, given: set[str]) -> str:
    """A solution file as the release's exercise: given blocks keep their body (without the markers),
    the others become the stub line that tools/make_exercises.py writes."""
    lines = text.splitlines(keepends=True)
    for b in sorted(blocks, key=lambda b: b.span, reverse=True):
        first, last = b.span
        if b.task in given:
            lines[first:last + 1] = lines[first + 1:last]
        else:
            lines[first:last + 1] = [f'{b.indent}raise NotImplementedError("Task {b.task}: {b.func}")\n']
    return "".join(lines)


def graded_tasks(path: Path) -> set[str]:
    """The tasks a graded test file is marked with (``task4_capstone`` counts as module 4)."""
    found = re.findall(r"mark\.task(\d+)_(\d+|capstone)\b", path.read_text(encoding="utf-8"))
    return {f"{m}.{t}" for m, t in found}


def _git(dest: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="minilm release", GIT_AUTHOR_EMAIL="minilm-release@localhost",
               GIT_COMMITTER_NAME="minilm release", GIT_COMMITTER_EMAIL="minilm-release@localhost")
    subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                   cwd=dest, env=env, check=True, stdout=subprocess.DEVNULL)


def make_release(dest, *, given: str | None = None, root: Path = ROOT, git: bool = True) -> Path:
    """Write the release into ``dest`` (see the module docstring); returns its path."""
    dest, root = Path(dest).resolve(), Path(root).resolve()
    if dest == root or root in dest.parents:
        raise ReleaseError(f"{dest} is inside the checkout {root}: choose a folder outside it")
    if dest.exists() and any(dest.iterdir()):
        raise ReleaseError(f"{dest} exists and is not empty: give a new folder")
    if not (root / "solutions").is_dir():
        raise ReleaseError(f"{root} has no solutions/: a release is made from a full checkout")
    check = subprocess.run([sys.executable, str(root / "tools" / "make_exercises.py"), "--check"],
                           cwd=root, capture_output=True, text=True)
    if check.returncode != 0:
        raise ReleaseError("exercises/ is out of sync with solutions/; run python tools/make_exercises.py\n"
                           + check.stderr[-2000:])
    blocks = solution_blocks(root)
    gift = given_tasks(given, blocks)
    module_tasks: dict[str, set] = {}
    for b in blocks:
        module_tasks.setdefault(b.task.split(".")[0], set()).add(b.task)

    def is_given(task: str) -> bool:  # a capstone is given when its whole module is
        module, _, n = task.partition(".")
        return module_tasks.get(module, {None}) <= gift if n == "capstone" else task in gift

    frags = fragments(b for b in blocks if b.task not in gift)
    cfrags = code_fragments([b for b in blocks if b.task not in gift], root)
    left_out, copies = [], []
    for rel in release_files(root):
        if rel.parts[:2] == ("tests", "graded") and rel.suffix == ".py":
            marked = graded_tasks(root / rel)
            if marked and all(is_given(t) for t in marked):
                continue  # every test in it grades a given task
        found = leaks(root / rel, frags) + code_leaks(root / rel, cfrags)
        if found and (rel.parts[0] == "docs" or rel.suffix in (".md", ".rst", ".txt")):
            left_out.append(f"{rel} (quotes {', '.join(found[:3])})")
            continue
        if found:
            copies.append(f"{rel}: {', '.join(found)}")
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    if copies:  # STYLE.md habit 11: the library calls the slot, it never carries the answer
        raise ReleaseError("these files copy a solution block (a renamed or re-indented copy counts): make "
                           "the library call the task slot through autograd.tasks instead:\n  " + "\n  ".join(copies))
    for file in sorted({b.file for b in blocks if b.task in gift}):
        text = (root / "solutions" / file).read_text(encoding="utf-8")
        (dest / "exercises" / file).write_text(exercise_with_given(text, [b for b in blocks if b.file == file], gift),
                                               encoding="utf-8")
    (dest / "setup.cfg").write_text(release_setup_cfg((root / "setup.cfg").read_text(encoding="utf-8")),
                                    encoding="utf-8")
    whole = sorted((m for m, ts in module_tasks.items() if ts <= gift), key=int)
    parts = [f"module {m}" for m in whole] + sorted(
        (f"Task {t}" for t in gift if t.split(".")[0] not in whole), key=lambda x: [int(v) for v in x[5:].split(".")])
    listed = ", ".join(parts)
    note = f" Except {listed}: they come with their reference and are not graded." if gift else ""
    note_zh = f" 已附參考實作、不計分的任務：{listed}。" if gift else ""
    (dest / "README.md").write_text(README.format(intro=readme_intro(root), given=note,
                                                  table="\n".join(task_table(dest, gift))),
                                    encoding="utf-8")
    (dest / "README.zh-TW.md").write_text(README_ZH.format(given=note_zh), encoding="utf-8")
    for rel in left_out:
        print(f"make_student_release: warning: left out {rel}", file=sys.stderr)
    bad = [f"{p.relative_to(dest)}: {', '.join(found)}" for p in sorted(dest.rglob("*"))
           if p.is_file() and (found := leaks(p, frags) + code_leaks(p, cfrags))]
    if bad or (dest / "solutions").exists():
        raise ReleaseError("the release would contain solution text:\n  " + "\n  ".join(bad or ["solutions/"]))
    held = [str(p.relative_to(dest)) for p in sorted((dest / "tests" / "graded").rglob("*.py"))
            if HIDDEN_MARK in p.read_text(encoding="utf-8")]
    if held:
        raise ReleaseError("the release would contain held-back tests: " + ", ".join(held))
    _release_manifest(root, dest)
    _classroom_workflow(dest)
    if git:
        _git(dest, "init", "-q")
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", "minilm student release")
    return dest


def _release_manifest(root: Path, dest: Path) -> None:
    """The release's tests/graded/manifest.json lists only the tests the release has: no held-back test
    (not even its name), none of a given task."""
    sys.path.insert(0, str(root))
    from minilm.grading import manifest
    kept = [e for e in manifest.load(root, existing_only=False).values() if not e.hidden and (dest / e.file).is_file()]
    (dest / manifest.PATH).write_text(manifest.dump(kept, "the kit's manifest, for a student release"),
                                      encoding="utf-8")


def _classroom_workflow(dest: Path) -> None:
    """Write the release's grading workflow (tools/autograder/classroom.py, kept out of the release)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("minilm_classroom", ROOT / "tools" / "autograder" / "classroom.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write_workflow(dest)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See the module docstring for what a release holds.")
    ap.add_argument("dest", type=Path, metavar="DIR", help="the new folder to write (must not exist or be empty)")
    ap.add_argument("--given", metavar="TASKS", help="task modules and tasks to ship with their reference and "
                                                     "leave ungraded, e.g. 1,2,5.1")
    ap.add_argument("--no-git", action="store_true", help="do not make DIR a git repository")
    args = ap.parse_args(argv)
    try:
        dest = make_release(args.dest, given=args.given, git=not args.no_git)
    except (ReleaseError, subprocess.CalledProcessError, OSError) as e:
        print(f"make_student_release: {e}", file=sys.stderr)
        return 1
    print(f"wrote the student release to {dest}\n"
          f"  check it:  cd {dest} && python -m minilm.cli grade   (every task 'not started')\n"
          f"  students:  read {dest / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
