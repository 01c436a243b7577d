"""``minilm.models.deberta``: disentangled attention layers and the enhanced mask decoder (Task 12.4)."""
import numpy as np
import pytest

from autograd import no_grad, optim
from autograd.errors import ConfigError, ShapeError
from minilm.corruption import mask_tokens
from minilm.models.deberta import DebertaConfig, DebertaForMaskedLM
from minilm.recipes.config import override

V = 20


def _model(seed=0, **kw):
    cfg = DebertaConfig(**{**dict(vocab_size=V, max_position_embeddings=16, max_relative_positions=4, n_layer=2,
                                  n_head=2, n_embd=32), **kw})
    return DebertaForMaskedLM(cfg, rng=np.random.default_rng(seed))


def test_shapes_and_loss():
    model = _model()
    ids = np.random.default_rng(0).integers(2, V, size=(3, 10))
    labels = np.full((3, 10), -100)
    labels[:, 4] = ids[:, 4]
    out = model(ids, np.ones_like(ids), labels)
    assert out["logits"].shape == (3, 10, V)
    assert np.isfinite(out["loss"].item())
    assert model(ids)["loss"] is None


def test_padding_changes_nothing_at_real_positions():
    model = _model()
    rng = np.random.default_rng(1)
    ids = rng.integers(2, V, size=(1, 9))
    mask = np.ones((1, 9), dtype=np.int64)
    mask[0, 6:] = 0
    other = ids.copy()
    other[0, 6:] = rng.integers(2, V, size=3)
    with no_grad():
        a = model(ids, mask)["logits"].data[0, :6]
        b = model(other, mask)["logits"].data[0, :6]
    assert np.allclose(a, b, atol=1e-5)


def test_absolute_positions_enter_only_at_the_decoder():
    """Changing one absolute-position embedding leaves every encoder layer unchanged (they see
    relative positions only) and changes the MLM logits (the enhanced mask decoder adds it)."""
    model = _model()
    ids = np.random.default_rng(2).integers(2, V, size=(1, 8))
    with no_grad():
        before = model(ids)
        model.abs_position_embeddings.weight.data[3] += 1.0
        after = model(ids)
    for h0, h1 in zip(before["hidden_states"], after["hidden_states"]):
        assert np.allclose(h0.data, h1.data)
    assert not np.allclose(before["logits"].data[0, 3], after["logits"].data[0, 3])


def test_shared_and_separate_relative_projections():
    sep = _model(share_att_key=False)
    shared = _model(share_att_key=True)
    names_sep = {n for n, _ in sep.named_parameters()}
    names_shared = {n for n, _ in shared.named_parameters()}
    assert any("pos_q_proj" in n for n in names_sep)
    assert not any("pos_q_proj" in n for n in names_shared)


def test_config_and_input_errors():
    with pytest.raises(ConfigError):
        DebertaConfig(vocab_size=10, n_embd=30, n_head=4)
    with pytest.raises(ConfigError):
        DebertaConfig(vocab_size=10, max_relative_positions=0)
    model = _model()
    with pytest.raises(ShapeError):
        model(np.zeros((1, 17), dtype=np.int64))               # longer than max_position_embeddings
    with pytest.raises(Exception):
        model(np.array([[1, V]]))                              # id out of range


def test_mlm_loss_drops_on_a_small_corpus():
    """Sequences count up modulo the vocabulary: each masked token follows from its neighbours."""
    rng = np.random.default_rng(0)
    model = _model()
    opt = optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(60):
        base = (np.arange(12)[None] + rng.integers(0, V - 2, size=(16, 1))) % (V - 2) + 2
        inputs, labels = mask_tokens(base, mask_id=1, vocab_size=V, special_ids=[0, 1], rng=rng)
        loss = model(inputs, np.ones_like(inputs), labels)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-10:]) < 0.75 * np.mean(losses[:10])


def test_recipe_runs_and_compares_with_bert(tmp_path):
    from minilm.recipes import deberta as recipe
    from minilm.train import train
    cfg = override(recipe.DebertaRecipeConfig(), docs=8, bert_steps=2, n_embd=16, n_layer=1, vocab_size=150, seed=0, steps=2)
    r = recipe.DebertaRecipe(cfg)
    s = train(r, cfg.train_config(), tmp_path, progress=False, plot=False)
    assert 0.0 <= s["metrics"]["mlm_accuracy"] <= 1.0
    assert 0.0 <= s["baselines"]["bert_mlm_accuracy"] <= 1.0 and s["baselines"]["bert_steps"] == 2
    assert "DeBERTa" in recipe.DebertaRecipe.describe(s)
