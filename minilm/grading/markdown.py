"""The grade as GitHub shows it: a Markdown table for a job summary (``$GITHUB_STEP_SUMMARY``).

The same rows as :func:`minilm.grading.report.format_table` — per task the points, the status and
the reason — but as one GitHub-flavoured Markdown table, which GitHub renders on the page of a
workflow run. A reason is free text from a failing test (an assertion message, a traceback line),
so every character that Markdown or a table would read as markup is escaped, and its line breaks
become ``<br>`` (a table row is one line).

The lines under the table are ``format_table``'s: the same remarks in the same order
(:func:`minilm.grading.report.remarks`: flags, problems, notes), then an interruption, as a list.
"""
from __future__ import annotations

from .report import remarks

# Characters that start markup inside a table cell: emphasis, code, links, HTML and autolinks,
# strikethrough, and the cell separator. CommonMark lets a backslash escape any ASCII punctuation.
_MARKUP = set("\\`*_[]<>|~")


def cell(text: str) -> str:
    """``text`` as the content of one table cell: markup escaped, line breaks as ``<br>``."""
    escaped = "".join("\\" + ch if ch in _MARKUP else ch for ch in str(text))
    escaped = escaped.replace("&", "&amp;")  # "&lt;" in a message stays those four characters
    lines = [line.strip() for line in escaped.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "<br>".join(line for line in lines if line)


def _code(text: str) -> str:
    """A command as an inline code span in a cell (a ``|`` would still end the cell: GitHub reads
    ``\\|`` inside a table's code span as a plain ``|``)."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text.replace('|', chr(92) + '|')}{fence}"


def format_markdown(report) -> str:
    """The grade table of ``report`` (a :class:`minilm.grading.Report`) in Markdown, then a total line."""
    lines = [f"### minilm grade: `{report.impl}/`", "",
             "| task | points | status | reason |", "|---|---|---|---|"]
    for s in report.tasks:
        reason = cell(s.reason)
        if s.command and s.status not in ("not started", "not run", "flagged"):
            reason += ("<br>" if reason else "") + "see it in full: " + _code(s.command)
        lines.append(f"| {cell(s.task)} | {s.points:g} / {s.max_points:g} | {cell(s.status)} | {reason} |")
    total, most = sum(s.points for s in report.tasks), sum(s.max_points for s in report.tasks)
    done = sum(s.status == "passed" for s in report.tasks)
    lines += ["", f"**total: {total:g} / {most:g} points**; {done} of {len(report.tasks)} tasks passed"]
    lines += [f"- {label}: {cell(text)}" for label, text in remarks(report, flagged="**flagged for review**")]
    if report.interrupted:
        lines.append("- interrupted: the tasks marked *not run* were not graded")
    return "\n".join(lines) + "\n"
