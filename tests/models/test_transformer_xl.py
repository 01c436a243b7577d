"""Transformer-XL (minilm/models/transformer_xl.py) and its recall recipe."""

import numpy as np
import pytest

from autograd import no_grad
from autograd.errors import ConfigError, ShapeError
from minilm.models.transformer_xl import TransformerXL, TransformerXLConfig
from minilm.recipes.config import override

CFG = dict(vocab_size=20, n_layer=2, n_head=2, n_embd=16)


def _model(mem_len, seed=0):
    return TransformerXL(TransformerXLConfig(**CFG, mem_len=mem_len), rng=np.random.default_rng(seed))


IDS = np.random.default_rng(1).integers(0, 20, size=(2, 16))


def test_mem_len_zero_is_the_plain_relative_model():
    """With mem_len = 0 the memory is empty: each segment's logits equal the segment run alone."""
    model = _model(0)
    with no_grad():
        l1, mems = model(IDS[:, :8])
        l2, mems2 = model(IDS[:, 8:], mems)
        alone, _ = model(IDS[:, 8:])
    assert all(m.shape == (2, 0, 16) for m in mems + mems2)
    np.testing.assert_array_equal(l2.data, alone.data)


def test_memory_equals_the_full_context():
    """With mem_len >= the previous segment, segment 2 with memory = the last half of one causal
    pass over both segments (every layer sees the same keys at the same distances)."""
    model = _model(8)
    with no_grad():
        full, _ = model(IDS)
        l1, mems = model(IDS[:, :8])
        l2, new_mems = model(IDS[:, 8:], mems)
        alone, _ = model(IDS[:, 8:])
    np.testing.assert_allclose(l1.data, full.data[:, :8], atol=1e-5)
    np.testing.assert_allclose(l2.data, full.data[:, 8:], atol=1e-5)
    assert np.abs(alone.data - l2.data).max() > 1e-4          # the memory matters
    assert [m.shape for m in new_mems] == [(2, 8, 16)] * 2 and not any(m.requires_grad for m in new_mems)


def test_memory_is_truncated_and_detached():
    model = _model(5)
    logits, mems = model(IDS[:, :8])
    assert logits.shape == (2, 8, 20)
    assert [m.shape for m in mems] == [(2, 5, 16)] * 2
    loss, _, _ = model.segment_loss(IDS[:, 8:], IDS[:, 8:], mems)
    loss.backward()
    assert all(not m.requires_grad for m in mems)


def test_errors():
    with pytest.raises(ConfigError):
        TransformerXLConfig(**CFG, mem_len=-1)
    with pytest.raises(ConfigError):
        TransformerXLConfig(vocab_size=20, n_head=3, n_embd=16)
    model = _model(4)
    with pytest.raises(ShapeError):
        model(IDS[:, :4], mems=[None])                          # one memory for two layers
    with pytest.raises(Exception):
        model(np.array([[0, 20]]))                              # id out of range


def _recipe_config(**kw):
    from minilm.recipes import transformer_xl as R
    return override(R.TransformerXLRecipeConfig(), **kw)


def test_recall_batch_puts_the_answer_beyond_one_segment():
    from minilm.recipes.transformer_xl import RecallVocab, recall_batch
    vocab = RecallVocab(8, 16)
    ids, targets = recall_batch(64, 12, vocab, rng=np.random.default_rng(0))
    assert ids.shape == targets.shape == (64, 24)
    assert (ids[:, -2] == vocab.query_id).all() and (targets[:, -2] == ids[:, -1]).all()
    assert (ids[:, 12:-1] >= 8).all()                            # segment 2 holds no key before the answer
    for row in ids:
        assert row[-1] in row[:12]                               # the key is in segment 1
    assert (targets[:, :-2] == -100).all()


def test_memory_beats_no_memory_on_recall(tmp_path):
    """The same recipe trained with and without memory: only the memory solves the task."""
    from minilm.recipes import transformer_xl as R
    from minilm.train import train
    results = {}
    for mem_len in (12, 0):
        config = _recipe_config(mem_len=mem_len, n_val=128, steps=150, eval_every=150, checkpoint_every=150)
        recipe = R.TransformerXLRecipe(config)
        cfg = config.train_config()
        results[mem_len] = train(recipe, cfg, tmp_path / str(mem_len), progress=False, plot=False)
    with_mem, without = results[12]["metrics"], results[0]["metrics"]
    chance = results[0]["baselines"]["chance_accuracy"]
    assert with_mem["accuracy"] > 0.9
    assert without["accuracy"] < chance + 0.15
    assert with_mem["accuracy_without_memory"] < chance + 0.15   # the trained model needs its memory
    assert results[12]["final_loss"] < results[12]["initial_loss"] / 4
    assert "Transformer-XL" in R.TransformerXLRecipe.describe(results[12])
