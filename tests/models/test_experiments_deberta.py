"""``minilm experiment deberta-vs-bert`` (minilm/experiments/deberta_vs_bert.py): its plan, its shared
held-out measurement, the MLM-only BERT recipe, and (slow) the --quick run end to end."""
import json
import math

import numpy as np
import pytest

from autograd import Tensor
from minilm.cli import build_parser
from minilm.experiments import EXPERIMENTS, config_of, settings_of
from minilm.experiments import deberta_vs_bert as exp
from minilm.recipes.config import from_args, override
from tests.models.experiment_quick import quick_run


def test_registered_and_planned():
    assert EXPERIMENTS[exp.NAME] == "minilm.experiments.deberta_vs_bert"
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert full.conditions == quick.conditions == exp.CONDITIONS
    assert [m.key for m in full.metrics] == ["mlm_accuracy", "mlm_loss"]
    assert not full.metrics[1].higher_is_better
    assert quick.settings["steps"] < full.settings["steps"] and quick.settings["n_embd"] <= full.settings["n_embd"]
    json.dumps(full.settings)                                   # JSON-able
    assert "BERT" in full.notes[-1] and "DeBERTa" in full.notes[-1]
    args = build_parser().parse_args(["experiment", exp.NAME, "--steps", "7"])
    assert exp.plan(from_args(exp.CONFIG, args, base=exp.CONFIG())).settings["steps"] == 7


class _Data:
    """Just what ``held_out_mlm`` reads."""
    def __init__(self, labels):
        self.val_labels = labels
        self.val_inputs = np.zeros_like(labels)
        self.val_mask = np.ones_like(labels)


def test_held_out_mlm_counts_only_the_masked_positions():
    V = 7
    labels = np.full((70, 5), -100)                          # more rows than one chunk of 64
    labels[:, 1] = np.arange(70) % V
    labels[::3, 3] = 2

    def perfect(x, mask):
        logits = np.full(x.shape + (V,), -30.0, dtype=np.float32)
        rows = np.arange(len(x))
        start = perfect.offset
        for col in range(x.shape[1]):
            target = labels[start:start + len(x), col]
            logits[rows, col, np.where(target >= 0, target, 0)] = 30.0
        perfect.offset += len(x)
        return Tensor(logits)
    perfect.offset = 0
    m = exp.held_out_mlm(_Data(labels), perfect)
    assert m["mlm_accuracy"] == 1.0 and m["mlm_loss"] < 1e-6
    uniform = exp.held_out_mlm(_Data(labels), lambda x, mask: Tensor(np.zeros(x.shape + (V,), np.float32)))
    assert math.isclose(uniform["mlm_loss"], math.log(V), rel_tol=1e-5)


@pytest.fixture(scope="module")
def tiny():
    from minilm.recipes import deberta
    settings = settings_of(override(exp.CONFIG.quick(), docs=20, steps=2))
    return settings, deberta.DebertaRecipe(exp._recipe_config(settings, 0))


def test_bert_recipe_trains_the_mlm_alone_on_the_same_batches(tiny):
    settings, data = tiny
    recipe = exp.BertMLM(data, seed=0)
    c = recipe.model_config
    assert (c.n_layer, c.n_head, c.n_embd) == (settings["n_layer"], settings["n_head"], settings["n_embd"])
    assert c.max_position_embeddings == data.model_config.max_position_embeddings
    batch = recipe.batch(np.random.default_rng([0, 5]))
    same = data.batch(np.random.default_rng([0, 5]))
    assert all(np.array_equal(batch[k], same[k]) for k in same)
    loss, info = recipe.loss(recipe.model, batch)
    out = recipe.model(batch["input_ids"], None, batch["attention_mask"], mlm_labels=batch["labels"])
    assert out["nsp_loss"] is None and math.isclose(loss.item(), out["mlm_loss"].item(), rel_tol=1e-6)
    assert info["tokens"] == int(batch["attention_mask"].sum())
    ev = recipe.evaluate(recipe.model)
    assert set(ev) == {"loss", "mlm_accuracy", "mlm_loss"} and ev["loss"] == ev["mlm_loss"]
    assert data.cfg.bert_steps == 0                         # the recipe trains no BERT of its own


def test_reference_row_and_an_unknown_condition(tiny):
    settings, _ = tiny
    ref = exp.run_one(exp.REFERENCE, 0, settings)
    assert 0.0 < ref["mlm_accuracy"] < 1.0 and ref["mlm_loss"] > 0
    with pytest.raises(ValueError, match="unknown condition"):
        exp.run_one("GPT", 0, settings)


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    assert r["conditions"] == exp.CONDITIONS and r["seeds"] == [0, 1, 2]
    assert len(r["runs"]) == 3 * len(exp.CONDITIONS)
    for key in ("mlm_accuracy", "mlm_loss"):
        for c in exp.CONDITIONS:
            values = r["summary"][key][c]["values"]
            assert len(values) == 3 and all(math.isfinite(v) for v in values)
    assert (tmp_path / f"{exp.NAME}.png").exists() and (tmp_path / f"{exp.NAME}.md").exists()
    # even at toy size, every trained model predicts masked tokens better than the unigram model
    unigram = r["summary"]["mlm_loss"][exp.REFERENCE]["mean"]
    for c in (exp.BERT, exp.DEBERTA_NO_EMD, exp.DEBERTA):
        assert r["summary"]["mlm_loss"][c]["mean"] < unigram, c
