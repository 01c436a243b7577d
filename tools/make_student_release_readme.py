"""The first page of a student release (tools/make_student_release.py): README.md and README.zh-TW.md.

``README`` is filled with the kit's own opening paragraphs (``readme_intro``), a note on the tasks
that ship with their reference (``--given``) and the table of task modules (``task_table``: each
module's folder in ``exercises/``, its theory page in ``docs/tasks/`` and its tasks, read from the
task markers in setup.cfg). ``README_ZH`` is its zh-TW counterpart.
"""
from __future__ import annotations

import re
from pathlib import Path

MARKER_RE = re.compile(r"^\s+(task(\d+)_(\d+|capstone)):\s*(.*)$")


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

