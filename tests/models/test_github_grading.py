"""Grading on GitHub without GitHub Classroom: the release's workflow (tools/autograder/classroom.py),
``minilm grade --summary`` (minilm/grading/markdown.py), and the Classroom 50 autograder
(tools/autograder/classroom50/autograder.py).

The workflow is checked against what each action documents (the pinned list below) and its grading
command is run in a fresh release the way GitHub runs a step: the step's ``run:`` text as a bash
script, ``GITHUB_STEP_SUMMARY`` naming a file. The Classroom 50 autograder is run the way that
project's runner runs it: ``python3 autograder.py`` in the student's checkout, and its result.json
is checked with the runner's own rules.
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
from argparse import Namespace
from pathlib import Path

import pytest

from autograd import tasks
from minilm import grading
from minilm.commands import grade as grade_command
from minilm.grading.markdown import cell, format_markdown
from tests.release_kit import BOOT, ROOT, make_release

TEMPLATES = ROOT / "tools" / "autograder"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


classroom = _load("minilm_classroom", TEMPLATES / "classroom.py")
c50 = _load("minilm_classroom50", TEMPLATES / "classroom50" / "autograder.py")

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
@pytest.fixture(scope="module")
def release(tmp_path_factory):
    if not tasks.solutions_available():
        pytest.skip("a release is made from a full checkout")
    dest = tmp_path_factory.mktemp("rel") / "student"
    done = make_release(dest, "--no-git")
    assert done.returncode == 0, done.stderr[-3000:]
    return dest


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


def _rows(markdown: str) -> list[list[str]]:
    """The body rows of the Markdown table(s), split on the unescaped `|`."""
    rows = [re.split(r"(?<!\\)\|", l)[1:-1] for l in markdown.splitlines() if l.startswith("| ")]
    return [[c.strip() for c in r] for r in rows if r and r[0].strip() not in ("task", "---")]


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
    rows = _rows(summary.read_text(encoding="utf-8"))
    assert [r[0] for r in rows] == sorted(graded, key=grading.verdict.task_key), "one summary row per task"
    assert all(r[1].startswith("0 / ") and r[2] == "not started" for r in rows), rows[:3]
    assert f"**total: 0 / {data['max_score']:g} points**" in summary.read_text(encoding="utf-8")


# ---- minilm grade --summary ------------------------------------------------------------------------
def _report(*, interrupted=False) -> grading.Report:
    def test(task, name, status, points=2.0, message="", blocked_by=""):
        return grading.TestResult(f"tests/graded/t.py::{name}", task, points, status=status, message=message,
                                  blocked_by=blocked_by)

    tasks_ = [
        grading.TaskSummary("1.1", [test("1.1", "test_a", "passed"), test("1.1", "test_b", "passed", 1.0)]),
        grading.TaskSummary("3.2", [test("3.2", "test_c", "passed"),
                                    test("3.2", "test_d", "failed", 3.0, "expected a | b\ngot *c* <x> & `y`")],
                            command='pytest --impl exercises "tests/graded/t.py::test_d"'),
        grading.TaskSummary("10.2", [test("10.2", "test_e", "blocked", message="needs Task 1.1", blocked_by="1.1")]),
    ]
    return grading.Report(tasks=tasks_, problems=["module 7: the child | died"], interrupted=interrupted)


def test_markdown_table_has_one_row_per_task_and_escapes_the_reasons():
    text = format_markdown(_report())
    rows = _rows(text)
    assert [r[0] for r in rows] == ["1.1", "3.2", "10.2"]
    assert all(len(r) == 4 for r in rows), "a `|` or a line break in a reason split a row"
    assert rows[0][1:3] == ["3 / 3", "passed"] and rows[1][1:3] == ["2 / 5", "failed"]
    assert rows[2][2] == "blocked by Task 1.1"
    reason = rows[1][3]
    assert "test\\_d: expected a \\| b<br>got \\*c\\* \\<x\\> &amp; \\`y\\`" in reason, reason
    assert 'see it in full: `pytest --impl exercises "tests/graded/t.py::test_d"`' in reason  # code: literal
    assert "**total: 5 / 10 points**; 1 of 3 tasks passed" in text
    assert "- problem: module 7: the child \\| died" in text
    assert "interrupted" in format_markdown(_report(interrupted=True))
    assert cell("a\r\nb\n\nc") == "a<br>b<br>c"


def test_grade_summary_appends_the_markdown_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(grade_command.grading, "grade", lambda *a, **k: _report())
    summary = tmp_path / "summary.md"
    summary.write_text("# an earlier step's summary\n")
    args = Namespace(impl=None, task=None, timeout=60.0, jobs=None, verbose=False, json_path=None,
                     summary_path=str(summary))
    assert grade_command.run(args) == 1  # not every task passed
    assert grade_command.run(args) == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# an earlier step's summary\n") and text.count("| task | points |") == 2
    args.summary_path = ""  # --summary "$GITHUB_STEP_SUMMARY" outside GitHub Actions
    assert grade_command.run(args) == 1
    assert "empty path" in capsys.readouterr().err


# ---- Classroom 50 --------------------------------------------------------------------------------
# The checks Classroom 50's runner makes of the result.json an autograder writes, repeated here.
# Source: https://github.com/foundation50/classroom50, cli/gh-teacher/skeleton/dotgithub/scripts/runner.py
# (read at commits 0c499034 and 6b0b83cf), whose `finalize_result` first stamps the fields it owns:
#     result["owner"] = finalize.username
#     result["assignment_type"] = finalize.assignment_type
#     result["datetime"] = finalize.submitted_at.strftime("%Y-%m-%dT%H:%M:%SZ")
# and then calls `validate_result`, which requires, among others:
#     if data.get("schema") != RESULT_SCHEMA_V1:            # "classroom50/result/v1"
#     if not isinstance(submission, str) or not submission.startswith("submit/"):
#     for field in ("commit", "release", "review", "datetime"): ... non-empty string
#     if isinstance(score, bool) or not isinstance(score, int) or score < 0:
#     if score > max_score:
#     name = t.get("test-name") ... non-empty string;  isinstance(t.get("passed"), bool)
#     ts, tm = t.get("score"), t.get("max-score") ... non-negative integers, ts <= tm
# The wiki page https://github.com/foundation50/classroom50/wiki/Advanced-Autograding (the repository's
# wiki/Advanced-Autograding.md at 6b0b83cf) states the same contract, Markdown emphasis dropped here:
# "The autograder must produce ./result.json", "Exit 0 if it ran end-to-end (pass/fail is in
# result.json)", and in its field table "Extra diagnostic fields on a test are preserved verbatim".
RUNNER_ENV = {"CLASSROOM": "ml-2026", "ASSIGNMENT": "minilm", "SUBMISSION_TAG": "submit/2026-09-01T10-00-00Z-abc1234",
              "COMMIT_URL": "https://github.com/org/r/commit/abc1234",
              "RELEASE_URL": "https://github.com/org/r/releases/tag/x",
              "REVIEW_URL": "https://github.com/org/r/compare/a...b", "USERNAME": "alice", "OWNER": "alice",
              "ASSIGNMENT_TYPE": "individual", "PAGES_BASE_URL": "https://org.github.io/classroom50"}


def runner_accepts(data, classroom: str, assignment: str) -> list[str]:
    """What Classroom 50's runner would refuse in ``data`` (empty: it publishes the score)."""
    def whole(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if not isinstance(data, dict):
        return ["not a JSON object"]
    data = {**data, "owner": "alice", "assignment_type": "individual", "datetime": "2026-09-01T10:00:00Z"}
    bad = []
    if data.get("schema") != "classroom50/result/v1":
        bad.append(f"schema {data.get('schema')!r}")
    if (data.get("classroom"), data.get("assignment")) != (classroom, assignment):
        bad.append("classroom/assignment do not match the repository")
    if not str(data.get("submission", "")).startswith("submit/"):
        bad.append("submission is not a submit/* tag")
    bad += [f"{k} is not a non-empty string" for k in ("commit", "release", "review", "datetime")
            if not isinstance(data.get(k), str) or not data.get(k)]
    if not (whole(data.get("score")) and whole(data.get("max-score")) and data["score"] <= data["max-score"]):
        bad.append(f"score {data.get('score')!r} / max-score {data.get('max-score')!r}")
    tests = data.get("tests")
    if not isinstance(tests, list):
        return bad + ["tests is not a list"]
    for i, t in enumerate(tests):
        if not (isinstance(t, dict) and isinstance(t.get("test-name"), str) and t["test-name"]
                and isinstance(t.get("passed"), bool) and whole(t.get("score")) and whole(t.get("max-score"))
                and t["score"] <= t["max-score"]):
            bad.append(f"tests[{i}] {t!r}")
    return bad


def _minilm_results(*tests) -> dict:
    """A small results.json as `minilm grade --json` writes it (Gradescope's format): only the fields
    the autograder reads are filled in."""
    out = [{"name": f"Task {task}: {name}", "score": points if status == "passed" else 0.0, "max_score": points,
            "status": "passed" if status == "passed" else "failed",
            "output": "passed" if status == "passed" else f"{status}: {message}", "visibility": "visible",
            "extra_data": {"task": task, "minilm_status": status}}
           for task, name, status, points, message in tests]
    return {"score": sum(t["score"] for t in out), "max_score": sum(t["max_score"] for t in out),
            "output": "the table", "tests": out}


def test_classroom50_result_follows_the_runner_contract():
    results = _minilm_results(
        ("1.1", "test_a", "passed", 2.0, ""),
        ("1.1", "test_b", "failed", 3.0, "AssertionError: the gradient of a used-twice node"),
        ("3.2", "test_c", "passed", 2.0, ""),
        ("4.capstone", "test_d", "not implemented", 10.0, "NotImplementedError: Task 4.1"),
    )
    result = c50.to_result(results, RUNNER_ENV)
    assert runner_accepts(result, "ml-2026", "minilm") == []
    assert json.loads(json.dumps(result)) == result  # plain JSON
    rows = {r["test-name"]: r for r in result["tests"]}
    assert list(rows) == ["Task 1.1", "Task 3.2", "Task 4.capstone"]
    assert (rows["Task 1.1"]["score"], rows["Task 1.1"]["max-score"], rows["Task 1.1"]["passed"]) == (2, 5, False)
    assert rows["Task 1.1"]["reason"] == "failed: AssertionError: the gradient of a used-twice node"
    assert (rows["Task 3.2"]["score"], rows["Task 3.2"]["passed"], rows["Task 3.2"]["reason"]) == (2, True, "")
    assert rows["Task 4.capstone"]["reason"].startswith("not implemented: ") and rows["Task 4.capstone"]["score"] == 0
    assert (result["score"], result["max-score"]) == (4, 17)
    assert result["submission"] == RUNNER_ENV["SUBMISSION_TAG"] and result["review"] == RUNNER_ENV["REVIEW_URL"]
    assert runner_accepts(c50.to_result(results, {**RUNNER_ENV, "REVIEW_URL": ""}), "ml-2026", "minilm") == []


def test_classroom50_refuses_what_result_json_cannot_say():
    one = _minilm_results(("1.1", "t", "passed", 1.0, ""))
    with pytest.raises(c50.ContractError, match="whole"):
        c50.to_result(_minilm_results(("1.1", "test_a", "passed", 0.5, "")), RUNNER_ENV)
    with pytest.raises(c50.ContractError, match="no graded test"):
        c50.to_result({"score": 0, "max_score": 0, "tests": []}, RUNNER_ENV)
    with pytest.raises(c50.ContractError, match="SUBMISSION_TAG"):
        c50.to_result(one, {k: v for k, v in RUNNER_ENV.items() if k != "SUBMISSION_TAG"})
    assert runner_accepts({**c50.to_result(one, RUNNER_ENV), "score": 1.0}, "ml-2026", "minilm"), \
        "the check itself misses a float score"


@pytest.mark.slow
def test_classroom50_autograder_runs_as_the_runner_runs_it(release, tmp_path):
    """runner.py `run_entrypoint`: ``subprocess.run([sys.executable, str(entrypoint)], cwd=str(workspace),
    env=env)`` with the entrypoint in the runner's own temporary folder; then it reads ./result.json."""
    bundle = tmp_path / "classroom50-runtime" / "minilm"
    bundle.mkdir(parents=True)
    entry = bundle / "autograder.py"
    shutil.copy(TEMPLATES / "classroom50" / "autograder.py", entry)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MINILM_IMPL", "PYTEST_ADDOPTS")}
    env.update(RUNNER_ENV, CLASSROOM50_BUNDLE_DIR=str(bundle), MPLBACKEND="Agg")
    made = [release / c50.RESULT, release / c50.RELEASE_BODY]
    try:
        # --no-install: the kit's dependencies are here already, and the install would replace this
        # checkout's editable install by the release's
        res = subprocess.run([sys.executable, str(entry), "--no-install"], cwd=release, env=env,
                             capture_output=True, text=True, timeout=900)
        out = (res.stdout + res.stderr)[-3000:]
        assert res.returncode == 0, f"the runner would publish an error result:\n{out}"
        result = json.loads(made[0].read_text(encoding="utf-8"))
        body = made[1].read_text(encoding="utf-8")
    finally:
        for path in made:
            path.unlink(missing_ok=True)
    assert runner_accepts(result, "ml-2026", "minilm") == []
    names = [r["test-name"] for r in result["tests"]]
    assert len(names) >= 30 and {n.split()[1].split(".")[0] for n in names} == {str(m) for m in range(1, 13)}
    assert result["score"] == 0 and result["max-score"] > 0
    assert not any(r["passed"] for r in result["tests"]) and all(r["reason"] for r in result["tests"])
    assert ["Task " + r[0] for r in _rows(body)] == names, "the Release body has one row per task"
