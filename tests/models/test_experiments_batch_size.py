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


def test_noise_scale_of_a_known_problem():
    """Examples x_i ~ N(μ, σ² I_d) and the loss mean_i ½|w − x_i|²: G = w − μ and Σ = σ² I, so
    B_simple = d σ² / |w − μ|² (McCandlish et al. 2018, App. A.1)."""
    from autograd import Tensor
    from autograd.nn.module import Module, Parameter
    from minilm.experiments.noise_scale import noise_scale

    class Mean(Module):
        def __init__(self, w):
            super().__init__()
            self.w = Parameter(np.asarray(w, dtype=np.float64))

    d, sigma, rng = 20, 2.0, np.random.default_rng(0)
    mu, w = rng.normal(size=d), np.zeros(d)
    model = Mean(w)

    def loss(m, x):                                   # x: (B, d)
        return ((m.w - Tensor(x)) ** 2).sum(-1).mean() * 0.5

    def draws(count, size):
        return [mu + sigma * rng.normal(size=(size, d)) for _ in range(count)]
    expected = d * sigma ** 2 / np.sum((w - mu) ** 2)
    out = noise_scale(model, loss, draws(400, 2), draws(100, 64), 2, 64)
    assert out["trace_sigma"] == pytest.approx(d * sigma ** 2, rel=0.1)
    assert out["grad_sq"] == pytest.approx(np.sum((w - mu) ** 2), rel=0.25)
    assert out["noise_scale"] == pytest.approx(expected, rel=0.3)
    assert all(p.grad is None for p in model.parameters())          # the gradients are cleared after
    with pytest.raises(ValueError, match="small < big"):
        noise_scale(model, loss, draws(1, 8), draws(1, 8), 8, 8)


def test_each_row_keeps_the_learning_rate_with_the_lowest_dev_loss(monkeypatch):
    """run_one trains once per --lr-factors entry from the same start, picks on the DEV half and reports
    the TEST half; a stand-in training makes the dev loss smallest at lr(B) × 2."""
    from minilm.recipes import roberta
    settings = {**settings_of(bs.CONFIG.quick()), "lr_factors": "0.5,1,2,4"}
    B, _, lr, _ = bs.schedules(settings)["batch 8 × 160 steps"]
    trained, firsts = [], []

    def fake_pretrain(recipe, schedule):
        firsts.append(float(next(iter(recipe.model.parameters())).data.ravel()[0]))
        recipe.model.trained_lr = schedule.lr
        trained.append(schedule.lr)

    def fake_evaluate(self, model, rows=slice(None)):
        loss = abs(math.log(model.trained_lr / (2 * lr)))
        return {"loss": loss if rows == bs.DEV else 10 + loss, "mlm_accuracy": 0.5}
    monkeypatch.setattr(bs, "pretrain", fake_pretrain)
    monkeypatch.setattr(roberta.RobertaRecipe, "evaluate", fake_evaluate)
    monkeypatch.setattr(bs, "scores", lambda recipe, loss, acc, seed, s: {"heldout_loss": loss})
    measured = []                                                    # the weights each noise scale is read at
    monkeypatch.setattr(bs, "noise_scale_of", lambda recipe, seed: measured.append(
        float(next(iter(recipe.model.parameters())).data.ravel()[0])) or (2.0 if hasattr(recipe.model, "trained_lr")
                                                                         else 1.0))
    out = bs.run_one("batch 8 × 160 steps", 0, settings)
    assert (out["noise_scale_init"], out["noise_scale"]) == (1.0, 2.0)  # the untrained start, then the kept run
    assert measured[0] == firsts[0]                                  # at the weights every run starts from
    assert trained == pytest.approx([lr * f for f in (0.5, 1, 2, 4)])
    assert len(set(firsts)) == 1                                     # every run starts from the same weights
    assert out["lr_factor"] == 2 and out["lr"] == pytest.approx(2 * lr)
    assert out["dev_loss"] == pytest.approx(0) and out["heldout_loss"] == pytest.approx(10)   # reported: TEST
    with pytest.raises(ConfigError, match="--lr-factors"):
        bs.lr_factors({"lr_factors": "1,fast"})
    with pytest.raises(ConfigError, match="positive"):
        bs.lr_factors({"lr_factors": "0,1"})


def test_held_out_halves(tiny_recipe):
    from autograd import no_grad
    with no_grad():
        full, whole = tiny_recipe.evaluate(tiny_recipe.model), tiny_recipe.evaluate(tiny_recipe.model, slice(None))
        dev, test = (tiny_recipe.evaluate(tiny_recipe.model, rows) for rows in (bs.DEV, bs.TEST))
    assert full == whole and dev["loss"] != test["loss"]
    assert min(dev["loss"], test["loss"]) <= full["loss"] <= max(dev["loss"], test["loss"])
