"""ELECTRA: sizes, the shared embeddings, the steps of ``Electra.forward`` (the no-gradient sampling,
labels, the two losses), the four objectives, the recipe and its metrics."""
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import autograd.functional as F
from autograd import optim, tasks
from autograd.errors import ConfigError
from minilm.downstream.finetune import finetune_sentiment
from minilm.corruption import electra_corrupt, electra_mask, replaced_token_labels, sample_from_logits
from minilm.models.electra import OBJECTIVES, Electra, ElectraConfig, generator_parameters
from minilm.recipes import electra as recipe
from minilm.recipes.config import override

PAD, CLS, SEP, MASK = 0, 2, 3, 4
ROOT = Path(__file__).resolve().parents[2]


def _config(**kw):
    return ElectraConfig(**{**dict(vocab_size=12, max_position_embeddings=16, n_layer=1, n_head=2, n_embd=16,
                                   dropout=0.0), **kw})


def _batch(B=16, T=12, seed=0, V=12):
    rng = np.random.default_rng(seed)
    ids = np.full((B, T), PAD, dtype=np.int64)
    for b in range(B):
        n = int(rng.integers(3, T - 1))
        ids[b, 0], ids[b, 1:n + 1], ids[b, n + 1] = CLS, rng.integers(5, V, size=n), SEP
    return ids, ids != PAD


@pytest.mark.parametrize("H, heads, fraction, G, G_heads", [
    (64, 4, 0.25, 16, 1), (64, 4, 0.5, 32, 2), (64, 4, 1.0, 64, 4), (256, 4, 0.25, 64, 1),
    (768, 12, 1 / 3, 256, 4), (16, 2, 0.25, 8, 1), (8, 2, 0.25, 8, 2)])
def test_generator_size_rule(H, heads, fraction, G, G_heads):
    cfg = ElectraConfig(vocab_size=10, n_embd=H, n_head=heads, generator_hidden_fraction=fraction)
    assert cfg.generator_hidden == G and cfg.generator_heads == G_heads
    assert cfg.bert_config("generator").n_inner == 4 * G
    assert ElectraConfig(vocab_size=10, n_layer=4, generator_layers_fraction=0.5).generator_layers == 2


def test_config_errors():
    with pytest.raises(ConfigError, match="objective"):
        _config(objective="bert")
    with pytest.raises(ConfigError, match="mask_id"):
        _config(mask_id=99)
    with pytest.raises(ConfigError):
        _config(generator_hidden_fraction=0.0)


def test_one_shared_embedding_table():
    model = Electra(_config(), rng=np.random.default_rng(0))
    g, d = model.generator, model.discriminator
    assert g.embeddings is d.embeddings is model.embeddings
    assert g.lm_head.decoder.weight is d.embeddings.word_embeddings.weight
    tables = [p for n, p in model.named_parameters() if "word_embeddings" in n or "decoder" in n]
    assert len(tables) == 1, "one word-embedding Parameter in the whole model"


def test_embeddings_project_where_the_sizes_differ():
    model = Electra(_config(n_embd=32, embedding_size=16, generator_hidden_fraction=0.5),
                    rng=np.random.default_rng(0))
    assert model.discriminator.embeddings_project.weight.shape == (32, 16)
    assert model.generator.embeddings_project is None  # G = 16 = E
    small = Electra(_config(), rng=np.random.default_rng(0))
    assert small.discriminator.embeddings_project is None and small.generator.embeddings_project is not None
    ids, mask = _batch()
    out = model(ids, mask, rng=np.random.default_rng(1))
    assert out["disc_logits"].shape == ids.shape and out["mlm_logits"].shape == ids.shape + (12,)


def test_labels_never_mark_a_correct_sample():
    model = Electra(_config(), rng=np.random.default_rng(0))
    equal = 0
    for seed in range(4):
        ids, mask = _batch(B=32, seed=seed)
        out = model(ids, mask, rng=np.random.default_rng(seed))
        m, x, y = out["masked"], out["disc_inputs"], out["disc_labels"]
        assert not y[m & (x == ids)].any() and y[m & (x != ids)].all() and not y[~m].any()
        equal += int((m & (x == ids)).sum())
    assert equal > 0


def test_disallow_correct_never_samples_the_original():
    model = Electra(_config(disallow_correct=True), rng=np.random.default_rng(0))
    ids, mask = _batch(B=32)
    out = model(ids, mask, rng=np.random.default_rng(2))
    m = out["masked"]
    assert (out["disc_inputs"][m] != ids[m]).all() and (out["disc_labels"] == m).all()


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_no_gradient_reaches_the_generator_from_the_main_loss(objective):
    model = Electra(_config(objective=objective), rng=np.random.default_rng(0))
    ids, mask = _batch()
    out = model(ids, mask, rng=np.random.default_rng(3))
    out["disc_loss"].backward()
    assert all(p.grad is None or not p.grad.any() for p in generator_parameters(model))
    assert model.embeddings.word_embeddings.weight.grad.any(), "the shared table learns from the main loss"
    model.zero_grad()
    out = model(ids, mask, rng=np.random.default_rng(3))
    out["mlm_loss"].backward()
    assert all(p.grad is not None for p in generator_parameters(model))


