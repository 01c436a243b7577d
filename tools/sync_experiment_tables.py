"""Copy each experiment's table from docs/experiments/NAME.md into README.md and README.zh-TW.md.

``minilm experiment NAME --out docs/experiments`` writes NAME.md (the table with its caption) and
NAME.png. The READMEs show them between the markers

    <!-- experiment:NAME -->
    ...generated: the command line with seeds and time, the table, the plot...
    <!-- /experiment:NAME -->

and this tool rewrites what is between the markers, so the READMEs always show the numbers the
last run wrote (the prose around them is hand-written). ``--check`` changes nothing and fails if a
README is out of date (tests/models/test_docs.py runs it).

    python tools/sync_experiment_tables.py          # after re-running an experiment
    python tools/sync_experiment_tables.py --check
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", ROOT / "README.zh-TW.md"]
EXPERIMENTS = ROOT / "docs" / "experiments"
BLOCK = re.compile(r"(<!-- experiment:([a-z0-9-]+) -->\n)(.*?)(<!-- /experiment:\2 -->)", re.S)


def block_for(name: str) -> str:
    """The README block of experiment ``name``: its command line, its table, its plot."""
    md = EXPERIMENTS / f"{name}.md"
    if not md.exists():
        raise SystemExit(f"sync_experiment_tables: {md} does not exist; run "
                         f"'minilm experiment {name} --out docs/experiments' first")
    lines = md.read_text(encoding="utf-8").splitlines()
    command = next((ln for ln in lines if ln.startswith("`minilm experiment")), None)
    table = [ln for ln in lines if ln.startswith("|")]
    if command is None or len(table) < 3:
        raise SystemExit(f"sync_experiment_tables: {md} has no command line or no table")
    return "\n".join([command, ""] + table + ["", f"![{name}](docs/experiments/{name}.png)", ""])


def sync(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + block_for(m.group(2)) + m.group(4), text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a README is out of date")
    args = p.parse_args(argv)
    stale = []
    for readme in READMES:
        old = readme.read_text(encoding="utf-8")
        new = sync(old)
        if new != old:
            stale.append(readme.name)
            if not args.check:
                readme.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}; run python tools/sync_experiment_tables.py", file=sys.stderr)
        return 1
    print(("updated: " + ", ".join(stale)) if stale and not args.check else "experiment tables in sync")
    return 0


if __name__ == "__main__":
    sys.exit(main())
