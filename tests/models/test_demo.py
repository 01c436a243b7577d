"""minilm demo: the seed experiment (GPT + BERT objectives on six sentences)."""
import json
import re

import pytest

from minilm.cli import main
from minilm.experiments.demo import Demo, DemoConfig, summarize


def test_demo_learns_both_objectives_quickly():
    demo = Demo(seed=0, cfg=DemoConfig(steps=80))
    before = demo.results()
    demo.train()
    after = demo.results()
    assert after["gpt_loss"] < 0.5 * before["gpt_loss"]
    assert after["mlm_loss"] < before["mlm_loss"]
    assert len(after["continuation"]) == 3
    probs = [p for _, p in after["continuation"]]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
    assert len(after["cloze"]) == 1
    assert len(after["cloze_top"]) == 3 and after["cloze_top"][0][0] == after["cloze"]
    probs = [p for _, p in after["cloze_top"]]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
    assert after["cls_dist_birds_others"] > 0 and after["cls_dist_cats_dogs"] > 0


def test_eval_mask_set_is_fixed():
    demo = Demo(seed=1, cfg=DemoConfig(steps=5))
    demo.train()
    assert demo.eval_mlm_loss() == demo.eval_mlm_loss()


def test_cli_json_has_the_pinned_keys(capsys, tmp_path):
    assert main(["demo", "--json", "--steps", "20", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("gpt_loss", "mlm_loss", "continuation", "cloze", "cloze_top", "cls_dist_birds_others",
                "cls_dist_cats_dogs"):
        assert key in out
    assert (tmp_path / "demo.png").stat().st_size > 10_000


def test_cli_prints_the_top_three_of_both_views(capsys):
    """Like the continuation, the cloze shows its top three characters with their probabilities."""
    assert main(["demo", "--steps", "10", "--seeds", "2", "--no-plot"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip().startswith(("after 'cats '", "cloze 'cats eat _'"))]
    assert len(lines) == 4
    for line in lines:
        shown = line.split(":", 1)[1].split(",")
        assert len(shown) == 3 and all(re.fullmatch(r" *'[^']*' [01]\.\d\d", p) for p in shown), line
    assert "among its top three in" in out


def test_cli_seeds_gives_a_list(capsys):
    assert main(["demo", "--json", "--steps", "10", "--seeds", "2", "--no-plot"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out, list) and [r["seed"] for r in out] == [0, 1]
    s = summarize(out)
    assert s["seeds"] == 2


@pytest.mark.slow
def test_demo_headline_results_hold_over_seeds():
    """The full 300-step demo over 8 seeds: GPT's top two after 'cats ' are e and d, BERT's cloze fills
    'f' in most seeds and has it among its top three in nearly all (measured on a 2-core machine: 8/8,
    5/8 and 8/8; 6/8 for the cloze on another: the training is chaotic across CPUs, so we assert a
    margin below that)."""
    runs = []
    for seed in range(8):
        d = Demo(seed)
        d.train()
        runs.append(d.results())
    s = summarize(runs)
    assert s["top2_is_e_and_d"] >= 6
    assert s["cloze_is_f"] >= 4
    assert s["cloze_f_in_top3"] >= 7
