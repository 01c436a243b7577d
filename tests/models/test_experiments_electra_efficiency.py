"""``minilm experiment electra-efficiency`` (minilm/experiments/electra_efficiency.py): its plan, the
FLOPs count against the built model's shapes, the held-equal check, reading the encoder inside one
run (the probe, and fine-tuning a copy) without changing it, the trajectory shared between worker
processes, and (slow) the --quick run end to end."""
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from autograd.errors import ConfigError
from minilm.cli import build_parser
from minilm.experiments import EXPERIMENTS, config_of, settings_of
from minilm.experiments import electra_common as common
from minilm.experiments import electra_efficiency as exp
from minilm.models.electra import Electra
from minilm.recipes.config import from_args, override
from tests.models.experiment_quick import quick_run


def test_registered_and_planned():
    assert EXPERIMENTS[exp.NAME] == "minilm.experiments.electra_efficiency"
    full, quick = exp.plan(exp.CONFIG()), exp.plan(exp.CONFIG.quick())
    assert full.conditions[:3] == ["ELECTRA @ 0", "BERT (MLM) @ 0", "ELECTRA @ 200"]
    assert full.conditions[-1] == "BERT (MLM) @ 600"
    assert len(full.conditions) == 2 * (full.settings["points"] + 1)
    assert len(quick.conditions) < len(full.conditions) and quick.settings["steps"] < full.settings["steps"]
    assert quick.settings["n_embd"] < full.settings["n_embd"]
    assert set(full.x) == set(full.series) == set(full.conditions)
    assert set(full.series.values()) == set(exp.MODELS)
    assert full.x["ELECTRA @ 0"] == 0 and full.x["ELECTRA @ 600"] > full.x["BERT (MLM) @ 600"] > full.x["ELECTRA @ 400"]
    assert [m.key for m in full.metrics] == ["finetuned", "probe", "mlm_accuracy", "flops", "tokens"]
    assert {c.metric for c in full.claims} == {"finetuned"}
    json.dumps(full.settings)
    assert "Held equal" in full.notes[1] and "Clark et al. 2020" in full.notes[0]
    args = build_parser().parse_args(["experiment", exp.NAME, "--steps", "90", "--points", "3"])
    assert exp.checkpoints(exp.plan(from_args(exp.CONFIG, args, base=exp.CONFIG())).settings) == [0, 30, 60, 90]


def test_checkpoints_must_divide_the_run():
    assert exp.checkpoints({"steps": 60, "points": 3}) == [0, 20, 40, 60]
    for points in (0, 7):
        with pytest.raises(ConfigError, match="points"):
            exp.checkpoints({"steps": 60, "points": points})


def _matrices_of(model, network):
    """The weights (ndim >= 2) of one network of a built model that multiply every position: its
    own matrices, not the shared embedding tables, plus the tied decoder of a masked-LM head."""
    tables = {id(p) for p in model.discriminator.embeddings.parameters()}
    net = getattr(model, network)
    own = sum(p.size for p in net.parameters() if p.ndim >= 2 and id(p) not in tables)
    return own + (model.config.embedding_dim * model.config.vocab_size if getattr(net, "lm_head", None) else 0)


@pytest.mark.parametrize("embedding_size", [None, 24])
def test_flops_count_the_shapes_of_the_built_model(embedding_size):
    settings = settings_of(exp.CONFIG())
    for model in exp.MODELS:
        cfg = replace(exp.model_config(settings, model), embedding_size=embedding_size)
        built = Electra(cfg, rng=np.random.default_rng(0))
        for network in ("discriminator", "generator"):
            assert exp.network_shapes(cfg, network)["matrices"] == _matrices_of(built, network), (model, network)
    cfg = exp.model_config(settings, "ELECTRA")                    # H 64, 2 layers, G 16, V 400, T 64
    disc = 2 * (4 * 64 * 64 + 2 * 64 * 256) + 64 * 64 + 64
    gen = 2 * (4 * 16 * 16 + 2 * 16 * 64) + 64 * 16 + 16 * 64 + 64 * 400
    attention = 12 * 2 * 64 * (64 + 16)
    assert exp.flops_per_token(cfg, ("generator", "discriminator"), 64) == 6 * (disc + gen) + attention


def test_held_equal_checks_the_kept_encoders():
    settings = settings_of(exp.CONFIG())
    configs = {m: exp.model_config(settings, m) for m in exp.MODELS}
    kept = exp.held_equal(configs)
    assert (kept["layers"], kept["width"], kept["ffn"]) == (2, 64, 256)
    configs["BERT (MLM)"] = replace(configs["BERT (MLM)"], generator_hidden_fraction=0.5)   # a narrower BERT
    with pytest.raises(ConfigError, match="kept encoders differ"):
        exp.held_equal(configs)


