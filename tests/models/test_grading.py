"""The grader: the documented commands, one status per task, isolation from crashes and hangs, and
reasons a student can act on.

A fake kit (this checkout's packages linked into a temporary folder, plus graded tests that pass,
fail, hang, segfault, print a flood, raise another task's stub or meet a SyntaxError) checks the
machinery in seconds; the slow test plants the same mistakes in a real student release.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd import tasks
from minilm import grading
from minilm.grading.verdict import TaskSummary, TestResult, explain
from tests.grading_kit import make_fake_kit
from tests.release_kit import ROOT, fill_from_reference, make_release, plant, run_in

needs_solutions = pytest.mark.skipif(not tasks.solutions_available(), reason="needs a full checkout")

FAKE_TESTS = {
    "test_task01_fake.py": '''
        import os, signal
        import numpy as np
        import pytest

        @pytest.mark.task1_1
        def test_ok():
            pass

        @pytest.mark.task1_1
        def test_prints_a_flood():
            for i in range(500):
                print("debug", i)

        @pytest.mark.task1_2
        @pytest.mark.points(3)
        def test_numpy_message():
            np.testing.assert_allclose([1.0, 2.0], [1.0, 2.5],
                                       err_msg="attention: divide the scores by sqrt(d_k), not d_k")

        @pytest.mark.task1_3
        def test_hangs():
            while True:
                pass

        @pytest.mark.task1_3
        def test_sibling_of_the_hang():
            pass

        @pytest.mark.task1_4
        def test_segfaults():
            os.kill(os.getpid(), signal.SIGSEGV)

        @pytest.mark.task1_4
        def test_after_the_crash():
            pass

        @pytest.mark.task1_5
        def test_needs_another_task():
            raise NotImplementedError("Task 1.1: backward")
    ''',
    "test_task02_fake.py": '''
        import pytest

        @pytest.mark.task2_1
        def test_own_stub():
            raise NotImplementedError("Task 2.1: softmax_forward")

        @pytest.mark.task2_2
        def test_syntax_error_in_an_exercise():
            compile("def f(:\\n    pass\\n", "exercises/task02_kernels/cross_entropy.py", "exec")

        @pytest.mark.task2_3
        @pytest.mark.hidden
        def test_held_back():
            assert 1 + 1 == 3, "1 + 1 should be 2 here, as in the visible test"
    ''',
}


@pytest.fixture(scope="module")
def fake_kit(tmp_path_factory) -> Path:
    return make_fake_kit(tmp_path_factory.mktemp("fake_kit") / "kit", FAKE_TESTS)


@pytest.fixture(scope="module")
def fake_report(fake_kit):
    return grading.grade("exercises", root=fake_kit, timeout=4)


def _task(report, task) -> TaskSummary:
    return next(s for s in report.tasks if s.task == task)


def test_every_task_gets_one_status(fake_report):
    statuses = {s.task: s.status for s in fake_report.tasks}
    assert statuses == {"1.1": "passed", "1.2": "failed", "1.3": "timed out", "1.4": "crashed",
                        "1.5": "blocked by Task 1.1", "2.1": "not started", "2.2": "error", "2.3": "failed"}
    assert not fake_report.passed and not fake_report.problems


def test_a_hang_costs_its_test_and_its_task_only(fake_report):
    hang = _task(fake_report, "1.3")
    by_name = {t.name: t for t in hang.tests}
    assert by_name["test_hangs"].status == "timed out" and "the limit is 4 s" in by_name["test_hangs"].message
    assert by_name["test_sibling_of_the_hang"].status == "passed"  # a timeout costs only its own test
    assert hang.points == 1 and hang.status == "timed out"
    assert _task(fake_report, "1.4").points == 1  # the crash cost one test; its sibling still ran


def test_a_crash_names_the_signal_and_the_next_step(fake_report):
    crash = _task(fake_report, "1.4")
    assert "SIGSEGV" in crash.reason and "NUMBA_DISABLE_JIT=1" in crash.reason
    assert "again when it ran alone in a fresh process" in crash.reason  # a sibling ran before it
    assert crash.command.startswith("NUMBA_DISABLE_JIT=1 pytest --impl exercises")


def test_the_reason_is_the_assertions_own_message(fake_report):
    reason = _task(fake_report, "1.2").reason
    assert reason.startswith("test_numpy_message: attention: divide the scores by sqrt(d_k)")
    assert "Not equal to tolerance" not in reason and "AssertionError" not in reason
    assert "Max absolute difference" in reason


def test_a_syntax_error_names_the_file_and_the_line(fake_report):
    reason = _task(fake_report, "2.2").reason
    assert "SyntaxError in exercises/task02_kernels/cross_entropy.py, line 1" in reason


def test_a_flood_of_printing_is_reported(fake_report):
    assert "printed 500 lines" in _task(fake_report, "1.1").reason


def test_results_json_carries_every_test(fake_report, tmp_path):
    path = tmp_path / "results.json"
    grading.write_results(path, fake_report)
    data = json.loads(path.read_text())
    assert data["score"] == 4 and data["max_score"] == 13
    tests = {t["name"]: t for t in data["tests"]}
    assert len(tests) == 11
    hang = tests["Task 1.3: test_hangs"]
    assert hang["status"] == "failed" and hang["output"].startswith("timed out: ")
    assert tests["Task 1.2: test_numpy_message"]["output"].startswith("failed: attention: divide")
    assert tests["Task 2.3: test_held_back"]["visibility"] == "after_published"
    assert tests["Task 1.1: test_ok"]["visibility"] == "visible"
    assert "total: 4 / 12 points" in data["output"]  # the held-back test is not in the visible table
    assert "test_held_back" not in data["output"] and "1 + 1 should be 2" not in data["output"]
    assert {"execution_time", "visibility", "stdout_visibility"} <= set(data)


def test_the_table_wraps_the_reason_and_keeps_the_command_whole(fake_report):
    table = grading.format_table(fake_report, width=80)
    lines = table.splitlines()
    assert all(len(l) <= 80 for l in lines if "see it in full" not in l)
    assert any('see it in full: pytest --impl exercises "tests/graded/test_task01_fake.py::test_numpy_message"'
               in l for l in lines)


@needs_solutions
@pytest.mark.parametrize("impl, code", [("solutions", 0), ("exercises", 1)])
def test_grade_exits_zero_only_when_every_task_passed(impl, code):
    env = {k: v for k, v in os.environ.items() if k != "MINILM_IMPL"}
    run = subprocess.run([sys.executable, "-m", "minilm.cli", "--impl", impl, "grade", "--task", "1.1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == code, run.stdout + run.stderr[-2000:]


def test_task_argument_is_checked():
    from autograd.errors import MiniLMError
    with pytest.raises(MiniLMError, match="expected a task id like 2.1"):
        grading.grade("exercises", task="two")
    with pytest.raises(MiniLMError, match="no graded tests for module 99"):
        grading.grade("exercises", task="99")


def test_explain_keeps_the_message_and_drops_the_noise():
    text = ("\nNot equal to tolerance rtol=1e-07, atol=0\nsoftmax: rows must sum to 1\n"
            "Mismatched elements: 2 / 2 (100%)\nMax absolute difference among violations: 0.5\n"
            " ACTUAL: array([1., 2.])\n DESIRED: array([1. , 2.5])")
    assert explain(text) == ("softmax: rows must sum to 1\nMismatched elements: 2 / 2 (100%)\n"
                             "Max absolute difference among violations: 0.5")
    assert explain("the mask must be causal\nassert False") == "the mask must be causal"
    assert explain("assert 3 == 4\n +  where 3 = f()") == "assert 3 == 4\n +  where 3 = f()"


def test_a_task_status_is_not_started_only_on_its_own_stub():
    def summary(*states):
        s = TaskSummary("3.4")
        for i, (status, by) in enumerate(states):
            s.tests.append(TestResult(f"t::{i}", "3.4", 1, status=status, blocked_by=by))
        return s
    assert summary(("not implemented", ""), ("blocked", "3.2")).status == "not started"
    assert summary(("blocked", "3.2"), ("passed", "")).status == "blocked by Task 3.2"
    assert summary(("not implemented", ""), ("passed", "")).status == "failed"
    assert summary(("failed", ""), ("timed out", "")).status == "timed out"


# ---- the documented commands ---------------------------------------------------------------------------
DOCUMENTED = [["--impl", "exercises", "-m", "task1_2"], ["--impl=exercises", "-m", "task1_2"]]


@pytest.mark.parametrize("where, args", [(".", DOCUMENTED[0]), (".", DOCUMENTED[1]), ("docs", DOCUMENTED[0]),
                                         ("tests/graded", DOCUMENTED[0])], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_documented_pytest_command_runs_in_the_checkout(where, args):
    env = {k: v for k, v in os.environ.items() if k not in ("MINILM_IMPL", "PYTEST_ADDOPTS")}
    run = subprocess.run([sys.executable, "-m", "pytest", *args, "-q", "-p", "no:randomly"], cwd=ROOT / where,
                         env=env, capture_output=True, text=True, timeout=300)
    assert "unrecognized arguments" not in run.stderr, run.stderr
    assert "NotImplementedError: Task 1.2" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.returncode == 1 and " failed" in run.stdout.splitlines()[-1]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    if not tasks.solutions_available() or shutil.which("git") is None:
        pytest.skip("a release is made from a full checkout, with git")
    dest = tmp_path_factory.mktemp("grade_release") / "minilm-student"
    done = make_release(dest, "--no-git")
    assert done.returncode == 0, done.stderr
    return dest


@pytest.mark.parametrize("where, args", [(".", DOCUMENTED[0]), (".", DOCUMENTED[1]), (".", ["-m", "task1_2"]),
                                         ("tests/graded", DOCUMENTED[0])], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_documented_pytest_command_runs_in_a_release(release, where, args):
    run = run_in(release, "pytest", *args, "-q", "-p", "no:randomly", cwd=release / where, timeout=300)
    assert "unrecognized arguments" not in run.stderr, run.stderr
    assert "NotImplementedError: Task 1.2" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert "10 failed" in run.stdout.splitlines()[-1], run.stdout[-500:]


@needs_solutions
@pytest.mark.slow
def test_planted_mistakes_in_a_release(release, tmp_path):
    """The issue's scenario: a kernel writing out of bounds, an endless loop, a SyntaxError, a flood of
    prints, correct work in module 1 and Task 10.1, a correct 3.4 over a stub 3.2, wrong 3.1 and 1.1."""
    work = tmp_path / "kit"
    shutil.copytree(release, work, symlinks=True)
    fill_from_reference(work, "task01_autograd", "task10_distill/soft_targets.py", "task03_transformer/blocks.py")
    plant(work, "task02_kernels/matmul.py", "i1 = min(i0 + TILE, M)", "i1 = i0 + TILE", from_reference=True)
    plant(work, "task07_electra/sampling.py", 'raise NotImplementedError("Task 7.1: sample_from_logits")',
          "while True:\n        pass")
    plant(work, "task09_seq2seq/span_corruption.py", '    raise NotImplementedError("Task 9.1',
          '    x = = 1\n    raise NotImplementedError("Task 9.1')
    begin = "    # BEGIN " + "SOLUTION\n"  # spelt in two halves: this file ships in a release
    plant(work, "task05_bert/masking.py", begin, begin + "    for _i in range(300):\n        print('debug', _i)\n",
          from_reference=True)
    fill_from_reference(work, "task05_bert/mlm_loss.py")
    results = tmp_path / "r.json"
    run = run_in(work, "minilm.cli", "grade", "--timeout", "15", "--json", str(results), timeout=900)
    table = run.stdout
    assert run.returncode == 1, table + run.stderr[-3000:]
    rows = {line.split()[0]: line for line in table.splitlines() if line[:1].isdigit()}
    status = {task: " ".join(line.split()[2:4]) for task, line in rows.items()}
    # 2.3's kernel writes past its output: the process dies, in 2.3's own test or, when the write only
    # corrupts memory, later (seen in CI: in a stub 2.1's test). A test that dies after others ran in
    # its process is believed only if it dies again alone, so no other task is blamed; and 2.3 is
    # crashed, or (if its tests never die alone) the report's note names it with the command to run
    crashed = [t for t, st in status.items() if st.startswith("crashed")]
    notes = [line for line in table.splitlines() if line.startswith("note:")]
    assert crashed in (["2.3"], []) and (crashed or any("Task 2.3" in n for n in notes)), table
    assert "numba" in table, table
    assert status["7.1"] == "timed out", rows["7.1"]
    assert status["9.1"].startswith("error") and "SyntaxError" in table and "span_corruption.py, line" in table
    assert "printed" in table and "debug prints" in table
    for task in ("1.1", "1.2", "1.3", "1.4", "1.5", "10.1", "5.2"):
        got, most = rows[task].split()[1].split("/")
        assert got == most and status[task].startswith("passed"), rows[task]
    assert rows["3.4"].split()[2:6] == ["blocked", "by", "Task", "3.2"], rows["3.4"]
    for task, st in status.items():
        if task not in ("1.1", "1.2", "1.3", "1.4", "1.5", "10.1", "5.2", "7.1", "9.1", "3.4", "2.3"):
            assert st.startswith(("not started", "blocked")), rows[task]
    data = json.loads(results.read_text())
    outputs = [t["output"] for t in data["tests"] if t["name"].startswith("Task 7.1:")]
    assert any(o.startswith("timed out") for o in outputs) and data["score"] > 0, outputs  # only that test


@needs_solutions
@pytest.mark.slow
@pytest.mark.parametrize("task, rel, old, new, effect", [
    ("3.1", "task03_transformer/attention.py", "s = 1.0 / math.sqrt(d) if scale", "s = 1.0 / d if scale",
     "not by √d"),
    ("1.1", "task01_autograd/backward.py", "grads[key] = g if key not in grads else grads[key] + g",
     "grads[key] = g", "accumulate"),
    ("8.1", "task08_xlnet/permutation.py", "    content_mask = perm_mask & ~np.eye",
     "    perm_mask = perm_mask.T\n    content_mask = perm_mask & ~np.eye", "transposed"),
], ids=["3.1 divides by d", "1.1 overwrites", "8.1 transposes the mask"])
def test_a_planted_mistake_is_named_by_its_effect(release, tmp_path, task, rel, old, new, effect):
    work = tmp_path / "kit"
    shutil.copytree(release, work, symlinks=True)
    fill_from_reference(work, rel.split("/")[0])  # the rest of the module done right
    plant(work, rel, old, new)
    run = run_in(work, "minilm.cli", "grade", "--task", task, timeout=600)
    row = next(l for l in run.stdout.splitlines() if l.startswith(task + " "))
    assert " failed " in row and run.returncode == 1, run.stdout
    assert effect in run.stdout and "AssertionError:" not in run.stdout, run.stdout


# ---- the self-check under the grader's limits ------------------------------------------------------------
@needs_solutions
@pytest.mark.slow
def test_the_documented_self_check_stops_an_endless_loop_and_names_a_crash(release, tmp_path):
    """``pytest --impl exercises -m taskN_M`` in a release: an endless loop stops at its limit with
    "timed out" (and the other tests still run); a kernel writing out of bounds is named, with a summary."""
    work = tmp_path / "kit"
    shutil.copytree(release, work, symlinks=True)
    plant(work, "task05_bert/wordpiece.py", '    raise NotImplementedError("Task 5.1: wordpiece_split")',
          '    while True:\n        pass')
    plant(work, "task02_kernels/matmul.py", "i1 = min(i0 + TILE, M)", "i1 = i0 + TILE", from_reference=True)
    hang = run_in(work, "pytest", "--impl", "exercises", "-m", "task5_1", "-k", "longest_match or punctuation",
                  "-q", "-p", "no:randomly", timeout=200)
    out = hang.stdout + hang.stderr
    assert hang.returncode == 1, out[-3000:]
    assert "test_wordpiece_takes_the_longest_match timed out: still running after" in out, out[-3000:]
    assert "1 passed" in out or "test_punctuation_is_split_off PASSED" in out or "1 failed" in out, out[-3000:]
    crash = run_in(work, "pytest", "--impl", "exercises", "-m", "task2_3", "-q", "-p", "no:randomly", timeout=300)
    out = crash.stdout + crash.stderr
    assert crash.returncode == 1, out[-3000:]
    assert "minilm self-check: these tests did not finish" in out and "crashed: the test process died with SIG" in out
    assert "NUMBA_DISABLE_JIT=1" in out


def test_the_manifest_lists_every_graded_test_with_its_points():
    """The grader takes the tests and their points from tests/graded/manifest.json: it must be current."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "make_grading_manifest.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    entries = grading.manifest.load(ROOT)
    assert sum(e.points for e in entries.values()) > 0 and all(e.cpu_seconds >= 0 for e in entries.values())
    assert all(u != e.task for e in entries.values() for u in e.uses)


