"""The experiment runner (minilm/experiments/runner.py) on a fake experiment: seeds loop, mean ± sd,
Markdown table, PNG, JSON, --resume, --jobs, and the command line."""
import json
import math
from dataclasses import dataclass, replace

import numpy as np
import pytest

from minilm.experiments import Metric, Plan, report
from minilm.experiments.runner import run_experiment

NAME = "fake"
HELP = "a fake experiment for the runner's tests"
CALLS = []


@dataclass(frozen=True)
class FakeConfig:
    steps: int = 2      # steps of a run

    @classmethod
    def quick(cls):
        return replace(cls(), steps=1)


CONFIG = FakeConfig
OPTIONS = ("steps",)


def plan(cfg):
    return Plan(title="does b beat a?", conditions=["a", "b"],
                metrics=[Metric("acc", "accuracy"), Metric("loss", "loss", percent=False, higher_is_better=False)],
                settings={"steps": cfg.steps}, notes=["a note"])


def run_one(condition, seed, settings):
    CALLS.append((condition, seed))
    rng = np.random.default_rng([seed, settings["steps"]])
    base = 0.5 if condition == "a" else 0.8
    return {"acc": base + 0.01 * rng.standard_normal(), "loss": 1.0 - base}


def _module():
    import sys
    return sys.modules[__name__]


def test_mean_sd_and_cell():
    m, s = report.mean_sd([1.0, 2.0, 3.0])
    assert (m, s) == (2.0, 1.0)  # sample sd (ddof = 1)
    assert report.mean_sd([float("nan")])[0] != report.mean_sd([float("nan")])[0]  # NaN when nothing finite
    assert report.cell([0.5, 0.7], percent=True) == "60.0 ± 14.1"
    assert report.cell([], percent=False) == "–"
    assert report.cell([234112.0, 234112.0], percent=False) == "234,112"  # counts: no decimals
    assert report.cell([1.0, 2.0], percent=False) == "1.500 ± 0.707"


def test_run_writes_table_plot_json_and_resumes(tmp_path):
    CALLS.clear()
    r = run_experiment(NAME, _module(), None, quick=True, seeds=[0, 1, 2], out_dir=tmp_path, progress=False)
    assert len(CALLS) == 6 and r["seeds"] == [0, 1, 2]
    assert r["summary"]["acc"]["b"]["mean"] > r["summary"]["acc"]["a"]["mean"]
    assert len(r["summary"]["acc"]["a"]["values"]) == 3 and r["summary"]["loss"]["a"]["sd"] == 0.0
    md = (tmp_path / "fake.md").read_text()
    assert "| condition" in md and "± " in md and "3 seeds" in md and "a note" in md and "steps=1" in md
    assert md.count("\n| ") == 3  # header + two rows
    assert (tmp_path / "fake.png").read_bytes()[:4] == b"\x89PNG"
    saved = json.loads((tmp_path / "fake.json").read_text())
    assert len(saved["runs"]) == 6
    CALLS.clear()
    again = run_experiment(NAME, _module(), None, quick=True, seeds=[0, 1, 2, 3], out_dir=tmp_path,
                           progress=False, resume=True)
    assert CALLS == [("a", 3), ("b", 3)]  # only the new seed ran
    assert math.isclose(again["summary"]["acc"]["a"]["values"][0], r["summary"]["acc"]["a"]["values"][0])
    CALLS.clear()
    run_experiment(NAME, _module(), None, quick=False, seeds=[0], out_dir=tmp_path, progress=False, resume=True)
    assert len(CALLS) == 2  # other settings: nothing reused


def test_undefined_values_become_null_and_a_dash(tmp_path, monkeypatch):
    monkeypatch.setattr(_module(), "run_one", lambda condition, seed, settings: {"acc": float("nan"), "loss": 1.0})
    r = run_experiment(NAME, _module(), None, quick=True, seeds=[0, 1], out_dir=tmp_path, progress=False)
    assert r["runs"][0]["metrics"]["acc"] is None            # NaN is not JSON
    json.loads((tmp_path / "fake.json").read_text(),          # strict JSON: no NaN token
               parse_constant=lambda c: pytest.fail(f"{c} in fake.json"))
    assert "| a " in r["table"] and "–" in r["table"]


def test_resume_refuses_a_foreign_file(tmp_path):
    from autograd.errors import ConfigError
    (tmp_path / "fake.json").write_text("{not json")
    with pytest.raises(ConfigError, match="fake.json"):
        run_experiment(NAME, _module(), None, quick=True, seeds=[0], out_dir=tmp_path, progress=False, resume=True)


