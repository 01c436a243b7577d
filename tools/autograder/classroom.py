"""The GitHub Classroom workflow a student release carries: ``.github/workflows/classroom.yml``.

On every push, GitHub Actions installs the release and grades each task module with
``minilm grade --task M`` (one step of ``classroom-resources/autograding-command-grader`` per
module, worth the module's points; the step scores them when its command exits 0, i.e. when every
task of the module passed); ``autograding-grader-reporter`` sends the scores to the Classroom.
The points are those of the graded tests the release ships (held-back tests are not in it).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Collects the release's graded tests and prints {module: points}; runs inside the release.
_COLLECT = r"""
import json, re, sys, pytest
points = {}
class P:
    def pytest_collection_modifyitems(self, items):
        for item in items:
            for mark in item.iter_markers():
                m = re.fullmatch(r"task(\d+)_(\d+|capstone)", mark.name)
                if m:
                    pts = item.get_closest_marker("points")
                    key = int(m.group(1))
                    points[key] = points.get(key, 0.0) + (float(pts.args[0]) if pts and pts.args else 1.0)
                    break
code = pytest.main(["tests/graded", "--collect-only", "-q", "-p", "no:cacheprovider", "-c", "setup.cfg",
                    "-o", "addopts=--strict-markers", "-m", "slow or not slow"], plugins=[P()])
sys.stdout.write("\nPOINTS " + json.dumps(points) + "\n")
sys.exit(0 if code in (0, 5) else code)
"""


def module_points(release: Path) -> dict[int, float]:
    """Points per task module of the graded tests in ``release`` (collected, not run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "MINILM_IMPL")}
    env.update(PYTHONPATH=str(release), MINILM_IMPL="exercises", PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as cache:  # numba's cache goes here, not into the release
        env["NUMBA_CACHE_DIR"] = cache
        res = subprocess.run([sys.executable, "-c", _COLLECT], cwd=release, env=env, capture_output=True, text=True)
    for d in sorted(Path(release).rglob("__pycache__"), reverse=True):  # whatever else made one
        shutil.rmtree(d, ignore_errors=True)
    line = next((l for l in res.stdout.splitlines() if l.startswith("POINTS ")), None)
    if res.returncode != 0 or line is None:
        raise RuntimeError(f"could not collect the graded tests of {release}:\n{(res.stdout + res.stderr)[-2000:]}")
    return {int(k): v for k, v in sorted(json.loads(line[7:]).items(), key=lambda kv: int(kv[0]))}


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def workflow(points: dict[int, float], python: str = "3.11", minutes: int = 15) -> str:
    """The workflow's YAML text: one grading step per module, then the reporter."""
    ids = [f"module-{m}" for m in points]
    lines = [
        "# GitHub Classroom autograding for minilm: each task module is one test worth its points,",
        "# scored when `minilm grade --task M` exits 0 (every task of module M passed).",
        "# Written by tools/make_student_release.py; docs/instructors.md explains it.",
        "name: Autograding Tests",
        "'on':",
        "  - push",
        "  - repository_dispatch",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ubuntu-latest",
        "    if: github.actor != 'github-classroom[bot]'",
        "    env:",
        "      NUMBA_NUM_THREADS: '1'",
        "      OPENBLAS_NUM_THREADS: '1'",
        "    steps:",
        "      - name: Check out the code",
        "        uses: actions/checkout@v4",
        "      - name: Set up Python",
        "        uses: actions/setup-python@v5",
        "        with:",
        f"          python-version: {_q(python)}",
        "      - name: Install the kit",
        "        run: python -m pip install -e \".[test]\"",
    ]
    for m, step in zip(points, ids):
        pts = points[m]
        lines += [
            f"      - name: {_q(f'Module {m}')}",
            f"        id: {step}",
            "        uses: classroom-resources/autograding-command-grader@v1",
            "        with:",
            f"          test-name: {_q(f'Module {m}')}",
            "          setup-command: ''",
            f"          command: {_q(f'minilm grade --task {m}')}",
            f"          timeout: {minutes}",
            f"          max-score: {int(pts) if float(pts).is_integer() else pts}",
        ]
    lines += [
        "      - name: Autograding Reporter",
        "        uses: classroom-resources/autograding-grader-reporter@v1",
        "        env:",
        *[f"          {s.upper()}_RESULTS: \"${{{{steps.{s}.outputs.result}}}}\"" for s in ids],
        "        with:",
        f"          runners: {','.join(ids)}",
    ]
    return "\n".join(lines) + "\n"


def write_workflow(release: Path) -> Path:
    """Write ``release/.github/workflows/classroom.yml`` from the release's own graded tests."""
    path = Path(release) / ".github" / "workflows" / "classroom.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow(module_points(Path(release))), encoding="utf-8")
    return path
