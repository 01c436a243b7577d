"""The experiments still compute what they computed when their numbers were recorded.

Every experiment's --quick runs for seed 0 (tools/make_experiment_fingerprints.py) are compared to
tests/data/experiments_quick.json to the last digit by the experiment's own slow end-to-end test
(tests/models/experiment_quick.py): a run is a pure function of its condition, seed and settings,
so unchanged quick numbers mean the code behind the README's tables is unchanged.
"""
import re

from tests.models.experiment_quick import RECORDED, ROOT, fingerprints


def test_every_experiment_is_recorded():
    from minilm.experiments import EXPERIMENTS
    assert sorted(RECORDED) == sorted(EXPERIMENTS), (
        "tests/data/experiments_quick.json must hold every experiment of minilm.experiments.EXPERIMENTS: "
        "run python tools/make_experiment_fingerprints.py --only NAME for a new one")


def test_differences_name_what_moved():
    want = {"settings": {"steps": 60}, "runs": {"BERT": {"probe": 0.5}}}
    got = {"settings": {"steps": 61}, "runs": {"BERT": {"probe": 0.25}, "GPT": {"probe": 0.1}}}
    assert fingerprints().differences("x", want, got) == [
        "x: setting steps was 60, is now 61", "x / BERT / probe: was 0.5, is now 0.25", "x: condition 'GPT' is new"]
    assert fingerprints().differences("x", want, want) == []


def test_every_experiment_has_a_slow_quick_run_that_checks_its_numbers():
    """The check itself runs in each experiment's slow end-to-end test (tests/models/experiment_quick.py:
    one --quick run serves both): every experiment must have one."""
    from minilm.experiments import EXPERIMENTS
    sources = [p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "models").glob("test_experiments_*.py")]
    sources = [s for s in sources if "quick_run(" in s]
    missing = [name for name, module in EXPERIMENTS.items()       # named, or its module imported
               if not any(f'"{name}"' in s or re.search(rf"\bimport .*\b{module.rsplit('.', 1)[-1]}\b", s)
                          for s in sources)]
    assert not missing, f"experiments without a quick_run test: {missing}"
