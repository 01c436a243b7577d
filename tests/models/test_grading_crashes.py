"""The grader and a process that dies: a crash is believed only where it happens alone.

A numba kernel does no bounds checks, so one task's out-of-bounds write can kill the grading process
later, in another task's test or between tests (minilm/grading/runner.py). These tests plant such
deaths in fake kits, and simulate the loop's narrowing, and check that only the task that breaks the
process loses points.
"""
from __future__ import annotations

from pathlib import Path

from minilm import grading
from minilm.grading import runner
from minilm.grading.verdict import TaskSummary
from tests.grading_kit import make_fake_kit


def _task(report, task) -> TaskSummary:
    return next(s for s in report.tasks if s.task == task)


DELAYED_CRASH = {"test_task03_fake.py": '''
    import os, signal
    import pytest

    BROKEN = []  # what an out-of-bounds write in a numba kernel leaves behind: a process that dies later

    @pytest.mark.task3_1
    def test_writes_past_its_buffer():
        BROKEN.append(True)
        assert False, "the kernel's values are wrong"

    @pytest.mark.task3_2
    def test_innocent_next_in_the_same_process():
        if BROKEN:
            os.kill(os.getpid(), signal.SIGSEGV)
''', "test_task04_fake.py": '''
    import os, signal
    import pytest

    BROKEN = []

    @pytest.fixture(scope="module", autouse=True)
    def dies_between_tests():  # the corrupted process dies outside any test: here, at the module's teardown
        yield
        if BROKEN:
            os.kill(os.getpid(), signal.SIGSEGV)

    @pytest.mark.task4_1
    def test_writes_past_its_buffer_and_passes():
        BROKEN.append(True)

    @pytest.mark.task4_2
    def test_another_task_in_that_process():
        pass
'''}


def test_a_crash_caused_by_an_earlier_test_does_not_cost_the_test_it_killed(tmp_path):
    """Seen in CI: a task's numba kernel wrote out of bounds and the process died in another task's
    test. The test that died after another task's tests ran in its process runs again in a process
    without them: there it passes, and only the task that wrote loses its points. A test that kills its own process on the way out
    (module 4: at its file's teardown) dies alone too, and that is believed."""
    kit = make_fake_kit(tmp_path / "kit", DELAYED_CRASH)
    report = grading.grade("exercises", root=kit, timeout=20)
    assert {s.task: s.status for s in report.tasks} == {"3.1": "failed", "3.2": "passed", "4.1": "crashed",
                                                       "4.2": "passed"}, report.tasks
    assert not report.problems, report.problems
    assert _task(report, "3.2").points == _task(report, "3.2").max_points
    table = grading.format_table(report, width=100)
    assert ("note: a test of Task 3.2 died (SIGSEGV) after tests of Task 3.1 had run in it, and passed when it "
            "ran again apart from them in a fresh process") in table, table
    assert 'NUMBA_DISABLE_JIT=1 pytest --impl exercises -m "task3_2 or task3_1"' in table, table
    assert "test_innocent" not in table  # tasks only: a note never names a test (held-back ones stay hidden)


def test_a_process_that_dies_between_tests_is_narrowed_down_to_the_test_that_breaks_it():
    """The loop of ModuleRun with its children simulated: any child that runs ``t3`` dies outside any
    test (nothing it ran counts). The grader halves the batch until ``t3`` runs alone, marks it
    crashed, and grades every other test; no "keeps dying" problem, and a bounded number of children."""
    from minilm.grading.manifest import Entry
    from minilm.grading.runner import ModuleRun
    names = [f"tests/graded/test_task05_x.py::t{i}" for i in range(8)]
    entries = {n: Entry(nodeid=n, task="5.1", points=1.0, hidden=False, cpu_seconds=0.1, uses=())
               for n in names}

    class Simulated(ModuleRun):
        children = 0

        def _one_child(self, done):
            self.children += 1
            todo = self._todo(done)
            self._ran = list(todo)
            self.proc = type("P", (), {"returncode": -11})()
            if names[3] in todo:                      # t3 breaks the process: it dies after the batch
                return False
            for n in todo:
                self.tests[n].status = "passed"
            return all(t.status != "not run" for t in self.tests.values())

    run = Simulated(5, "exercises", None, root=Path("."), entries=entries).run()
    assert not run.problem, run.problem
    assert run.tests[names[3]].status == "crashed" and "just after this test" in run.tests[names[3]].message
    assert all(run.tests[n].status == "passed" for n in names if n != names[3])
    assert run.children <= 7, run.children  # 8 tests: all, 4, 2 (pass), 2, 1 (pass), 1 (t3), the rest