@needs_solutions
@pytest.mark.slow
def test_a_wrong_upstream_task_is_named_instead_of_blaming_the_task_under_test(release, tmp_path):
    """A wrong (not stubbed) Task 1.2 makes a correct Task 1.1 fail in a release, where the library runs
    on the student's code: the grader says 1.1 is blocked by 1.2 and to fix that first."""
    work = tmp_path / "kit"
    shutil.copytree(release, work, symlinks=True)
    fill_from_reference(work, "task01_autograd")
    plant(work, "task01_autograd/elementwise.py", "return unbroadcast(grad_output * b, a.shape), ",
          "return unbroadcast(-grad_output * b, a.shape), ")
    run = run_in(work, "minilm.cli", "grade", "--task", "1", timeout=600)
    rows = {line.split()[0]: line for line in run.stdout.splitlines() if line[:1].isdigit()}
    assert " failed " in rows["1.2"], run.stdout
    assert "blocked by Task 1.2" in rows["1.1"], run.stdout
    assert "fix Task 1.2 first" in run.stdout and "must be summed, not overwritten" not in run.stdout


@needs_solutions
@pytest.mark.slow
def test_a_slot_that_answers_with_the_engines_own_op_fails(release, tmp_path):
    """Task 2.5 answered by calling the engine's layer norm (whose numba kernel computes it) does not
    pass: while the task's tests run, the engine runs layer norm on the task's own slot."""
    work = tmp_path / "kit"
    shutil.copytree(release, work, symlinks=True)
    fill_from_reference(work, "task02_kernels/layer_norm.py", "task02_kernels/gelu.py")  # GELU is 2.5 too
    path = work / "exercises" / "task02_kernels" / "layer_norm.py"
    path.write_text(path.read_text() + '''

def layer_norm_forward(x, weight, bias, eps=1e-5):
    from autograd import Tensor, functional as F
    out = F.layer_norm(Tensor(x), Tensor(weight), Tensor(bias), eps=eps).data
    mean = x.mean(-1, keepdims=True)
    return out, mean, 1.0 / (x.var(-1, keepdims=True) + eps) ** 0.5
''')
    run = run_in(work, "minilm.cli", "grade", "--task", "2.5", timeout=600)
    row = next(l for l in run.stdout.splitlines() if l.startswith("2.5 "))
    assert " failed " in row and "RecursionError" in run.stdout and "engine's own op" in run.stdout, run.stdout
