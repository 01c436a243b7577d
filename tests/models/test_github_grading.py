"""Grading on GitHub without GitHub Classroom: the workflow a student release carries
(tools/autograder/classroom.py).

The workflow is checked against what each action documents (the pinned list below) and its grading
command is run in a fresh release the way GitHub runs a step: the step's ``run:`` text as a bash
script, ``GITHUB_STEP_SUMMARY`` naming a file. Its table is tested in test_grade_summary.py, the
Classroom 50 autograder in test_classroom50.py.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minilm import grading
from tests.models.autograder_kit import classroom, table_rows
from tests.release_kit import BOOT, ROOT

# ---- the actions a release's workflow may use ----------------------------------------------------
# owner/name@major -> the inputs that the action's action.yml declares at that major tag. Read with
# `git show <tag>:action.yml` in snapshots of the repositories (fetched July 2026); each major tag
# was the newest one there. A `with:` key outside these sets is ignored by GitHub with a warning,
# so a typo would silently do nothing.
PINNED_ACTIONS = {
    # github.com/actions/checkout, action.yml at v7 (= v7.0.1, 2026-07-17; runs on node24)
    "actions/checkout@v7": {
        "repository", "ref", "token", "ssh-key", "ssh-known-hosts", "ssh-strict", "ssh-user",
        "persist-credentials", "path", "clean", "filter", "sparse-checkout", "sparse-checkout-cone-mode",
        "fetch-depth", "fetch-tags", "show-progress", "lfs", "submodules", "set-safe-directory",
        "github-server-url", "allow-unsafe-pr-checkout"},
    # github.com/actions/setup-python, action.yml at v7 (= v7.0.0, 2026-07-19; README: "no changes to
    # action inputs" since v6); `cache` takes pip, pipenv or poetry (its description there)
    "actions/setup-python@v7": {
        "python-version", "python-version-file", "cache", "architecture", "check-latest", "token",
        "cache-dependency-path", "update-environment", "allow-prereleases", "freethreaded", "pip-version"},
    # github.com/actions/upload-artifact, action.yml at v7 (= v7.0.0, 2026-02-25); `path` is required
    "actions/upload-artifact@v7": {
        "name", "path", "if-no-files-found", "retention-days", "compression-level", "overwrite",
        "include-hidden-files", "archive"},
}
REQUIRED_INPUTS = {"actions/upload-artifact@v7": {"path"}}
# Actions a release must not use, and why (the message of the failing check).
RETIRED = {
    "classroom-resources/": "GitHub Classroom's autograding actions: Classroom is being sunset (announced "
                           "2026, github.com/orgs/community/discussions/196615) and they carry a deprecation notice",
    "education/autograding": "GitHub Classroom's older autograding action: part of Classroom, which is being sunset",
}


# ---- reading the workflow ------------------------------------------------------------------------
def _scalar(text: str):
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)  # the workflow writes double-quoted scalars as JSON strings
    if text.startswith("'"):
        if not (len(text) > 1 and text.endswith("'")):
            raise ValueError(f"unterminated single-quoted scalar {text!r}")
        return text[1:-1].replace("''", "'")
    if text[:1] in "|>&*!%@`{[" or " #" in text:
        raise ValueError(f"the workflow reader does not take {text!r}: extend it, or install PyYAML")
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def _block(lines, i: int, indent: int):
    """The block (mapping or sequence) starting at ``lines[i]``, indented ``indent``; (value, next i)."""
    if lines[i][1].startswith("- ") or lines[i][1] == "-":
        items = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("-"):
            rest = lines[i][1][1:].strip()
            if re.match(r"^('[^']*'|\"[^\"]*\"|[\w.-]+):(\s|$)", rest):  # "- key: value" opens a mapping
                lines[i] = (indent + 2, rest)
                value, i = _block(lines, i, indent + 2)
            else:
                value, i = _scalar(rest), i + 1
            items.append(value)
        return items, i
    out = {}
    while i < len(lines) and lines[i][0] == indent:
        m = re.match(r"^('[^']*'|\"[^\"]*\"|[\w.-]+):(?:\s+(.*))?$", lines[i][1])
        if m is None:
            raise ValueError(f"the workflow reader does not take line {lines[i][1]!r}")
        key, value = _scalar(m.group(1)), m.group(2)
        if value is not None:
            out[key], i = _scalar(value), i + 1
        elif i + 1 < len(lines) and lines[i + 1][0] > indent:
            out[key], i = _block(lines, i + 1, lines[i + 1][0])
        elif i + 1 < len(lines) and lines[i + 1][0] == indent and lines[i + 1][1].startswith("-"):
            out[key], i = _block(lines, i + 1, indent)  # a sequence at the key's own indent
        else:
            out[key], i = None, i + 1
    return out, i


def read_block_yaml(text: str) -> dict:
    """The block YAML the workflow is written in, as data; anything else (flow collections, block
    scalars, anchors, tabs) is refused rather than misread."""
    if "\t" in text:
        raise ValueError("a tab in the workflow: YAML indents with spaces")
    lines = [(len(l) - len(l.lstrip(" ")), l.strip()) for l in text.splitlines()
             if l.strip() and not l.lstrip().startswith("#")]
    data, end = _block(lines, 0, 0)
    if end != len(lines):
        raise ValueError(f"the workflow reader stopped at {lines[end][1]!r}")
    return data


def read_workflow(text: str) -> dict:
    """The workflow as data: PyYAML when installed, else :func:`read_block_yaml`."""
    try:
        import yaml
    except ImportError:
        return read_block_yaml(text)
    data = yaml.safe_load(text)
    if True in data:  # YAML 1.1 reads a bare `on` as true; GitHub reads it as the key "on"
        data["on"] = data.pop(True)
    return data


def _steps(data: dict) -> list[dict]:
    return [s for job in data["jobs"].values() for s in job["steps"]]


def _uses(text: str) -> list[str]:
    """Every `uses:` of the raw text, however it is written: a cross-check of the reader."""
    return re.findall(r"^\s*(?:-\s+)?uses:\s*['\"]?([^'\"\s#]+)", text, re.M)


def test_the_workflow_reader_reads_what_it_is_given():
    text = "a: 1\nb:\n  - x\n  - k: 'v w'\n    j: \"q\"\nc:\n- y\nd:\n"
    assert read_block_yaml(text) == {"a": 1, "b": ["x", {"k": "v w", "j": "q"}], "c": ["y"], "d": None}
    for unread in ("a: [1, 2]\n", "a: |\n  x\n", "a: b # c\n", "a:\n\tb: 1\n", "a: 1\n b: 2\n"):
        with pytest.raises(ValueError):
            read_block_yaml(unread)
    if importlib.util.find_spec("yaml"):  # both readers agree on the workflow
        assert read_block_yaml(classroom.workflow()) == read_workflow(classroom.workflow())


# ---- the workflow --------------------------------------------------------------------------------
def test_every_action_is_pinned_current_and_given_only_documented_inputs():
    text = classroom.workflow()
    steps = _steps(read_workflow(text))
    used = [s["uses"] for s in steps if "uses" in s]
    assert used == _uses(text), "the reader and the raw text disagree about the workflow's actions"
    assert used, "the workflow uses no action at all"
    for step in steps:
        if "uses" not in step:
            assert "with" not in step, f"{step.get('name')}: `with:` on a step that runs no action"
            continue
        action = step["uses"]
        retired = [why for prefix, why in RETIRED.items() if action.startswith(prefix)]
        assert not retired, f"{action}: {retired[0]}"
        assert action in PINNED_ACTIONS, (
            f"{action} is not in the pinned list: read its action.yml at that major version, check that "
            f"the version is current and not deprecated, and add it with its inputs and where you read them")
        given = set(step.get("with") or {})
        unknown = given - PINNED_ACTIONS[action]
        assert not unknown, f"{action}: {sorted(unknown)} are not inputs of its action.yml (typo?)"
        missing = REQUIRED_INPUTS.get(action, set()) - given
        assert not missing, f"{action}: the required inputs {sorted(missing)} are missing"


def test_the_workflow_grades_everything_and_uploads_the_results_even_when_grading_fails():
    data = read_workflow(classroom.workflow())
    assert "push" in data["on"] and data["name"]
    assert data["permissions"] == {"contents": "read"}  # nothing is written back to the repository
    steps = _steps(data)
    kinds = [s.get("uses", "run").split("@")[0] for s in steps]
    assert kinds == ["actions/checkout", "actions/setup-python", "run", "run", "actions/upload-artifact"]
    setup, install, grade, upload = steps[1]["with"], steps[2]["run"], steps[3]["run"], steps[4]
    assert setup["cache"] == "pip" and (ROOT / setup["cache-dependency-path"]).is_file()
    assert "install_requires" in (ROOT / setup["cache-dependency-path"]).read_text(encoding="utf-8"), \
        "the pip cache is keyed on the file that does not declare the dependencies"
    lowest = re.search(r"python_requires\s*=\s*>=\s*([\d.]+)", (ROOT / "setup.cfg").read_text()).group(1)
    assert isinstance(setup["python-version"], str), "an unquoted 3.10 is the number 3.1 in YAML"
    assert [int(x) for x in setup["python-version"].split(".")] >= [int(x) for x in lowest.split(".")]
    assert install == 'python -m pip install -e ".[test]"'
    assert grade == 'minilm grade --json results.json --summary "$GITHUB_STEP_SUMMARY"'
    assert "--task" not in grade, "every module is graded in one run (partial credit per task)"
    assert "if" not in steps[3], "the grading step's failure must stay visible: it fails unless all pass"
    assert upload.get("if") == "always()", "results.json must be uploaded when grading failed too"
    assert upload["with"]["path"] == grade.split("--json ")[1].split()[0]


# ---- the release -------------------------------------------------------------------------------------
def test_release_has_no_held_back_test_and_carries_the_workflow(release):
    assert not (release / "tests" / "graded" / "hidden").exists()
    assert not (release / "tools" / "autograder").exists() and not (release / "solutions").exists()
    assert not (release / "tests" / "models" / "test_github_grading.py").exists()  # it reads tools/autograder
    for f in (release / "tests" / "graded").rglob("*.py"):
        assert "mark.hidden" not in f.read_text(encoding="utf-8"), f
    assert (release / classroom.PATH).read_text(encoding="utf-8") == classroom.workflow()
    assert [p.name for p in (release / ".github" / "workflows").iterdir()] == [classroom.PATH.name]


# Files that still name solutions/ and belong to others (docs/architecture.md; the exercises
# package docstring, which tools/make_exercises.py writes). Delete a line once its file is fixed: a
# stale line fails.
NAMES_SOLUTIONS_FOR_NOW = {"docs/architecture.md", "exercises/__init__.py"}


def test_no_page_or_exercise_of_a_release_names_solutions(release):
    """A release has no solutions/: a page or a docstring that points there sends a student nowhere."""
    found = set()
    pages = sorted(release.rglob("*.md"))
    exercises = sorted((release / "exercises").rglob("*.py"))
    assert pages and exercises
    for path in pages + exercises:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":  # docstrings and comments: what a student reads
            tree = ast.parse(text)
            docs = [ast.get_docstring(n) or "" for n in ast.walk(tree)
                    if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            text = "\n".join(docs + [l for l in text.splitlines() if l.lstrip().startswith("#")])
        if "solutions/" in text:
            found.add(path.relative_to(release).as_posix())
    new, fixed = sorted(found - NAMES_SOLUTIONS_FOR_NOW), sorted(NAMES_SOLUTIONS_FOR_NOW - found)
    assert not new, f"{new} name solutions/, which a release does not have: point to exercises/ instead"
    assert not fixed, f"{fixed} no longer name solutions/: delete them from NAMES_SOLUTIONS_FOR_NOW"


def _shim(where: Path) -> Path:
    """A `minilm` command for the release, as `pip install -e .` would give it there: its imports
    come from the release only (no editable finder of this checkout)."""
    where.mkdir()
    exe = where / "minilm"
    exe.write_text(f"#!{sys.executable}\n" + BOOT.format(root=os.path.realpath(ROOT), module="minilm.cli"))
    exe.chmod(0o755)
    return where


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="GitHub runs the step with bash")
def test_the_workflow_grading_step_grades_a_fresh_release(release, tmp_path):
    data = read_workflow((release / classroom.PATH).read_text(encoding="utf-8"))
    job = next(iter(data["jobs"].values()))
    step = next(s for s in job["steps"] if "minilm grade" in s.get("run", ""))
    script = tmp_path / "step.sh"
    script.write_text(step["run"] + "\n")
    summary = tmp_path / "step_summary.md"
    summary.write_text("")  # GitHub creates it empty for each step
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MINILM_IMPL", "PYTEST_ADDOPTS")}
    env.update({k: str(v) for k, v in (job.get("env") or {}).items()})
    env.update(GITHUB_STEP_SUMMARY=str(summary), GITHUB_ACTIONS="true", MPLBACKEND="Agg",
               PATH=f"{_shim(tmp_path / 'bin')}{os.pathsep}{env.get('PATH', '')}")
    results = release / "results.json"
    try:
        # GitHub's default shell for `run:` on Linux: bash --noprofile --norc -eo pipefail {0}
        res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=release,
                             env=env, capture_output=True, text=True, timeout=900)
        out = (res.stdout + res.stderr)[-3000:]
        assert res.returncode != 0, f"the grading step passed on the stubs:\n{out}"
        assert results.is_file(), f"no results.json for the upload step:\n{out}"
        data = json.loads(results.read_text(encoding="utf-8"))
    finally:
        results.unlink(missing_ok=True)
    graded = {t["extra_data"]["task"] for t in data["tests"]}
    assert {int(t.split(".")[0]) for t in graded} == set(grading.modules(release)), "not every module was graded"
    assert data["score"] == 0 and data["max_score"] > 0
    rows = table_rows(summary.read_text(encoding="utf-8"))
    assert [r[0] for r in rows] == sorted(graded, key=grading.verdict.task_key), "one summary row per task"
    assert all(r[1].startswith("0 / ") and r[2] == "not started" for r in rows), rows[:3]
    assert f"**total: 0 / {data['max_score']:g} points**" in summary.read_text(encoding="utf-8")