WRITER_AND_INNOCENT = {"test_task07_fake.py": '''
    import os, signal
    import pytest

    BROKEN = []  # every test of Task 7.1 writes out of bounds; the second write in a process kills it

    def _write():
        BROKEN.append(True)
        if len(BROKEN) > 1:
            os.kill(os.getpid(), signal.SIGSEGV)

    @pytest.mark.task7_1
    def test_a1_writes():
        _write()

    @pytest.mark.task7_1
    def test_a2_writes():
        _write()

    @pytest.mark.task7_1
    def test_a3_writes():
        _write()

    @pytest.mark.task7_2
    def test_b1_innocent():
        if BROKEN:
            os.kill(os.getpid(), signal.SIGABRT)

    @pytest.mark.task7_2
    def test_b2_innocent():
        assert not BROKEN
'''}


def test_a_task_that_keeps_writing_out_of_bounds_is_set_apart_from_the_others(tmp_path, monkeypatch):
    """Seen in CI: a planted Task 2.3 kernel killed its own tests, one after another, until the grader
    had used up its re-runs, and then a stub Task 2.1's test died after it and was believed crashed.
    Now a test that dies after another task's tests is never judged there: both tasks are set apart,
    each into processes of its own, and the innocent one passes there, with the re-runs used up."""
    monkeypatch.setattr(runner, "MAX_RERUNS", 1)
    kit = make_fake_kit(tmp_path / "kit", WRITER_AND_INNOCENT)
    report = grading.grade("exercises", root=kit, timeout=20)
    assert {s.task: s.status for s in report.tasks} == {"7.1": "crashed", "7.2": "passed"}, report.tasks
    assert not report.problems and not report.flags, (report.problems, report.flags)
    table = grading.format_table(report, width=100)
    assert "died (SIGABRT) after tests of Task 7.1 had run in it, and passed when it ran again apart" in table, table


HANG_IN_THE_CHECKS = {"test_task06_fake.py": '''
    import sys
    import pytest

    @pytest.mark.task6_1
    def test_leaves_the_process_broken():
        def spin(frame, event, arg):  # a broken process: the grader's own closing checks never end
            if ".grading" in frame.f_code.co_filename:
                while True:
                    pass
        sys.settrace(spin)

    @pytest.mark.task6_2
    def test_innocent():
        pass
'''}


def test_a_process_that_hangs_in_the_graders_own_checks_costs_only_the_test_that_broke_it(tmp_path):
    """Seen in CI: a process broken by an out-of-bounds write hung in the grader's closing checks, and
    the whole group's report was flagged (an honest Task 10.1 scored 0). Such a hang proves only that
    something in that child broke it: the batch is narrowed like a death between tests."""
    kit = make_fake_kit(tmp_path / "kit", HANG_IN_THE_CHECKS)
    report = grading.grade("exercises", root=kit, timeout=4)
    assert not report.flags, report.flags
    assert {s.task: s.status for s in report.tasks} == {"6.1": "crashed", "6.2": "passed"}, report.tasks
    broken = _task(report, "6.1").tests[0]
    assert "hung in the grader's closing checks, just after this test" in broken.message, broken.message


KILLED_AT_START = '''
    import os, pathlib, signal
    import pytest

    ALWAYS = ALWAYS_VALUE  # die at every start, or at the first one only
    MARK = pathlib.Path(__file__).with_name("killed-once")
    if os.environ.get("MINILM_GRADING_CHILD") and (ALWAYS or not MARK.exists()):
        MARK.write_text("")
        os.kill(os.getpid(), signal.SIGKILL)  # what the out-of-memory killer does to a process starting up

    @pytest.mark.task6_1
    def test_honest():
        pass
'''


def test_a_child_killed_once_before_it_lists_its_tests_is_started_again(tmp_path):
    """A signal that kills a child before it has listed its tests (a machine's hiccup: the OOM killer,
    a stray kill) used to end the module at once: "could not start", every task 0. It is started
    once more; only a child that dies that way twice is believed."""
    once = KILLED_AT_START.replace("ALWAYS_VALUE", "False")
    kit = make_fake_kit(tmp_path / "kit", {"test_task06_fake.py": once})
    report = grading.grade("exercises", root=kit, timeout=20)
    assert (kit / "tests" / "graded" / "killed-once").exists()  # it did die once
    assert not report.problems, report.problems
    assert {s.task: s.status for s in report.tasks} == {"6.1": "passed"}, report.tasks

    always = KILLED_AT_START.replace("ALWAYS_VALUE", "True")
    kit = make_fake_kit(tmp_path / "kit2", {"test_task06_fake.py": always})
    report = grading.grade("exercises", root=kit, timeout=20)
    assert any("could not start (exit code -9)" in p for p in report.problems), report.problems
    assert {s.task: s.status for s in report.tasks} == {"6.1": "not run"}, report.tasks
