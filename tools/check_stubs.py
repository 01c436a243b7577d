#!/usr/bin/env python3
"""The stub check: the untouched stubs in exercises/ must pass **no** graded test.

A graded test that passes on a stub grades nothing. Run by .ci/run; exits 1 and lists the
offending tests if any graded test passes with ``--impl exercises``, or if the grader's list of tests
(tests/graded/manifest.json) is out of date — a graded test missing from it would never be run.
"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from minilm import grading  # noqa: E402


def main() -> int:
    listed = subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "make_grading_manifest.py"),
                             "--check"], capture_output=True, text=True)
    if listed.returncode != 0:
        print("check_stubs: " + listed.stderr.strip(), file=sys.stderr)
        return 1
    report = grading.grade("exercises")
    tests = report.tests
    passed = [t for t in tests if t.status == "passed"]
    if report.problems or report.flags:
        print("check_stubs: grading hit problems outside any test:", *report.problems, *report.flags, sep="\n  ",
              file=sys.stderr)
        return 1
    unrun = [t for t in tests if t.status == "not run"]
    if unrun:
        print("check_stubs: graded tests that did not run:", *(f"{t.nodeid}: {t.message}" for t in unrun),
              sep="\n  ", file=sys.stderr)
        return 1
    untagged = [t for t in tests if t.task == "?"]
    if not tests:
        print("check_stubs: no graded tests were collected", file=sys.stderr)
        return 1
    if untagged:
        print("check_stubs: graded tests without a taskM_N marker:", file=sys.stderr)
        for t in untagged:
            print(f"  {t.nodeid}", file=sys.stderr)
        return 1
    if passed:
        print(f"check_stubs: {len(passed)} graded test(s) pass on the untouched stubs:", file=sys.stderr)
        for t in passed:
            print(f"  {t.nodeid}", file=sys.stderr)
        return 1
    print(f"check_stubs: all {len(tests)} graded tests fail on the stubs "
          f"({sum(t.status == 'not implemented' for t in tests)} with their own task's NotImplementedError)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
