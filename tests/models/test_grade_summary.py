"""``minilm grade --summary`` (minilm/grading/markdown.py): the grade as a Markdown table, one row per
task, appended to the file GitHub Actions names in ``GITHUB_STEP_SUMMARY`` (the run's job summary).
"""
from __future__ import annotations

from argparse import Namespace

from minilm import grading
from minilm.commands import grade as grade_command
from minilm.grading.markdown import cell, format_markdown
from tests.models.autograder_kit import table_rows


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
    rows = table_rows(text)
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
