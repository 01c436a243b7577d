"""``minilm.downstream.gpt_finetune``: GPT-1 fine-tuning with the auxiliary LM loss (Task 12.1 in a pipeline)."""
import json

import numpy as np
import pytest

from autograd import no_grad
from autograd.errors import ConfigError, ShapeError
from minilm.commands.finetune import format_gpt_report
from minilm.downstream.gpt_finetune import (GPTFinetuneConfig, GPTForSequenceClassification, gpt_evaluate,
                                             lm_loss_padded, run_gpt_finetune, text_baselines)
from minilm.models.gpt import GPT, GPTConfig

PAD = 0


def _model(pool="last", seed=0):
    gpt = GPT(GPTConfig(vocab_size=30, block_size=12, n_layer=1, n_head=2, n_embd=16),
              rng=np.random.default_rng(seed))
    return GPTForSequenceClassification(gpt, 2, rng=np.random.default_rng(seed + 1), pool=pool)


def _batch():
    ids = np.array([[1, 5, 6, 7, 2, PAD, PAD], [1, 8, 9, 2, PAD, PAD, PAD], [1, 3, 4, 5, 6, 7, 2]])
    return ids, (np.arange(7)[None, :] < np.array([5, 4, 7])[:, None]).astype(np.int64)


@pytest.mark.parametrize("pool", ["last", "mean", "max"])
def test_right_padding_changes_nothing(pool):
    model = _model(pool)
    model.eval()
    ids, mask = _batch()
    with no_grad():
        batched = model(ids, mask)["logits"].data
        for b in range(len(ids)):
            n = int(mask[b].sum())
            alone = model(ids[b:b + 1, :n], mask[b:b + 1, :n])["logits"].data
            assert np.allclose(batched[b], alone[0], atol=1e-5)


def test_lm_loss_ignores_padding():
    model = _model()
    ids, mask = _batch()
    logits, _ = model.gpt(ids)
    other = np.where(mask == 1, ids, 17)                 # different ids at the padded positions
    logits2, _ = model.gpt(other)
    assert np.isclose(lm_loss_padded(logits, ids, mask).item(), lm_loss_padded(logits2, other, mask).item(),
                      atol=1e-6)


def test_loss_is_task_loss_plus_lambda_lm():
    model = _model()
    ids, mask = _batch()
    labels = np.array([0, 1, 1])
    out0 = model(ids, mask, labels, aux_weight=0.0)
    out5 = model(ids, mask, labels, aux_weight=0.5)
    assert np.isclose(out5["loss"].item(), out0["loss"].item() + 0.5 * out5["lm_loss"].item(), atol=1e-5)


def test_aux_loss_sends_gradient_to_the_lm_only_weights():
    """With λ > 0 the tied LM head (wte) also gets L1's gradient, so its gradient differs from λ = 0."""
    ids, mask = _batch()
    labels = np.array([0, 1, 1])
    grads = []
    for lam in (0.0, 0.5):
        model = _model()
        model(ids, mask, labels, aux_weight=lam)["loss"].backward()
        grads.append(model.gpt.wte.weight.grad.copy())
    assert not np.allclose(grads[0], grads[1])


def test_validation():
    with pytest.raises(ConfigError, match="pool"):
        _model(pool="first")
    with pytest.raises(ConfigError, match="aux_lm"):
        run_gpt_finetune(GPTFinetuneConfig(aux_lm=-0.1))
    with pytest.raises(ConfigError, match="seeds"):
        run_gpt_finetune(GPTFinetuneConfig(aux_lm=0.5, seeds=()))
    model = _model()
    ids, mask = _batch()
    with pytest.raises(ShapeError):
        model(ids, mask[:, :3])


def test_run_gpt_finetune_tiny_reports_every_seed_and_lambda():
    r = run_gpt_finetune(GPTFinetuneConfig(aux_lm=0.5, pool="last", seeds=(0, 1, 2), steps=3, pretrain_steps=2,
                                           batch_size=8, n_docs=10, n_train=40, n_test=30, vocab_size=150, n_embd=16,
                                           n_layer=1), progress=False)
    assert r["lambdas"] == [0.0, 0.5] and r["seeds"] == [0, 1, 2]
    for key in ("0.0", "0.5"):
        assert len(r["accuracy"][key]) == 3 and all(0.0 <= a <= 1.0 for a in r["accuracy"][key])
        assert np.isclose(r["mean_accuracy"][key], np.mean(r["accuracy"][key]))
    again = run_gpt_finetune(GPTFinetuneConfig(aux_lm=0.5, pool="last", seeds=(0, 1, 2), steps=3, pretrain_steps=2,
                                               batch_size=8, n_docs=10, n_train=40, n_test=30, vocab_size=150,
                                               n_embd=16, n_layer=1), progress=False)
    assert again["accuracy"] == r["accuracy"]                 # seeded: the same numbers
    report = format_gpt_report(r)
    assert "λ = 0.0" in report and "λ = 0.5" in report
    assert "bag of words" in report and "majority class" in report and "held-out task loss" in report


