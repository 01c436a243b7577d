"""Copy each experiment's table from docs/experiments/NAME.md into README.md and README.zh-TW.md.

``minilm experiment NAME --out docs/experiments`` writes NAME.md (the table with its caption) and
NAME.png. The READMEs show them between the markers

    <!-- experiment:NAME -->
    ...generated: the command line with seeds and time, the table, the plot...
    <!-- /experiment:NAME -->

and this tool rewrites what is between the markers, so the READMEs always show the numbers the
last run wrote (the prose around them is hand-written). ``--check`` changes nothing and fails if a
README is out of date (tests/models/test_docs.py runs it).

The "Results in miniature" block between ``<!-- results:miniature -->`` and its end marker is written
the same way from docs/experiments/results-in-miniature.json, which tools/record_results.py records
by running each command with --json: one line per command, its numbers rendered by LINES below.

The "Agrees with the paper?" block between ``<!-- results:agreement -->`` and its end marker is one
row per experiment, from the verdict each record holds (minilm/experiments/claims.py computes it
from the runs; tools/render_experiment_pages.py re-computes it without running anything).

    python tools/sync_experiment_tables.py          # after re-running an experiment
    python tools/sync_experiment_tables.py --check
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
READMES = [ROOT / "README.md", ROOT / "README.zh-TW.md"]
EXPERIMENTS = ROOT / "docs" / "experiments"
REAL = EXPERIMENTS / "real"   # the same experiments run on --corpus real
BLOCK = re.compile(r"(<!-- experiment:([a-z0-9-]+) -->\n)(.*?)(<!-- /experiment:\2 -->)", re.S)


def _page(md: Path) -> tuple[str, list[str], list[str]]:
    """(the command line, the table's lines, the verdict with its bullets) of an experiment page."""
    lines = md.read_text(encoding="utf-8").splitlines()
    command = next((ln for ln in lines if ln.startswith("`minilm experiment")), None)
    table = [ln for ln in lines if ln.startswith("|")]
    if command is None or len(table) < 3:
        raise SystemExit(f"sync_experiment_tables: {md} has no command line or no table")
    start = next((i for i, ln in enumerate(lines) if ln.startswith("**Agrees with the paper?**")), None)
    agreement = []
    if start is not None:  # the verdict and its bullets, as claims.markdown wrote them
        bullets = []
        for ln in lines[start + 2:]:
            if not ln.startswith("- "):
                break
            bullets.append(ln)
        agreement = [lines[start], ""] + bullets + [""]
    return command, table, agreement


def block_for(name: str) -> str:
    """The README block of experiment ``name``: its command line, its table, its plot; then, if the
    experiment was also run on the English text minilm ships (docs/experiments/real/NAME.md), that
    run's command, table and verdict line, beside the synthetic corpus's."""
    md = EXPERIMENTS / f"{name}.md"
    if not md.exists():
        raise SystemExit(f"sync_experiment_tables: {md} does not exist; run "
                         f"'minilm experiment {name} --out docs/experiments' first")
    command, table, agreement = _page(md)
    block = [command, ""] + table + [""] + agreement + [f"![{name}](docs/experiments/{name}.png)", ""]
    real = REAL / f"{name}.md"
    if real.exists():
        command, table, agreement = _page(real)
        verdict = agreement[0].split(" (")[0] if agreement else ""
        block += ["On real English text (`--corpus real`: the Jargon File 4.4.7, "
                  "[minilm/data/real/](minilm/data/real/README.md)), the same experiment:", "",
                  command, ""] + table + [""]
        if verdict:
            block += [f"{verdict} (each finding, and the plot: [docs/experiments/real/{name}.md]"
                      f"(docs/experiments/real/{name}.md))", ""]
    return "\n".join(block)


RESULTS = EXPERIMENTS / "results-in-miniature.json"
RESULTS_BLOCK = re.compile(r"(<!-- results:miniature -->\n)(.*?)(<!-- /results:miniature -->)", re.S)


def _by_lambda(s, lam):
    return s["metrics_by_lambda"][lam]["accuracy"]


LINES = {  # README command -> what its --json summary s says, in one comment
    "minilm train gpt": lambda s, t: (f"held-out {s['initial_loss']:.2f} -> {s['final_loss']:.2f} nats/token; "
                                      f"bigram model {s['baselines']['bigram_loss']:.2f} ({s['steps']:,} steps)"),
    "minilm train bert": lambda s, t: (f"MLM accuracy {s['metrics']['mlm_accuracy']:.1%} vs most-frequent token "
                                       f"{s['baselines']['most_frequent_token_accuracy']:.1%}; NSP "
                                       f"{s['metrics']['nsp_accuracy']:.1%} vs majority "
                                       f"{s['baselines']['nsp_majority_accuracy']:.0%} ({s['steps']:,} steps)"),
    "minilm train xlnet": lambda s, t: (f"target accuracy {s['metrics']['target_accuracy']:.1%} vs most-frequent "
                                        f"token {s['baselines']['most_frequent_token_accuracy']:.1%}"),
    "minilm train transformer-xl": lambda s, t: (
        f"recall across segments: {s['metrics']['accuracy']:.0%} with memory, "
        f"{s['metrics']['accuracy_without_memory']:.1%} without, chance {s['baselines']['chance_accuracy']:.1%}"),
    "minilm train t5 --task reverse": lambda s, t: (f"exact match {s['metrics']['exact_match']:.1%}; copying the "
                                                    f"input {s['baselines']['copy_exact_match']:.1%}"),
    "minilm train bart": lambda s, t: (f"held-out loss {s['final_loss']:.2f} vs bigram model "
                                       f"{s['baselines']['bigram_loss']:.2f}; token accuracy "
                                       f"{s['metrics']['token_accuracy']:.0%}"),
    "minilm finetune": lambda s, t: (f"negated sentiment on h[CLS] {s['negation_accuracy']:.0%}; bag of words "
                                     f"{s['bow_negation_accuracy']:.1%}"),
    "minilm finetune --family gpt": lambda s, t: (
        f"GPT-1 + aux LM (λ={s['aux_lm']}) {_by_lambda(s, str(s['aux_lm'])):.1%} vs λ=0 {_by_lambda(s, '0.0'):.1%}; "
        f"bag of words {s['baselines']['bow_accuracy']:.1%} ({len(s['seeds'])} seeds)"),
}


def results_block() -> str:
    """The README's "Results in miniature" commands, each with what its recorded run printed."""
    if not RESULTS.exists():
        raise SystemExit(f"sync_experiment_tables: {RESULTS} does not exist; run python tools/record_results.py")
    runs = json.loads(RESULTS.read_text(encoding="utf-8"))["commands"]
    missing = [c for c in LINES if c not in runs]
    if missing:
        raise SystemExit(f"sync_experiment_tables: {RESULTS.name} has no run of {missing}; run python "
                         "tools/record_results.py --only " + " ".join(f"'{c}'" for c in missing))
    width = max(len(c) for c in LINES) + 1
    lines = [f"{c:<{width}}# {render(runs[c]['summary'], runs[c]['seconds'])}" for c, render in LINES.items()]
    return "```bash\n" + "\n".join(lines) + "\n```\n"


AGREEMENT_BLOCK = re.compile(r"(<!-- results:agreement -->\n)(.*?)(<!-- /results:agreement -->)", re.S)


def agreement_block() -> str:
    """One row per experiment: does the miniature agree with the paper, and on which of its findings.
    From the records' verdicts (``agreement``, computed from the runs by minilm/experiments/claims.py)."""
    from minilm.experiments import EXPERIMENTS as REGISTRY
    rows = ["| experiment | agrees with the paper? | findings that hold here | the main finding, as measured |",
            "|---|---|---|---|"]
    count = {"yes": 0, "in part": 0, "no": 0}
    for name in REGISTRY:
        record = json.loads((EXPERIMENTS / f"{name}.json").read_text(encoding="utf-8"))
        agreement = record.get("agreement") or {"verdict": "", "claims": []}
        if not agreement["claims"]:
            raise SystemExit(f"sync_experiment_tables: {name}.json has no verdict; run "
                             "python tools/render_experiment_pages.py " + name)
        claims = agreement["claims"]
        count[agreement["verdict"]] += 1
        main = claims[0]["measured"].replace("|", "/")
        verdict = f"**{agreement['verdict']}**"
        if (REAL / f"{name}.json").exists():   # the same run on real English text: its verdict beside
            real = json.loads((REAL / f"{name}.json").read_text(encoding="utf-8")).get("agreement") or {}
            verdict += f" (on real text: [{real.get('verdict') or '?'}](docs/experiments/real/{name}.md))"
        rows.append(f"| [{name}](docs/experiments/{name}.md) | {verdict} | "
                    f"{sum(c['holds'] for c in claims)} of {len(claims)} | {main} |")
    head = (f"{count['yes']} agree, {count['in part']} agree in their main finding but not in every one, "
            f"{count['no']} disagree in their main finding.")
    return head + "\n\n" + "\n".join(rows) + "\n"


def sync(text: str) -> str:
    text = BLOCK.sub(lambda m: m.group(1) + block_for(m.group(2)) + m.group(4), text)
    if AGREEMENT_BLOCK.search(text):
        text = AGREEMENT_BLOCK.sub(lambda m: m.group(1) + agreement_block() + m.group(3), text)
    if RESULTS_BLOCK.search(text):
        text = RESULTS_BLOCK.sub(lambda m: m.group(1) + results_block() + m.group(3), text)
    return text


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
