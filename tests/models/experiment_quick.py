"""``minilm experiment NAME --quick`` end to end, for the slow test of each experiment: run as a user
runs it (a child process, 2 workers of one thread), and seed 0's numbers checked against the record
of tools/make_experiment_fingerprints.py (tests/data/experiments_quick.json) to the last digit — a
run is a pure function of its condition, seed and settings, so unchanged quick numbers mean the code
behind the README's tables is unchanged. The same run checks that every task slot it calls is on the
experiment's list in minilm/recipes/slot_paths.json (so ``--impl exercises`` names each unfinished
task before the run). One run serves all the checks."""
import json
import os
from pathlib import Path

from minilm.experiments.runner import TRACE_ENV
from minilm.recipes import slots

from tests.models.hf_fixture_tool import import_tool

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "data" / "experiments_quick.json").read_text())


def fingerprints():
    """tools/make_experiment_fingerprints.py (the calling test is skipped in a student release, which
    leaves tools/make_* out)."""
    return import_tool("make_experiment_fingerprints")


def quick_run(name: str, out) -> dict:
    """The ``--json`` result of the quick run (its plot and table written to ``out``), after checking
    that seed 0 computed what was recorded."""
    tool = fingerprints()
    trace = Path(out) / "slots-called.txt"
    os.environ[TRACE_ENV] = str(trace)
    try:
        result = tool.quick_run(name, out)
    finally:
        del os.environ[TRACE_ENV]
    called = {tuple(line.split()) for line in trace.read_text(encoding="utf-8").splitlines()}
    unlisted = sorted(called - slots.recorded()[1][name])
    assert not unlisted, (f"minilm experiment {name} calls task slots its list in minilm/recipes/slot_paths.json "
                          f"lacks: {unlisted}; run python tools/make_slot_paths.py --experiments")
    problems = tool.differences(name, RECORDED[name], tool.fingerprint_of(result))
    assert not problems, ("the experiment's --quick numbers for seed 0 moved, so its README table would too:\n  "
                          + "\n  ".join(problems) + "\nif that is intended, re-record with python "
                          f"tools/make_experiment_fingerprints.py --only {name}, re-run the full experiment "
                          "and python tools/sync_experiment_tables.py. If no code changed, the machine did: BLAS "
                          "kernels and numpy's SIMD loops round differently on another CPU or package version "
                          "(git stash, then python tools/make_experiment_fingerprints.py --check: the same "
                          "differences); then re-record every experiment on the machine CI runs on")
    return result
