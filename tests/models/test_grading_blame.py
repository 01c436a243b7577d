"""Who is blamed when a test of one task fails inside another task of the student's
(minilm/grading/__init__.py, ``_blame_upstream``): the caller is reported blocked by the task that
failed on its own, whether the test failed, crashed or hung there; scores do not change."""
from __future__ import annotations

from minilm.grading import TaskSummary, TestResult, _blame_upstream


def test_a_crash_or_hang_inside_an_upstream_task_blocks_the_task_that_calls_it():
    """Task 3.2 aborts the process: its own test crashes, and so does every test of 3.4 that calls it.
    3.4 is reported blocked by 3.2 (fix that first), with the crash in its message, and scores 0; a
    crash of 3.4 whose upstream task passed stays 3.4's own."""
    def task(name, *tests):
        s = TaskSummary(name)
        for i, (status, uses) in enumerate(tests):
            s.tests.append(TestResult(f"t{name}::{i}", name, 1, status=status, uses=uses, message="SIGABRT"))
        return s
    by_task = {"3.2": task("3.2", ("crashed", ())), "3.4": task("3.4", ("crashed", ("3.2",)), ("passed", ())),
               "3.5": task("3.5", ("timed out", ("3.2",))), "3.6": task("3.6", ("crashed", ("3.1",))),
               "3.1": task("3.1", ("passed", ()))}
    _blame_upstream(by_task, {3})
    assert by_task["3.2"].status == "crashed" and by_task["3.6"].status == "crashed"
    assert by_task["3.4"].status == by_task["3.5"].status == "blocked by Task 3.2"
    assert by_task["3.4"].points == 1 and by_task["3.4"].tests[0].score == 0     # the passing test keeps its point
    blocked = by_task["3.4"].tests[0]
    assert blocked.message.startswith("this test runs on your Task 3.2, which did not pass: fix Task 3.2 first")
    assert blocked.message.endswith("The test crashed: SIGABRT")
    assert by_task["3.5"].tests[0].message.endswith("The test timed out: SIGABRT")
    by_task = {"3.2": task("3.2", ("crashed", ())), "3.4": task("3.4", ("crashed", ("3.2",)))}
    _blame_upstream(by_task, {4})                                   # module 3 is not the student's: no blame
    assert by_task["3.4"].status == "crashed"
