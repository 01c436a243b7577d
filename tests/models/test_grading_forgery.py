"""A submission cannot write its own verdict: each way of forging a grade that a student's code can
try from inside the test process, planted in a fake kit, scores 0 for what it forged and is flagged
with its reason — or, where it is not a forgery but a nuisance (a daemon, a flood), costs only time
within the limits.

The forgeries are the ones a reviewer found working against the old grader: events written on the
report channel, the reporter rewritten in process, a daemon that keeps the pipe open, a 30 MB
assertion message. (The autograder's cross-module relay is tested end to end in test_autograder_end_to_end.py;
the library twin and the tests' helper in test_student_release.py and test_task_helpers.py.)
"""
from __future__ import annotations

import json
import os
import time

import pytest

from minilm import grading
from tests.grading_kit import PATCH_REPORTER, make_fake_kit

HONEST = '''
import pytest

@pytest.mark.task1_2
def test_honest_pass():
    pass

@pytest.mark.task1_2
def test_honest_fail():
    assert 1 + 1 == 3, "an honest wrong answer"
'''

FD = '''
import json, os, sys

def fd():
    return int(sys.argv[sys.argv.index("--fd") + 1])

def send(**event):
    os.write(fd(), (json.dumps(event) + "\\n").encode())
'''

FORGERIES = {
    # results written on the report channel for tests that never ran, with points of their own
    "channel": FD + '''
import pytest

@pytest.mark.task1_1
def test_writes_results():
    for name in ("test_invented", "test_honest_fail"):
        send(event="start", nodeid=f"tests/graded/test_task01_forge.py::{name}")
        send(event="result", nodeid=f"tests/graded/test_task01_forge.py::{name}", outcome="passed", points=64)
    assert False
''',
    # the reporter object patched in process: every result says "passed"
    "reporter": PATCH_REPORTER + '''
import pytest

@pytest.mark.task1_1
def test_wrong_but_reported_passed():
    assert False, "wrong, but reported passed"
''',
    # a huge line on the report channel (the grader's reporter never sends one)
    "huge-event": FD + '''
import pytest

@pytest.mark.task1_1
def test_floods_the_channel():
    os.write(fd(), b"x" * (2 << 20) + b"\\n")
''',
    # the reporter silenced: it drops the start of every test but its own, so results come out of turn
    "silenced": '''
import gc
import pytest

@pytest.mark.task1_1
def test_silences_the_reporter():
    reporter = next(o for o in gc.get_objects() if type(o).__name__ == "Reporter")
    real = reporter.send
    reporter.send = lambda **e: None if e.get("event") == "start" and "forge" not in e.get("nodeid", "") else real(**e)
''',
}


def _grade(tmp_path, body: str, **kw):
    root = make_fake_kit(tmp_path / "kit", {"test_task01_forge.py": body, "test_task01_honest.py": HONEST})
    t0 = time.monotonic()
    report = grading.grade("exercises", root=root, jobs=1, **kw)
    return report, time.monotonic() - t0


@pytest.mark.parametrize("kind", sorted(FORGERIES))
def test_a_forged_report_scores_zero_and_is_flagged(tmp_path, kind):
    report, seconds = _grade(tmp_path, FORGERIES[kind], timeout=10)
    assert report.flags, f"{kind}: not flagged:\n{grading.format_table(report)}"
    assert all(t.score == 0 for t in report.tests), grading.format_table(report)
    assert sum(s.max_points for s in report.tasks) == 3  # the manifest's points, not the child's
    table = grading.format_table(report)
    assert "FLAGGED for review: module 1" in table and "flagged" in table
    assert seconds < 60, f"{kind} took {seconds:.0f} s"
    data = grading.results_json(report)
    assert data["score"] == 0 and "FLAGGED for review" in data["output"]


def test_honest_work_beside_no_forgery_is_graded(tmp_path):
    report, _ = _grade(tmp_path, '''
import pytest

@pytest.mark.task1_1
def test_fine():
    pass
''')
    assert not report.flags and not report.problems
    assert {t.name: t.status for t in report.tests} == {"test_fine": "passed", "test_honest_pass": "passed",
                                                       "test_honest_fail": "failed"}
    assert report.tests[0].cpu >= 0 and sum(t.score for t in report.tests) == 2


def test_a_daemon_neither_outlives_the_grading_nor_stalls_it(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    report, seconds = _grade(tmp_path, f'''
import os, time
import pytest

@pytest.mark.task1_1
def test_leaves_a_daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:  # an orphan in a session of its own, holding the report pipe
            with open({str(pidfile)!r}, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(300)
        os._exit(0)
    time.sleep(0.5)
''')
    assert seconds < 40, f"the daemon stalled the grading: {seconds:.0f} s"
    assert {t.name: t.status for t in report.tests}["test_leaves_a_daemon"] == "passed"
    pid = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        pytest.fail(f"the daemon {pid} outlived the grading")


def test_a_huge_message_is_cut_and_results_json_stays_small(tmp_path):
    report, _ = _grade(tmp_path, '''
import pytest

@pytest.mark.task1_1
def test_huge_message():
    assert False, "x" * 30_000_000
''')
    assert not report.flags
    test = next(t for t in report.tests if t.name == "test_huge_message")
    assert test.status == "failed" and len(test.message) <= 5000
    data = grading.results_json(report)
    assert len(json.dumps(data)) < 1_000_000
    assert all(len(t["output"]) <= 2000 for t in data["tests"])


def test_a_test_of_ones_own_in_tests_graded_is_not_graded_and_not_a_forgery(tmp_path):
    """A student who adds a test with a task marker to tests/graded (in a release) is not flagged: the
    grader runs only the tests its manifest lists."""
    root = make_fake_kit(tmp_path / "kit", {"test_task01_honest.py": HONEST})
    (root / "tests" / "graded" / "test_task01_mine.py").write_text(
        "import pytest\n\n@pytest.mark.task1_2\ndef test_my_own():\n    pass\n")
    report = grading.grade("exercises", root=root, jobs=1)
    assert not report.flags and not report.problems, grading.format_table(report)
    assert sorted(t.name for t in report.tests) == ["test_honest_fail", "test_honest_pass"]
