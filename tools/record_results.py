"""Run the README's "Results in miniature" commands and record what they print with --json.

    python tools/record_results.py            # all of them (about 15 minutes on 2 cores), then
    python tools/sync_experiment_tables.py    # writes the README block from the record
    python tools/record_results.py --only "minilm train gpt"

Each command runs as a user would type it (default sizes, seed 0), in a child process, with --json;
the summary it prints and the wall time go to docs/experiments/results-in-miniature.json. The README
lines are rendered from that file by tools/sync_experiment_tables.py (LINES there), so no number in
the block is typed by hand.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "docs" / "experiments" / "results-in-miniature.json"

COMMANDS = [  # as the README shows them; --json (and --out for train) are added when run
    "minilm train gpt",
    "minilm train bert",
    "minilm train xlnet",
    "minilm train transformer-xl",
    "minilm train t5 --task reverse",
    "minilm train bart",
    "minilm finetune",
    "minilm finetune --family gpt",
]


def minilm_json(argv: list[str], *, who: str, label: str, env: dict | None = None) -> dict:
    """What ``python -m minilm.cli ARGV`` prints with --json, run as a user runs it: in a child
    process, from the repository root, on this checkout's code, with ``env`` added to the
    environment. A failure exits with ``who``, the command's ``label`` and the end of its stderr.
    Also tools/make_experiment_fingerprints.py's way to run an experiment."""
    done = subprocess.run([sys.executable, "-m", "minilm.cli", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        raise SystemExit(f"{who}: {label} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def run(command: str) -> dict:
    """The JSON summary ``command`` prints, with its wall time in seconds: the README's
    ``train``/``finetune`` commands under the machine's own thread settings (unlike the
    fingerprints' one-thread runs), because the wall time recorded here is what a user's run takes."""
    argv = command.split()[1:]
    with tempfile.TemporaryDirectory() as out:
        extra = ["--json"] + (["--no-progress", "--out", out] if argv[0] == "train" else ["--quiet"])
        start = time.perf_counter()
        summary = minilm_json([*argv, *extra], who="record_results", label=command)
        seconds = time.perf_counter() - start
    for key in ("checkpoint", "plot", "history"):
        summary.pop(key, None)                       # paths in a temporary folder, and the loss curve
    return {"summary": summary, "seconds": round(seconds, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="COMMAND", help="re-run these commands only (quoted)")
    args = ap.parse_args(argv)
    unknown = set(args.only or []) - set(COMMANDS)
    if unknown:
        raise SystemExit(f"record_results: not a README command: {sorted(unknown)}; known: {COMMANDS}")
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {"commands": {}}
    for command in args.only or COMMANDS:
        print(f"running {command} ...", file=sys.stderr, flush=True)
        record["commands"][command] = run(command)
        print(f"  {record['commands'][command]['seconds']:.0f} s", file=sys.stderr, flush=True)
    record["machine"] = f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}"
    record["commands"] = {c: record["commands"][c] for c in COMMANDS if c in record["commands"]}
    RECORD.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {RECORD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