def test_line_plot_over_x(tmp_path):
    p = plan(FakeConfig.quick())
    p.x, p.xlabel = {"a": 0.25, "b": 0.5}, "size"
    values = {"a": {"acc": [0.5, 0.6], "loss": [0.1, 0.2]}, "b": {"acc": [0.7, 0.8], "loss": [0.3, 0.2]}}
    path = report.figure(NAME, p, values, tmp_path / "x.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_a_row_without_x_is_drawn_as_a_reference_level(tmp_path, monkeypatch):
    """generator-size's untrained discriminator has no generator width: a dashed level at its mean,
    not a point on the line."""
    from matplotlib.axes import Axes
    levels, lines = [], []
    real_axhline, real_errorbar = Axes.axhline, Axes.errorbar
    monkeypatch.setattr(Axes, "axhline", lambda ax, y, **kw: levels.append((y, kw["label"])) or real_axhline(ax, y, **kw))
    monkeypatch.setattr(Axes, "errorbar", lambda ax, x, y, **kw: lines.append(list(x)) or real_errorbar(ax, x, y, **kw))
    p = plan(FakeConfig.quick())
    p.conditions, p.x, p.xlabel = ["a", "b", "untrained"], {"a": 0.25, "b": 0.5}, "size"
    values = {"a": {"acc": [0.5, 0.6], "loss": [0.1, 0.2]}, "b": {"acc": [0.7, 0.8], "loss": [0.3, 0.2]},
              "untrained": {"acc": [0.3, 0.4], "loss": [0.9, 0.9]}}
    assert report.figure(NAME, p, values, tmp_path / "x.png").read_bytes()[:4] == b"\x89PNG"
    assert lines and all(x == [0.25, 0.5] for x in lines)            # the line has the two widths only
    assert levels[0][0] == pytest.approx(35.0) and levels[0][1].startswith("untrained: 35")   # acc, in %


def test_jobs_run_in_other_processes(tmp_path):
    CALLS.clear()
    r = run_experiment(NAME, _module(), None, quick=True, seeds=[0, 1], out_dir=tmp_path, progress=False, jobs=2)
    assert CALLS == []  # the runs happened in the worker processes
    one = run_experiment(NAME, _module(), None, quick=True, seeds=[0, 1], out_dir=tmp_path / "one", progress=False)
    assert r["summary"]["acc"] == one["summary"]["acc"]  # same numbers as in this process


def test_command_refuses_zero_seeds_and_jobs():
    import argparse
    from autograd.errors import ConfigError
    from minilm.commands.experiment import run
    base = dict(experiment=NAME, experiment_module=_module(), seed=0, quick=True, out=None, resume=False,
                no_progress=True, json=False)
    with pytest.raises(ConfigError, match="--seeds must be at least 1"):
        run(argparse.Namespace(**base, seeds=0, jobs=1))
    with pytest.raises(ConfigError, match="--jobs must be at least 1"):
        run(argparse.Namespace(**base, seeds=3, jobs=0))


def test_command_prints_the_table(tmp_path, capsys):
    import argparse
    from minilm.commands.experiment import run
    args = argparse.Namespace(experiment=NAME, experiment_module=_module(), seed=5, quick=True, out=tmp_path,
                              resume=False, no_progress=True, json=True, seeds=3, jobs=1)
    assert run(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seeds"] == [5, 6, 7] and out["conditions"] == ["a", "b"] and "| a" in out["table"]


def test_every_experiment_has_one_config_and_its_options_come_from_it():
    import argparse
    from dataclasses import fields
    from minilm.experiments import available
    from minilm.recipes.config import add_options, field_comments, from_args, override
    for name, module in available().items():
        full, quick = module.CONFIG(), module.CONFIG.quick()
        assert type(quick) is module.CONFIG and quick != full, name
        comments = field_comments(module.CONFIG)
        assert [f.name for f in fields(module.CONFIG) if not comments.get(f.name)] == [], name
        p = argparse.ArgumentParser()
        add_options(p, module.CONFIG, only=module.OPTIONS, quick=quick)
        assert from_args(module.CONFIG, p.parse_args([]), base=quick) == quick      # nothing given: the base
        assert from_args(module.CONFIG, p.parse_args([]), base=full) == full
        if "steps" in module.OPTIONS:
            assert from_args(module.CONFIG, p.parse_args(["--steps", "7"]), base=quick) == override(quick, steps=7)
        json.dumps(module.plan(quick).settings)


def test_the_command_line_reaches_the_config():
    from minilm.cli import build_parser
    from minilm.experiments import masking
    from minilm.recipes.config import from_args, override
    args = build_parser().parse_args(["experiment", "masking", "--quick", "--steps", "7"])
    assert args.experiment_module is masking and not hasattr(args, "docs")    # not given: the base decides
    assert from_args(masking.CONFIG, args, base=masking.CONFIG.quick()) == override(masking.CONFIG.quick(), steps=7)
    args = build_parser().parse_args(["experiment", "masking", "--docs", "12"])
    assert from_args(masking.CONFIG, args, base=masking.CONFIG()) == override(masking.CONFIG(), docs=12)


def test_every_experiment_takes_corpus_or_says_why_it_reads_no_text():
    """``--corpus real`` is offered by every experiment; new-york, whose probes are the synthetic corpus's
    names, answers it with its reason, where argparse would say only "unrecognized arguments". Run as a
    user types it."""
    import subprocess
    import sys
    from minilm.experiments import available
    without = {name: module for name, module in available().items() if "corpus" not in module.OPTIONS}
    assert sorted(without) == ["new-york"]
    for name, module in without.items():
        assert len(module.NO_CORPUS) > 80, name
        run = subprocess.run([sys.executable, "-m", "minilm.cli", "experiment", name, "--quick", "--corpus", "real"],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode != 0 and "not taken by this experiment" in run.stderr, run.stderr[-1000:]
        assert module.NO_CORPUS[:60] in " ".join(run.stderr.split()), run.stderr[-1000:]
        assert "Traceback" not in run.stderr and "unrecognized" not in run.stderr