def test_run_reports_losses_metrics_and_baselines():
    r = run_gpt_finetune(GPTFinetuneConfig(aux_lm=0.5, seeds=(0, 1, 2), steps=3, pretrain_steps=2, batch_size=8,
                                           n_docs=10, n_train=40, n_test=30, vocab_size=150, n_embd=16, n_layer=1),
                         progress=False)
    # held-out task losses: before fine-tuning the head is random, so about log 2
    assert len(r["initial_test_loss"]) == 3 and abs(r["initial_loss"] - np.log(2)) < 0.1
    assert np.isclose(r["initial_loss"], np.mean(r["initial_test_loss"]))
    assert np.isclose(r["final_loss"], np.mean(r["test_loss"]["0.5"]))
    assert r["metrics"] == r["metrics_by_lambda"]["0.5"]
    assert np.isclose(r["metrics"]["accuracy"], r["mean_accuracy"]["0.5"])
    assert set(r["metrics"]) == {"accuracy", "negation_accuracy", "plain_accuracy", "test_loss"}
    for key in ("bow_accuracy", "bow_negation_accuracy", "bow_loss", "majority_accuracy", "majority_loss"):
        assert len(r["baselines_per_seed"][key]) == 3
        assert np.isclose(r["baselines"][key], np.mean(r["baselines_per_seed"][key]))
    for key in ("train_loss_first", "train_loss_last", "test_loss"):
        assert set(r[key]) == {"0.0", "0.5"} and len(r[key]["0.0"]) == 3
    json.dumps(r)                                             # what --json prints
    only = run_gpt_finetune(GPTFinetuneConfig(aux_lm=0.0, seeds=(0,), steps=2, pretrain_steps=0, batch_size=8,
                                              n_docs=10, n_train=20, n_test=10, vocab_size=150, n_embd=16, n_layer=1),
                            progress=False)
    assert only["lambdas"] == [0.0] and only["metrics"] == only["metrics_by_lambda"]["0.0"]


def test_text_baselines_by_hand():
    train = ["good", "good", "bad", "fine"]
    y_train = np.array([1, 1, 0, 1])                          # majority: 1, frequencies (1/4, 3/4)
    test, y_test = ["good", "bad", "not good"], np.array([1, 0, 0])
    b = text_baselines(train, y_train, test, y_test, negated=[False, False, True])
    assert np.isclose(b["majority_accuracy"], 1 / 3)
    assert np.isclose(b["majority_loss"], -(np.log(0.75) + 2 * np.log(0.25)) / 3)
    assert b["bow_plain_accuracy"] == 1.0 and b["bow_negation_accuracy"] == 0.0   # "not good" reads as good
    assert np.isclose(b["bow_accuracy"], 2 / 3) and b["bow_loss"] > 0


def test_gpt_evaluate_loss_is_the_mean_cross_entropy():
    model = _model()
    ids, mask = _batch()
    labels = np.array([0, 1, 1])
    correct, loss = gpt_evaluate(model, ids, mask, labels, batch_size=2)      # two chunks
    with no_grad():
        logits = model(ids, mask)["logits"].data
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    assert np.isclose(loss, -logp[np.arange(3), labels].mean(), atol=1e-5)
    assert np.array_equal(correct, logits.argmax(-1) == labels)


def test_cli_json_has_losses_metrics_and_baselines(capsys):
    from minilm.cli import main
    assert main(["finetune", "--family", "gpt", "--aux-lm", "0.5", "--seeds", "3", "--steps", "2",
                 "--pretrain-steps", "1", "--n-train", "30", "--n-test", "20", "--n-embd", "16", "--n-layer", "1",
                 "--batch-size", "8", "--quiet", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    for key in ("initial_loss", "final_loss", "metrics", "baselines", "mean_accuracy", "std_accuracy"):
        assert key in r
    assert r["seeds"] == [0, 1, 2] and r["lambdas"] == [0.0, 0.5] and r["n_train"] == 30


@pytest.mark.slow
def test_gpt_learns_negation():
    """The defaults (200 labelled sentences, pre-training 300 steps, fine-tuning 300): on seed 0 both
    λ = 0 and λ = 0.5 reach ≈ 96% (measured 96.0% / 96.1%), far above the bag of words (≈ 68%), and
    the held-out task loss falls from ≈ log 2 to ≈ 0.18."""
    r = run_gpt_finetune(GPTFinetuneConfig(aux_lm=0.5, seeds=(0,)), progress=False)
    bow = r["baselines"]["bow_accuracy"]
    assert r["accuracy"]["0.0"][0] > 0.85 and r["accuracy"]["0.0"][0] > bow + 0.15
    assert r["accuracy"]["0.5"][0] > 0.85 and r["accuracy"]["0.5"][0] > bow + 0.15
    assert r["final_loss"] < 0.5 * r["initial_loss"]