def _replay(model, ids, mask, seed):
    """Steps 1-4 of ``Electra.forward`` by hand, with the library's Task 7.1 functions on one Generator."""
    cfg, rng = model.config, np.random.default_rng(seed)
    gen_inputs, masked, mlm_labels = electra_mask(ids, mask_id=cfg.mask_id, special_ids=cfg.special_ids,
                                                  pad_id=cfg.pad_id, rng=rng, mask_prob=cfg.mask_prob)
    logits = model.generator(gen_inputs, mask).data
    samples = sample_from_logits(logits[masked], rng=rng, temperature=cfg.temperature,
                                 disallow_ids=ids[masked] if cfg.disallow_correct else None)
    x_hat = electra_corrupt(ids, masked, samples)
    return dict(generator_inputs=gen_inputs, masked=masked, mlm_labels=mlm_labels, mlm_logits=logits,
                disc_inputs=x_hat, disc_labels=replaced_token_labels(ids, x_hat, masked))


def _bce(z, y):
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


@pytest.mark.parametrize("weights", [{}, {"disc_weight": 7.0, "gen_weight": 0.5}])
def test_forward_follows_the_papers_steps(weights):
    """Mask, generate, sample (same rng, in that order), corrupt, label, discriminate, L = w·L_MLM + λ·L_Disc."""
    model = Electra(_config(**weights), rng=np.random.default_rng(0))
    ids, mask = _batch(B=24)
    out = model(ids, mask, rng=np.random.default_rng(3))
    want = _replay(model, ids, mask, 3)
    for key in ("generator_inputs", "masked", "mlm_labels", "disc_inputs", "disc_labels"):
        assert np.array_equal(out[key], want[key]), key
    assert np.allclose(out["mlm_logits"].data, want["mlm_logits"], atol=1e-5)
    mlm = F.cross_entropy(out["mlm_logits"], want["mlm_labels"]).item()
    assert np.isclose(out["mlm_loss"].item(), mlm, rtol=1e-6), "L_MLM over the masked positions of x^masked"
    z = model.discriminator(want["disc_inputs"], mask).data
    assert np.allclose(out["disc_logits"].data, z, atol=1e-5), "the discriminator reads x̂"
    a = mask.astype(float)
    disc = (_bce(z, want["disc_labels"]) * a).sum() / (a.sum() + 1e-6)
    assert np.isclose(out["disc_loss"].item(), disc, rtol=1e-5), "L_Disc over every real token"
    cfg = model.config
    assert np.isclose(out["loss"].item(), cfg.gen_weight * mlm + cfg.disc_weight * disc, rtol=1e-5)


def test_the_discriminator_reads_samples_not_the_argmax():
    model = Electra(_config(), rng=np.random.default_rng(0))
    ids, mask = _batch(B=24)
    out = model(ids, mask, rng=np.random.default_rng(3))
    m, x_hat = out["masked"], out["disc_inputs"]
    assert isinstance(x_hat, np.ndarray) and np.issubdtype(x_hat.dtype, np.integer), "x̂ is plain NumPy ids"
    assert np.array_equal(x_hat[~m], ids[~m])
    assert (x_hat[m] == out["mlm_logits"].data.argmax(-1)[m]).mean() < 0.5, "x̂ holds samples, not the argmax"
    assert (x_hat[m] != ids[m]).mean() > 0.5, "most masked positions hold a replacement"


def test_attention_mask_defaults_to_non_pad():
    model = Electra(_config(), rng=np.random.default_rng(0))
    ids, mask = _batch()
    a = model(ids, rng=np.random.default_rng(5))
    b = model(ids, mask, rng=np.random.default_rng(5))
    assert np.isclose(a["loss"].item(), b["loss"].item())


def test_electra_loss_drops_on_a_small_corpus():
    model = Electra(_config(n_embd=32, vocab_size=16), rng=np.random.default_rng(0))
    rng = np.random.default_rng(0)
    # a tiny "language": each sentence repeats one of three patterns
    patterns = np.array([[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 5], [6, 8, 10, 12, 14, 7]])
    opt = optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for step in range(60):
        rows = patterns[rng.integers(0, 3, size=16)]
        ids = np.concatenate([np.full((16, 1), CLS), rows, np.full((16, 1), SEP)], axis=1)
        out = model(ids, rng=rng)
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
        losses.append(out["loss"].item())
    assert np.mean(losses[-10:]) < 0.7 * np.mean(losses[:5]), (losses[:5], losses[-10:])


