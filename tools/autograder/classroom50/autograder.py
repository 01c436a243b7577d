#!/usr/bin/env python3
"""minilm's autograder for Classroom 50 (github.com/foundation50/classroom50): the contract of its
wiki page "Advanced Autograding" (section "Writing an autograder.py"), as its runner.py carries it out.

Classroom 50's runner fetches this file from the teacher's Pages site and runs it once per
submission as ``python3 autograder.py``, in the student's checkout (a minilm student release with
the student's work), inside the grade job of its workflow (``timeout-minutes: 15``). Here it

1. installs the checkout: ``pip install -e ".[test]"`` (what the release's own workflow does);
2. runs ``minilm grade --json <tmp>/results.json --summary release-body.md``: every task module of
   the release's graded tests, with the grade table (Markdown) as the body of the submission's
   Release — the runner uses it instead of its own table, and mirrors it to the run's Summary;
3. turns minilm's results.json (Gradescope's format: one entry per test, float points) into
   Classroom 50's ``./result.json`` (schema ``classroom50/result/v1``): one row per task, its
   score the integer points of the task's passing tests (partial credit per task), ``passed`` only
   when every test of the task passed, and the first failure (status and message) as an extra field.

It exits 0 once result.json is written, whatever the grade; any other exit is what the contract
calls an infrastructure error (the runner then publishes a 0/0 "error" result), and the message says
why. Grading is stopped (SIGINT: ``minilm grade`` then writes what it graded, the rest "not run")
when it would run past the job's time limit.

Not defended: everything here runs on the student's own repository, tests and grader included, as
with the release's workflow. See README.md beside this file.

    python3 autograder.py                # as the runner does (needs its environment variables)
    python3 autograder.py --no-install   # the kit is already installed: try it on a checkout
"""
from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCHEMA = "classroom50/result/v1"
RESULT = "result.json"            # read by the runner from the working directory
RELEASE_BODY = "release-body.md"  # optional; the runner writes its own table when it is missing
# The grade job stops at 15 minutes (autograde-runner.yaml). The install takes 1-2 of them, the
# runner's own steps some seconds: past this many seconds of grading, stop and report what is done.
GRADE_BUDGET = float(os.environ.get("MINILM_C50_GRADE_SECONDS", 11 * 60))


class ContractError(Exception):
    """minilm's results cannot be expressed in result.json (the runner is told: exit 1)."""


def _points(value, where: str) -> int:
    """result.json takes integer points; minilm's are floats that hold whole numbers."""
    value = float(value)
    if not value.is_integer() or value < 0:
        raise ContractError(f"{where}: {value:g} points; Classroom 50's result.json takes whole, non-negative "
                            f"points: give the graded test a whole number in @pytest.mark.points")
    return int(value)


def task_rows(results: dict) -> list[dict]:
    """One result.json test row per task of minilm's results.json, in the order graded."""
    rows: dict[str, dict] = {}
    for test in results.get("tests", []):
        task = (test.get("extra_data") or {}).get("task")
        if not task:
            raise ContractError(f"results.json: test {test.get('name')!r} names no task in extra_data")
        row = rows.setdefault(task, {"test-name": f"Task {task}", "passed": True, "score": 0, "max-score": 0,
                                     "reason": ""})
        where = f"Task {task}, {test.get('name')}"
        row["score"] += _points(test.get("score", 0), where)
        row["max-score"] += _points(test.get("max_score", 0), where)
        if test.get("status") != "passed":
            row["passed"] = False
            row["reason"] = row["reason"] or str(test.get("output", ""))  # "not implemented: ...", "blocked: ..."
    return list(rows.values())


def to_result(results: dict, env=os.environ) -> dict:
    """Classroom 50's result.json for minilm's ``results``, the submission named by ``env``
    (the runner's variables: CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, COMMIT_URL, RELEASE_URL, ...)."""
    rows = task_rows(results)
    if not rows:
        raise ContractError("results.json holds no graded test: is this a minilm student release?")
    missing = [k for k in ("CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG", "COMMIT_URL", "RELEASE_URL") if not env.get(k)]
    if missing:
        raise ContractError(f"the runner's environment lacks {', '.join(missing)}: run this from Classroom 50's "
                            f"runner (or set them to try it)")
    result = {
        "schema": SCHEMA,
        "classroom": env["CLASSROOM"],
        "assignment": env["ASSIGNMENT"],
        "submission": env["SUBMISSION_TAG"],
        "commit": env["COMMIT_URL"],
        "release": env["RELEASE_URL"],
        "review": env.get("REVIEW_URL") or env["COMMIT_URL"],
        # the runner replaces it with the graded commit's date; it must still be a non-empty string
        "datetime": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "score": sum(r["score"] for r in rows),
        "max-score": sum(r["max-score"] for r in rows),
        "tests": rows,
    }
    owner = env.get("OWNER") or env.get("USERNAME")
    if owner:  # stamped by the runner anyway
        result["owner"] = owner
    if env.get("ASSIGNMENT_TYPE"):
        result["assignment_type"] = env["ASSIGNMENT_TYPE"]
    return result


def install(checkout: Path) -> None:
    print("autograder: pip install -e .[test]", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-e", ".[test]"], cwd=checkout, check=True)


def grade(checkout: Path, results_path: Path, budget: float = GRADE_BUDGET) -> None:
    """Run ``minilm grade`` on ``checkout``; after ``budget`` seconds, interrupt it (it then writes
    what it graded)."""
    cmd = [sys.executable, "-m", "minilm.cli", "grade", "--json", str(results_path), "--summary", RELEASE_BODY]
    print("autograder: " + " ".join(cmd[1:]), flush=True)
    proc = subprocess.Popen(cmd, cwd=checkout)
    start = time.monotonic()
    try:
        proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        print(f"autograder: grading ran past {budget:g} s; stopping it (the rest is 'not run')", flush=True)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    print(f"autograder: minilm grade exited {proc.returncode} after {time.monotonic() - start:.0f} s", flush=True)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    checkout = Path.cwd()  # the runner starts us in the student's checkout
    for stale in (RESULT, RELEASE_BODY):  # the runner removes them too; a local second run would append
        (checkout / stale).unlink(missing_ok=True)
    try:
        if "--no-install" not in argv:
            install(checkout)
        with tempfile.TemporaryDirectory(prefix="minilm-c50-") as tmp:
            results_path = Path(tmp) / "results.json"
            grade(checkout, results_path)
            if not results_path.is_file():
                raise ContractError("minilm grade wrote no results.json (see its output above)")
            result = to_result(json.loads(results_path.read_text(encoding="utf-8")))
    except (ContractError, subprocess.CalledProcessError, OSError, ValueError) as e:
        print(f"::error::minilm autograder: {e}", file=sys.stderr)
        return 1
    (checkout / RESULT).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"autograder: wrote {RESULT}: {result['score']} / {result['max-score']} points", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
