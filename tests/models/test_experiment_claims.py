"""The "Agrees with the paper?" line: claims are orderings of the table, checked on the means over
seeds, and every experiment's claims read rows and metrics its plan has."""
import importlib.util
import json
from pathlib import Path

import pytest

from minilm.experiments import available, claims
from minilm.experiments.claims import Beats, BestOf

ROOT = Path(__file__).resolve().parents[2]

VALUES = {"A": {"acc": [0.80, 0.82, 0.78], "ppl": [3.0, 3.2, 3.1]},
          "B": {"acc": [0.60, 0.62, 0.58], "ppl": [4.0, 4.1, 3.9]},
          "C": {"acc": [0.79, 0.70, 0.91], "ppl": [5.0, 5.0, 5.0]}}


def test_beats_holds_when_every_row_above_beats_every_row_below():
    holds, measured = Beats("A beats B.", "acc", above=("A",), below=("B",)).check(VALUES)
    assert holds
    assert "A 80.0 > B 60.0" in measured and "by 20.0 points, more than the seeds' spread (2.0)" in measured


def test_beats_fails_when_one_row_above_is_not_better_and_names_it():
    holds, measured = Beats("A and B beat C.", "acc", above=("A", "B"), below=("C",)).check(VALUES)
    assert not holds
    assert "B 60.0 is not better than C 80.0" in measured


def test_a_margin_inside_the_seeds_spread_holds_in_direction_only():
    holds, measured = Beats("A beats C.", "acc", above=("A",), below=("C",)).check(VALUES)
    assert holds and "in direction only" in measured


def test_lower_is_better_turns_the_order_around():
    claim = Beats("A has the lower perplexity.", "ppl", higher_is_better=False, percent=False,
                  above=("A",), below=("B", "C"))
    holds, measured = claim.check(VALUES)
    assert holds and "3.100" in measured
    assert not Beats("B lower.", "ppl", higher_is_better=False, percent=False, above=("B",),
                     below=("A",)).check(VALUES)[0]


def test_best_of_names_the_best_row():
    assert BestOf("A or C is best.", "acc", winners=("A", "C"), among=("A", "B", "C")).check(VALUES)[0]
    holds, measured = BestOf("B is best.", "acc", winners=("B",), among=("A", "B", "C")).check(VALUES)
    assert not holds and measured.startswith("the best is A")


def test_verdict_is_yes_in_part_or_no_by_the_main_claim():
    main_holds = Beats("A beats B.", "acc", above=("A",), below=("B",))
    main_fails = Beats("B beats A.", "acc", above=("B",), below=("A",), why_not="measured: B needs more steps")
    assert claims.verdict([main_holds], VALUES)["verdict"] == "yes"
    assert claims.verdict([main_holds, main_fails], VALUES)["verdict"] == "in part"
    result = claims.verdict([main_fails, main_holds], VALUES)
    assert result["verdict"] == "no"
    page = "\n".join(claims.markdown(result))
    assert page.startswith("**Agrees with the paper?** no (1 of 2")
    assert "Why: measured: B needs more steps" in page


def test_a_reason_measured_on_the_synthetic_corpus_is_not_shown_for_another_text():
    main_fails = Beats("B beats A.", "acc", above=("B",), below=("A",), why_not="measured: B needs more steps")
    real = claims.verdict([main_fails], VALUES, corpus="real")["claims"][0]
    assert real["why_not"] == claims.OTHER_TEXT
    assert "B needs more steps" not in "\n".join(claims.markdown(claims.verdict([main_fails], VALUES, "real")))
    assert claims.verdict([main_fails], VALUES, corpus=None)["claims"][0]["why_not"] == "measured: B needs more steps"


