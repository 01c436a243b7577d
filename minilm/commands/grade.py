"""``minilm grade``: run the graded tests against your exercises/ and print a score table."""
import argparse
import sys

from minilm import grading
from minilm.grading.markdown import format_markdown

ORDER = 20

STATUSES = """\
statuses:
  passed        every test of the task passed
  failed        a test failed: the reason is the test's own message
  not started   the task's stub still raises NotImplementedError
  blocked       every failure comes from another task ("blocked by Task 3.2"): still a stub, or one of
                yours that did not pass and that this task's tests run on — do that one first
  crashed       the test process died (a segfault in a numba kernel, an abort)
  timed out     a test ran past its limit (an endless loop?); only that test is lost
  error         an exercise file does not import (SyntaxError, ImportError), with file and line
  flagged       the test report of this task's run could not be believed (it was tampered with): 0 points
time limits: each test may use 8 × the CPU time the reference takes (at least 30 s), from
tests/graded/manifest.json; --timeout sets one limit for all.
exit status: 0 only when every graded task passed."""


def register(sub):
    p = sub.add_parser(
        "grade", help="grade exercises/ with the graded tests: a table of points and statuses",
        description="Run tests/graded against your exercises/ (or the global --impl) and print, per task, "
                    "the points, the status and the reason of the first failure. The tests run in child "
                    "processes with a time limit per test: a crash or a hang costs only its task, and a "
                    "new child grades the rest.",
        epilog=STATUSES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", help="only this task (e.g. 2.1) or task module (e.g. 2)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="one time limit for every test (default: each test's own, from tests/graded/manifest.json)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="task modules graded at once (default: 2, or 1 on a one-core machine)")
    p.add_argument("--json", dest="json_path", metavar="RESULTS_JSON",
                   help="also write Gradescope's results.json to this path")
    p.add_argument("--summary", dest="summary_path", metavar="FILE",
                   help="also append the grade table in Markdown to FILE (on GitHub Actions: "
                        "\"$GITHUB_STEP_SUMMARY\", the job summary shown on the run's page)")
    p.add_argument("--verbose", action="store_true", help="show pytest's own output (on stderr)")
    p.add_argument("--seed", type=int, default=0, help="unused; accepted for uniformity")
    p.set_defaults(func=run)


def run(args):
    impl = args.impl or "exercises"
    limit = f"time limit {args.timeout:g} s per test" if args.timeout else "each test's own time limit"
    print(f"grading {impl}/ ({limit})", file=sys.stderr)

    def progress(module_run):
        n = len(module_run.tests)
        ok = sum(t.status == "passed" for t in module_run.tests.values())
        print(f"  {module_run.label}: {ok}/{n} tests passed", file=sys.stderr)

    report = grading.grade(impl, task=args.task, timeout=args.timeout, jobs=args.jobs, verbose=args.verbose,
                           progress=progress)
    if not report.tasks and not report.problems:
        print("no graded tests matched", file=sys.stderr)
        return 1
    print(grading.format_table(report))
    if args.json_path:
        grading.write_results(args.json_path, report)
        print(f"wrote {args.json_path}", file=sys.stderr)
    if args.summary_path:
        with open(args.summary_path, "a", encoding="utf-8") as f:  # append: other steps write there too
            f.write(format_markdown(report))
        print(f"appended the table to {args.summary_path}", file=sys.stderr)
    elif args.summary_path == "":  # --summary "$GITHUB_STEP_SUMMARY" outside GitHub Actions
        print("--summary was given an empty path (GITHUB_STEP_SUMMARY not set?): no summary written",
              file=sys.stderr)
    if report.interrupted:
        return 130
    return 0 if report.passed else 1
