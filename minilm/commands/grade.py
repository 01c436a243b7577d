"""``minilm grade``: run the graded tests against your exercises/ and print a score table."""
import json
import sys

from minilm import grading

ORDER = 20


def register(sub):
    p = sub.add_parser("grade", help="grade exercises/ (or --impl solutions) with the graded tests",
                       description="Run tests/graded against a task implementation and print, per task, "
                                   "the points, the status (passed / failed / not started) and the first "
                                   "failure. Uses exercises/ unless the global --impl says otherwise.")
    p.add_argument("--task", help="only this task (e.g. 2.1) or task module (e.g. 2)")
    p.add_argument("--json", dest="json_path", metavar="RESULTS_JSON",
                   help="also write Gradescope's results.json to this path")
    p.add_argument("--verbose", action="store_true", help="show pytest's own output (on stderr)")
    p.add_argument("--seed", type=int, default=0, help="unused; accepted for uniformity")
    p.set_defaults(func=run)


def run(args):
    impl = args.impl or "exercises"
    summaries = grading.run_graded(impl, task=args.task, echo=args.verbose)
    if not summaries:
        print("no graded tests matched", file=sys.stderr)
        return 1
    print(f"grading {impl}/", file=sys.stderr)
    print(grading.format_table(summaries))
    if args.json_path:
        grading.write_results(args.json_path, summaries)
        print(f"wrote {args.json_path}", file=sys.stderr)
    return 0