def test_checkpoint_rebuilds_the_model(tmp_path):
    from minilm.checkpoint import load_model, model_meta, save_checkpoint
    model = Electra(_config(objective="all_tokens_mlm"), rng=np.random.default_rng(0))
    save_checkpoint(tmp_path / "c.npz", model=model, meta={"family": "electra", **model_meta(model, model.config)})
    again, _, _ = load_model(tmp_path / "c.npz")
    assert again.config == model.config
    assert again.generator.embeddings is again.discriminator.embeddings
    ids, mask = _batch()
    x = again(ids, mask, rng=np.random.default_rng(1))["loss"].item()
    y = model.eval()(ids, mask, rng=np.random.default_rng(1))["loss"].item()
    assert np.isclose(x, y, rtol=1e-6)


# ---------------------------------------------------------------- the recipe

def test_roc_auc_matches_pair_counting():
    rng = np.random.default_rng(0)
    s, y = rng.normal(size=200), rng.random(200) < 0.3
    pairs = (s[y][:, None] > s[~y][None, :]).mean()
    assert np.isclose(recipe.roc_auc(s, y), pairs)
    assert np.isnan(recipe.roc_auc(s, np.zeros(200, bool)))


def test_summary_says_when_the_discriminator_has_not_learned_to_detect():
    """At the defaults (temperature 1) `minilm train electra` ends with AUC 0.545 and a discriminator at
    the base rate; the summary must say so and what to try, and say nothing when it detects."""
    cfg = override(recipe.ElectraRecipeConfig(), docs=30, max_seq_length=24, n_layer=1, n_head=2, n_embd=16,
                   vocab_size=200)
    rec = recipe.ElectraRecipe(cfg)
    m = {"loss": 1.0, "mlm_loss": 4.0, "disc_loss": 0.38, "mlm_accuracy": 0.2, "disc_accuracy": 0.87,
         "replaced_f1": 0.02, "replaced_precision": 0.8, "replaced_recall": 0.01, "disc_auc": 0.545,
         "disc_auc_masked": 0.86}
    s = {"initial_loss": 40.0, "final_loss": 23.0, "steps": 600, "parameters": 1, "metrics": m,
         "baselines": {"always_original_accuracy": 0.87, "most_frequent_token_accuracy": 0.09}}
    text = rec.describe(s)
    assert "has not learned to spot" in text and "AUC 0.545" in text and "--temperature 2" in text, text
    rec.model_config = dataclasses.replace(rec.model_config, temperature=2.0)
    assert "--temperature 2" not in rec.describe(s) and "more --steps" in rec.describe(s)
    assert "has not learned" not in rec.describe(dict(s, metrics=dict(m, disc_auc=0.74)))


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_recipe_trains_and_reports(tmp_path, objective):
    from minilm.train import TrainConfig, train
    cfg = override(recipe.ElectraRecipeConfig(), docs=30, max_seq_length=24, n_layer=1, n_head=2, n_embd=16, batch_size=8,
                  vocab_size=200, objective=objective)
    rec = recipe.ElectraRecipe(cfg)
    assert all(b[0] == rec.tokenizer.cls_id and b[-1] == rec.tokenizer.sep_id for b in rec.train_blocks)
    s = train(rec, TrainConfig(steps=6, lr=3e-3, warmup=1, eval_every=6, checkpoint_every=6), tmp_path,
              progress=False, plot=False)
    m, b = s["metrics"], s["baselines"]
    assert {"loss", "mlm_loss", "disc_loss", "mlm_accuracy", "replaced_rate"} <= set(m)
    assert set(b) == {"always_original_accuracy", "most_frequent_token_accuracy", "unigram_loss"}
    assert np.isclose(b["always_original_accuracy"], 1 - m["replaced_rate"])
    if objective in ("electra", "electra15"):
        assert {"disc_accuracy", "replaced_f1", "disc_auc"} <= set(m)
    else:
        assert "main_mlm_accuracy" in m
    assert "generator MLM accuracy" in rec.describe(s)
    if objective == "electra":
        result = finetune_sentiment(rec.model, rec.tokenizer, steps=5, n_train=64, n_test=32)
        assert 0 <= result["accuracy"] <= 1


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_every_objective_runs_the_task_slots_and_one_loss_line(objective):
    """Every objective runs Task 7.1's steps and ends in Task 7.2's electra_loss: no copy in the library."""
    cfg = ElectraConfig(vocab_size=12, max_position_embeddings=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0,
                        objective=objective)
    model = Electra(cfg, rng=np.random.default_rng(0))
    ids = np.random.default_rng(1).integers(5, 12, size=(3, 8))
    with tasks.trace() as seen:
        out = model(ids, rng=np.random.default_rng(2))
    sampling = {("task07_electra.sampling", name)
                for name in ("electra_mask", "sample_from_logits", "replaced_token_labels")}
    assert sampling | {("task07_electra.loss", "electra_loss")} <= seen
    assert {"mlm_loss", "disc_inputs", "disc_labels", "masked", "loss"} <= set(out)
    weight = cfg.disc_weight if objective in ("electra", "electra15") else 1.0
    assert np.isclose(out["loss"].item(), out["mlm_loss"].item() + weight * out["disc_loss"].item(), rtol=1e-5)
