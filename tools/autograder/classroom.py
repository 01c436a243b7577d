"""The grading workflow a student release carries: ``.github/workflows/classroom.yml``.

GitHub announced in 2026 that GitHub Classroom is being sunset, and its autograding actions
(``classroom-resources/autograding-*``) carry a deprecation notice. So the workflow is plain GitHub
Actions and uses no Classroom action: on every push it checks out the repository, sets up Python
(with pip's download cache, keyed on ``setup.cfg``, where the dependencies are declared), installs
the release and runs

    minilm grade --json results.json --summary "$GITHUB_STEP_SUMMARY"

which grades every task module (partial credit per task: a task scores the points of the tests it
passes), appends the grade table to the run's job summary, and exits non-zero unless every task
passed — so the run shows a red cross until the course is done. The results.json (Gradescope's
format) is uploaded as an artifact whether or not grading passed.

The file keeps its old name so that repositories and instructions that point at it still do.
"""
from __future__ import annotations

import json
from pathlib import Path

PYTHON = "3.11"  # the version the kit is developed and tested on (setup.cfg asks for >= 3.10)
RESULTS = "results.json"
GRADE_COMMAND = f'minilm grade --json {RESULTS} --summary "$GITHUB_STEP_SUMMARY"'
INSTALL_COMMAND = 'python -m pip install -e ".[test]"'
ARTIFACT = "grade-results"
PATH = Path(".github") / "workflows" / "classroom.yml"


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def workflow(python: str = PYTHON, minutes: int = 30) -> str:
    """The workflow's YAML text."""
    lines = [
        "# Grading of this minilm release on plain GitHub Actions (no GitHub Classroom action: Classroom",
        "# is being sunset). Each push grades every task with `minilm grade`: the table is on the run's",
        "# page (Summary), results.json is attached to the run as the artifact 'grade-results'.",
        "# Written by tools/make_student_release.py; the kit's docs/instructors.md explains it.",
        "name: Grade",
        "'on':",
        "  - push",
        "  - workflow_dispatch",
        "permissions:",
        "  contents: read",
        "jobs:",
        "  grade:",
        "    runs-on: ubuntu-latest",
        f"    timeout-minutes: {minutes}",
        "    env:",
        "      NUMBA_NUM_THREADS: '1'",
        "      OPENBLAS_NUM_THREADS: '1'",
        "    steps:",
        "      - name: Check out the code",
        "        uses: actions/checkout@v7",
        "      - name: Set up Python",
        "        uses: actions/setup-python@v7",
        "        with:",
        f"          python-version: {_q(python)}",
        "          cache: pip",
        "          cache-dependency-path: setup.cfg",
        "      - name: Install the kit",
        f"        run: {INSTALL_COMMAND}",
        "      - name: Grade every task",
        f"        run: {GRADE_COMMAND}",
        "      - name: Upload results.json",
        "        if: always()",
        "        uses: actions/upload-artifact@v7",
        "        with:",
        f"          name: {ARTIFACT}",
        f"          path: {RESULTS}",
    ]
    return "\n".join(lines) + "\n"


def write_workflow(release: Path) -> Path:
    """Write ``release/.github/workflows/classroom.yml``."""
    path = Path(release) / PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow(), encoding="utf-8")
    return path
