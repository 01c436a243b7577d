"""``minilm experiment batch-size`` and ``data-and-steps`` (minilm/experiments/batch_size.py,
data_and_steps.py): their plans, the equal-compute checks, the held-out split of --corpus, and
(slow) both --quick runs end to end."""
import json
import math

import numpy as np
import pytest

from autograd.errors import ConfigError
from minilm.cli import build_parser
from minilm.experiments import EXPERIMENTS, settings_of
from minilm.experiments import batch_size as bs
from minilm.experiments import data_and_steps as ds
from minilm.experiments.roberta_common import eval_documents
from minilm.recipes.config import from_args, override
from tests.models.experiment_quick import quick_run


@pytest.mark.parametrize("exp", [bs, ds])
def test_registered_planned_and_quick_is_smaller(exp):
    assert EXPERIMENTS[exp.NAME] == exp.__name__
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert len(full.conditions) == len(quick.conditions) >= 3
    assert quick.settings["steps"] < full.settings["steps"] and quick.settings["n_embd"] <= full.settings["n_embd"]
    assert [m.key for m in full.metrics][:2] == ["heldout_ppl", "entailment_probe"]
    assert not full.metrics[0].higher_is_better
    assert "Held equal" in full.notes[0] and any("Liu et al. 2019" in n for n in full.notes)
    json.dumps(full.settings)
    args = build_parser().parse_args(["experiment", exp.NAME, "--steps", "8", "--corpus", "x.txt"])
    cfg = from_args(exp.CONFIG, args, base=exp.CONFIG())
    assert (cfg.recipe.train.steps, cfg.recipe.corpus) == (8, "x.txt")
    with pytest.raises(ValueError, match="unknown condition"):
        exp.run_one("batch 3", 0, full.settings)


def test_batch_rows_read_the_same_blocks_with_sqrt_scaled_lr():
    settings = settings_of(bs.CONFIG())
    rows = bs.schedules(settings)
    assert {B * s for B, s, _, _ in rows.values()} == {settings["steps"] * settings["ref_batch"]}
    for B, steps, lr, warmup in rows.values():
        assert math.isclose(lr, settings["lr"] * math.sqrt(B / settings["ref_batch"]))
        assert warmup == round(settings["warmup_share"] * steps)
    assert list(bs.plan(bs.CONFIG()).x.values()) == bs.batch_sizes(settings)
    with pytest.raises(ConfigError, match="not a whole number of batches of 7"):  # 300 × 32 blocks ÷ 7
        bs.schedules({**settings, "batch_sizes": "7,32"})
    with pytest.raises(ConfigError, match="expected integers"):
        bs.schedules({**settings, "batch_sizes": "8,big"})


def test_token_check_passes_within_tolerance_and_fails_outside():
    bs.check_tokens(6_350, 100, 63.0)                                # +0.8%
    with pytest.raises(ConfigError, match="not at equal compute"):
        bs.check_tokens(6_500, 100, 63.0)                            # +3.2%


@pytest.fixture(scope="module")
def tiny_recipe():
    from minilm.recipes import roberta
    return roberta.RobertaRecipe(bs.recipe_config(override(bs.CONFIG.quick(), docs=20), 0, batch_size=4))


def test_tokens_seen_counts_the_recipes_own_batches(tiny_recipe):
    r = tiny_recipe
    N, total = len(r.train_blocks), sum(len(b) for b in r.train_blocks)
    r.batch_size = N                                                 # one step = one epoch
    try:
        assert bs.tokens_seen(r, 2) == 2 * total
    finally:
        r.batch_size = 4
    assert bs.tokens_seen(r, 3) == sum(int(r.batch(np.random.default_rng([0, s]))["attention_mask"].sum())
                                       for s in range(3))


def test_data_grid_and_held_out_end_of_a_corpus(tmp_path):
    from minilm.data import write_corpus
    settings = settings_of(ds.CONFIG())
    rows = ds.grid(settings)
    S, small, large = settings["steps"], settings["small_docs"], settings["large_docs"]
    assert list(rows.values()) == [(small, S), (small, 2 * S), (large, S), (large, 2 * S), (large, 4 * S)]
    with pytest.raises(ConfigError, match="small < large"):
        ds.grid({**settings, "small_docs": large})
    docs = [[f"document {i} says hello ."] for i in range(12)]
    path = tmp_path / "c.txt"
    write_corpus(docs, path)
    held, pool = eval_documents({**settings, "corpus": str(path), "eval_docs": 3}, seed=0, experiment=ds.NAME)
    assert held == docs[-3:] and pool == docs[:-3]
    with pytest.raises(ConfigError, match="data-and-steps: .* fewer than the 4"):
        eval_documents({**settings, "corpus": str(path), "eval_docs": 10}, seed=0, experiment=ds.NAME)
    synthetic, none = eval_documents({**settings, "eval_docs": 5}, seed=1, experiment=ds.NAME)
    assert none is None and len(synthetic) == 5


@pytest.mark.slow
@pytest.mark.parametrize("exp", [bs, ds])
def test_quick_run_end_to_end(exp, tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    conditions = exp.plan(exp.CONFIG.quick()).conditions
    assert r["conditions"] == conditions and len(r["runs"]) == 3 * len(conditions)
    for key in ("heldout_ppl", "heldout_accuracy", "entailment_probe", "sentiment_probe", "tokens_seen"):
        for c in conditions:
            values = r["summary"][key][c]["values"]
            assert len(values) == 3 and all(math.isfinite(v) for v in values), (key, c)
    assert (tmp_path / f"{exp.NAME}.png").exists() and (tmp_path / f"{exp.NAME}.md").exists()
    if exp is bs:  # equal compute: every row read the same tokens
        assert len({r["summary"]["tokens_seen"][c]["mean"] for c in conditions}) == 1
    else:          # more steps on the same data read more tokens
        seen = [r["summary"]["tokens_seen"][c]["mean"] for c in conditions]
        assert seen[1] > seen[0] and seen[4] > seen[3] > seen[2]
