"""The Classroom 50 autograder (tools/autograder/classroom50/autograder.py): it turns the grade of
``minilm grade --json`` into the result.json that Classroom 50's runner publishes.

It is run the way that project's runner runs it: ``python3 autograder.py`` in the student's checkout,
and its result.json is checked with the runner's own rules.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.models.autograder_kit import TEMPLATES, load, table_rows

c50 = load("minilm_classroom50", TEMPLATES / "classroom50" / "autograder.py")


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
    assert ["Task " + r[0] for r in table_rows(body)] == names, "the Release body has one row per task"