def test_a_reason_measured_on_the_shipped_text_is_shown_on_its_page_only():
    both = Beats("B beats A.", "acc", above=("B",), below=("A",), why_not="measured: B needs more steps",
                 why_not_real="measured on the Jargon File: B needs more text")
    assert claims.verdict([both], VALUES, corpus="real")["claims"][0]["why_not"] == both.why_not_real
    assert claims.verdict([both], VALUES, corpus=None)["claims"][0]["why_not"] == both.why_not
    assert claims.verdict([both], VALUES, corpus="my_notes.txt")["claims"][0]["why_not"] == claims.OTHER_TEXT


def test_a_run_without_a_row_is_not_measured_rather_than_an_error():
    result = claims.verdict([Beats("A beats D.", "acc", above=("A",), below=("D",))], VALUES)
    assert result["verdict"] == "no" and "not measured in this run" in result["claims"][0]["measured"]


@pytest.mark.parametrize("name", list(available()))
def test_every_experiment_states_its_papers_findings_on_its_own_rows(name):
    """Each plan, at the default and the --quick sizes, has claims, and each reads a metric and rows
    the plan reports: a typo would otherwise show up as 'not measured' on a page."""
    module = available()[name]
    for cfg in (module.CONFIG(), module.CONFIG.quick()):
        plan = module.plan(cfg)
        assert plan.claims, f"{name}: the plan states none of the paper's findings"
        metrics = {m.key for m in plan.metrics}
        for claim in plan.claims:
            assert claim.metric in metrics, f"{name}: claim {claim.paper!r} reads {claim.metric!r}"
            assert claim.conditions() <= set(plan.conditions), (
                f"{name}: claim {claim.paper!r} reads rows {sorted(claim.conditions() - set(plan.conditions))}")
            assert "(" in claim.paper or claim is not plan.claims[0], f"{name}: the main finding cites no source"


def test_the_pages_verdicts_are_computed_from_their_runs():
    """docs/experiments/NAME.md and the record's verdict are what tools/render_experiment_pages.py makes
    of the recorded runs, so no page's "Agrees with the paper?" is written by hand."""
    if not (ROOT / "docs" / "experiments" / "bakeoff.json").exists():
        pytest.skip("no recorded experiment runs here (a student release)")
    spec = importlib.util.spec_from_file_location("render_pages", ROOT / "tools" / "render_experiment_pages.py")
    render_pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render_pages)
    assert render_pages.main(["--check"]) == 0


def test_plots_are_redrawn_from_the_recorded_runs_only_when_asked(tmp_path):
    """``--plots`` draws NAME.png beside the record from its runs; without it the PNG is not touched."""
    import shutil
    record = ROOT / "docs" / "experiments" / "masking.json"
    if not record.exists():
        pytest.skip("no recorded experiment runs here (a student release)")
    spec = importlib.util.spec_from_file_location("render_pages", ROOT / "tools" / "render_experiment_pages.py")
    render_pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render_pages)
    shutil.copy(record, tmp_path / "masking.json")
    md, _ = render_pages.render("masking", tmp_path)
    assert md.startswith("### masking:") and not (tmp_path / "masking.png").exists()
    assert render_pages.render("masking", tmp_path, plot=True)[0] == md
    assert (tmp_path / "masking.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_record_names_the_page_beside_it():
    """A record's ``markdown`` and ``png`` are the files next to it, as the runner writes them when
    run with ``--out`` that folder (a run made elsewhere and copied in would name a temporary folder)."""
    folder = ROOT / "docs" / "experiments"
    records = sorted(folder.glob("*.json")) + sorted((folder / "real").glob("*.json"))
    if not records:
        pytest.skip("no recorded experiment runs here (a student release)")
    for path in records:
        record = json.loads(path.read_text(encoding="utf-8"))
        if "markdown" not in record:   # gpt-vs-bert-steps.json, results-in-miniature.json: not runner records
            continue
        stem = path.relative_to(ROOT).with_suffix("").as_posix()
        assert (record["markdown"], record["png"]) == (f"{stem}.md", f"{stem}.png"), path.name
