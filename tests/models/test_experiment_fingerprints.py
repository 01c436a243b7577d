"""The experiments still compute what they computed when their numbers were recorded.

Every experiment's --quick runs for seed 0 (tools/make_experiment_fingerprints.py) are compared to
tests/data/experiments_quick.json to the last digit: a run is a pure function of its condition,
seed and settings, so unchanged quick numbers mean the code behind the README's tables is unchanged.
"""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("fingerprints", ROOT / "tools" / "make_experiment_fingerprints.py")
fingerprints = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fingerprints)
RECORDED = json.loads(fingerprints.GOLDEN.read_text())


def test_every_experiment_is_recorded():
    assert sorted(RECORDED) == sorted(fingerprints.experiment_names()), (
        "tests/data/experiments_quick.json must hold every experiment of minilm.experiments.EXPERIMENTS: "
        "run python tools/make_experiment_fingerprints.py --only NAME for a new one")


def test_differences_name_what_moved():
    want = {"settings": {"steps": 60}, "runs": {"BERT": {"probe": 0.5}}}
    got = {"settings": {"steps": 61}, "runs": {"BERT": {"probe": 0.25}, "GPT": {"probe": 0.1}}}
    assert fingerprints.differences("x", want, got) == [
        "x: setting steps was 60, is now 61", "x / BERT / probe: was 0.5, is now 0.25", "x: condition 'GPT' is new"]
    assert fingerprints.differences("x", want, want) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECORDED))
def test_quick_numbers_are_unchanged(name):
    problems = fingerprints.differences(name, RECORDED[name], fingerprints.fingerprint(name))
    assert not problems, ("the experiment's --quick numbers for seed 0 moved, so its README table would too:\n  "
                          + "\n  ".join(problems) + "\nif that is intended, re-record with python "
                          f"tools/make_experiment_fingerprints.py --only {name}, re-run the full experiment "
                          "and python tools/sync_experiment_tables.py")