@pytest.fixture(scope="module")
def tiny():
    return settings_of(override(exp.CONFIG.quick(), docs=20, steps=4, warmup=1, points=2, n_embd=16, probe_train=30,
                                probe_test=30, vocab_size=120, finetune_steps=3))


def test_reading_inside_the_run_leaves_the_run_unchanged(tiny):
    seed = 3
    plain, metrics = common.pretrain(config_of(exp.CONFIG, tiny).recipe, seed, task_text=tiny["task_text"])
    traj = exp.trajectory("ELECTRA", seed, tiny)
    assert list(traj) == ["0", "2", "4"]
    again, _ = common.pretrain(config_of(exp.CONFIG, tiny).recipe, seed, steps=0,
                               task_text=tiny["task_text"])
    encode, _ = common.encoder_of(plain.model, "discriminator")
    assert traj["4"]["probe"] == common.entailment_probe(encode, plain.tokenizer, seed, tiny)
    finetuned, _ = common.finetune_entailment(plain.model, "discriminator", plain.tokenizer, seed, tiny, steps=3)
    assert traj["4"]["finetuned"] == finetuned        # fine-tuned on a copy, under the evaluation's no_grad
    assert traj["4"]["mlm_accuracy"] == metrics["mlm_accuracy"]
    encode, _ = common.encoder_of(again.model, "discriminator")      # step 0: the untrained encoder
    assert traj["0"]["probe"] == common.entailment_probe(encode, again.tokenizer, seed, tiny)
    bert = exp.trajectory("BERT (MLM)", seed, tiny)                   # the same batches: the same tokens
    assert [t["tokens"] for t in bert.values()] == [t["tokens"] for t in traj.values()]
    assert traj["0"]["tokens"] == 0 < traj["2"]["tokens"] < traj["4"]["tokens"] <= 4 * tiny["batch_size"] * 64
    assert traj["4"]["flops"] > bert["4"]["flops"] > 0 == bert["0"]["flops"]


def test_the_trajectory_is_computed_once_for_all_workers(tiny, monkeypatch, tmp_path):
    calls = []

    def fake(model, seed, settings):
        calls.append((model, seed))
        return {str(s): {"probe": 0.5, "mlm_accuracy": 0.1, "flops": float(s), "tokens": s} for s in (0, 2, 4)}
    monkeypatch.setattr(exp, "trajectory", fake)
    monkeypatch.setattr(exp.tempfile, "gettempdir", lambda: str(tmp_path))
    exp._CACHE.clear()
    assert exp.run_one("ELECTRA @ 2", 0, tiny) == {"probe": 0.5, "mlm_accuracy": 0.1, "flops": 2.0, "tokens": 2}
    exp._CACHE.clear()                                   # another worker: no memory, the file is there
    assert exp.run_one("ELECTRA @ 4", 0, tiny)["flops"] == 4.0
    assert exp.run_one("BERT (MLM) @ 0", 0, tiny)["tokens"] == 0
    assert calls == [("ELECTRA", 0), ("BERT (MLM)", 0)]
    exp._CACHE.clear()
    for bad in ("ELECTRA @ 3", "GPT @ 2", "ELECTRA"):
        with pytest.raises(ConfigError, match="condition"):
            exp.run_one(bad, 0, tiny)


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    from minilm.cli import main
    r = quick_run(exp.NAME, tmp_path)   # seed 0: the recorded numbers
    plan = exp.plan(exp.CONFIG.quick())
    assert r["conditions"] == plan.conditions and r["seeds"] == [0, 1, 2]
    assert len(r["runs"]) == 3 * len(plan.conditions)
    for c in plan.conditions:
        for key in ("probe", "flops", "tokens"):
            values = r["summary"][key][c]["values"]
            assert len(values) == 3 and all(math.isfinite(v) for v in values), (c, key)
        assert r["summary"]["flops"][c]["mean"] == pytest.approx(plan.x[c])   # the plot's x is the table's
    electra, bert = plan.conditions[-2:]                               # the last step: the same batches seen
    assert r["summary"]["tokens"][electra]["values"] == r["summary"]["tokens"][bert]["values"]
    assert (tmp_path / f"{exp.NAME}.png").exists() and (tmp_path / f"{exp.NAME}.md").exists()
