"""Library tests of XLNet (minilm.models.xlnet, xlnet_predict, recipes.xlnet): the two-stream model
on the masks of minilm.corruption.xlnet_inputs, bit-for-bit mask properties, prediction in a
chosen order, the multi-token-name probe, checkpoints and the training recipe."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd import Tensor, no_grad
from autograd.errors import ConfigError, ShapeError
from minilm import corruption
from minilm.models.xlnet import XLNet, XLNetConfig, query_rows, two_stream_layer
from minilm.models.xlnet_predict import (name_probes, predict_in_order, prediction_masks,
                                         score_name_predictions)
from minilm.recipes.config import override

V, T = 40, 10


def tiny(seed=0, **kw) -> XLNet:
    cfg = dict(vocab_size=V, max_position_embeddings=16, n_layer=2, n_head=2, n_embd=16)
    return XLNet(XLNetConfig(**{**cfg, **kw}), rng=np.random.default_rng(seed))


def inputs(seed, B=2, K=3, **kw):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, V, size=(B, T))
    return corruption.xlnet_inputs(ids, rng=rng, K=K, **kw)


def ranks(order):
    r = np.empty(len(order), dtype=np.int64)
    r[order] = np.arange(len(order))
    return r


def logits(model, ids, perm, **kw):
    with no_grad():
        return model(ids, perm, **kw)["logits"].data


def test_slot_is_bound_to_task_8_2():
    assert two_stream_layer.slot_module == "task08_xlnet.two_stream"
    assert two_stream_layer.slot_name == "two_stream_layer"


def test_config_is_checked():
    for bad in (dict(n_embd=10, n_head=4), dict(dropout=1.0), dict(vocab_size=0), dict(n_layer=True)):
        with pytest.raises(ConfigError):
            XLNetConfig(**bad)
    with pytest.raises(ConfigError):
        XLNet(XLNetConfig(), rng=0)


def test_shapes_and_loss_over_the_targets_only():
    model, inp = tiny(), inputs(0)
    B, P = inp["target_labels"].shape
    out = model(inp["input_ids"], inp["perm_mask"], inp["target_mapping"], labels=inp["target_labels"])
    assert out["logits"].shape == (B, P, V)
    # the mean cross-entropy over the real rows (padding rows of target_mapping carry −100)
    lg = out["logits"].data.astype(np.float64)
    logp = lg - lg.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    real = inp["target_labels"] != -100
    want = -logp[real, inp["target_labels"][real]].mean()
    assert np.isclose(out["loss"].item(), want, rtol=1e-5)
    # the same loss from (B, T) labels, through target_mapping or with one query row per position
    out_t = model(inp["input_ids"], inp["perm_mask"], inp["target_mapping"], labels=inp["labels"])
    assert np.isclose(out_t["loss"].item(), out["loss"].item(), rtol=1e-6)
    full = model(inp["input_ids"], inp["perm_mask"], labels=inp["labels"])
    assert full["logits"].shape == (B, T, V)
    assert np.isclose(full["loss"].item(), out["loss"].item(), rtol=1e-5)
    for b in range(B):
        pos = np.flatnonzero(inp["labels"][b] != -100)
        np.testing.assert_allclose(full["logits"].data[b, pos], out["logits"].data[b, :len(pos)], atol=1e-5)


def test_bad_inputs_raise():
    model, inp = tiny(), inputs(1)
    ids, perm = inp["input_ids"], inp["perm_mask"]
    with pytest.raises(ShapeError, match="vocab|outside|range"):
        model(np.where(ids == ids[0, 0], V, ids), perm)
    with pytest.raises(ShapeError):
        model(np.where(ids == ids[0, 0], -1, ids), perm)
    with pytest.raises(ShapeError, match="bool"):
        model(ids, perm.astype(np.int64))
    with pytest.raises(ShapeError, match="perm_mask"):
        model(ids, perm[:, :-1])
    with pytest.raises(ShapeError, match="labels"):
        model(ids, perm, inp["target_mapping"], labels=inp["target_labels"][:, :1])
    with pytest.raises(ShapeError, match="one-hot"):
        model(ids, perm, inp["target_mapping"] * 2)
    with pytest.raises(ShapeError, match="max_position"):
        tiny(max_position_embeddings=8)(ids, perm)
    model(ids[0:1], perm[0])  # a (T, T) mask is broadcast over the batch


def test_query_rows_follow_target_mapping():
    inp = inputs(2, B=3, K=2)
    positions, qmask, real = query_rows(inp["perm_mask"], inp["target_mapping"])
    for b in range(3):
        n = int(inp["target_mask"][b].sum())
        assert np.array_equal(real[b], inp["target_mask"][b] == 1)
        assert np.array_equal(positions[b, :n], np.flatnonzero(inp["labels"][b] != -100))
        assert np.array_equal(qmask[b, :n], inp["perm_mask"][b, positions[b, :n]])


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 10_000), K=st.sampled_from([1, 2, 3, 6]), local=st.booleans())
def test_no_target_sees_itself_or_a_later_target(seed, K, local):
    """Invariants of the corruption helper's masks, as the model reads them."""
    inp = inputs(seed, B=1, K=K, perm_size=T // 2 if local else None)
    perm, content, labels = inp["perm_mask"][0], inp["content_mask"][0], inp["labels"][0]
    r, is_target = ranks(inp["order"][0]), labels != -100
    assert np.array_equal(content, perm & ~np.eye(T, dtype=bool))
    for i in np.flatnonzero(is_target):
        assert perm[i, i] and not content[i, i]              # query: not itself; content: itself
        later = is_target & (r >= r[i])
        assert perm[i, later].all() and not perm[i, ~later].any()
    assert not perm[np.ix_(~is_target, ~is_target)].any()      # context sees all context
    assert perm[np.ix_(~is_target, is_target)].all()           # ... and no target


@settings(deadline=None, max_examples=12)
@given(seed=st.integers(0, 10_000), K=st.sampled_from([2, 3]))
def test_a_forbidden_token_changes_nothing_an_allowed_one_changes_the_logits(seed, K):
    """The required property: bit-for-bit unchanged logits when a token the target may not see is
    changed (its own token or a later target's), changed logits when a visible token is."""
    model, inp = tiny(seed % 3), inputs(seed, B=2, K=K)
    ids, perm = inp["input_ids"], inp["perm_mask"]
    base = logits(model, ids, perm, target_mapping=inp["target_mapping"])   # (B, P, V)
    rng = np.random.default_rng(seed)
    b = int(rng.integers(2))
    p = int(rng.integers(int(inp["target_mask"][b].sum())))
    i = int(inp["target_mapping"][b, p].argmax())
    for j in range(T):
        x = ids.copy()
        x[b, j] = 5 + (x[b, j] - 5 + 1 + int(rng.integers(V - 6))) % (V - 5)  # another token
        new = logits(model, x, perm, target_mapping=inp["target_mapping"])
        if perm[b, i, j]:
            assert np.array_equal(new[b, p], base[b, p]), f"target {i} sees forbidden position {j}"
        else:
            assert not np.allclose(new[b, p], base[b, p]), f"target {i} ignores visible position {j}"
        assert np.array_equal(new[1 - b], base[1 - b])        # rows of the batch do not mix


def test_padding_is_invisible_and_default_content_mask():
    model = tiny(4)
    inp = inputs(4, special_ids=(0,))
    ids, perm = inp["input_ids"].copy(), inp["perm_mask"]
    am = np.ones_like(ids, dtype=bool)
    am[1, 7:] = False
    base = logits(model, ids, perm, attention_mask=am)
    x = ids.copy()
    x[1, 7:] = (x[1, 7:] + 3) % V
    new = logits(model, x, perm, attention_mask=am)
    assert np.array_equal(new[:, :7], base[:, :7]) and np.array_equal(new[0], base[0])
    content = perm & ~np.eye(T, dtype=bool)
    assert np.array_equal(logits(model, ids, perm, content_mask=content), logits(model, ids, perm))


def test_the_query_stream_knows_where_it_predicts():
    """Two targets that see exactly the same tokens differ only in their positions, which the query
    stream must carry (without them, XLNet could not tell which slot it is filling)."""
    model = tiny(5)
    ids = np.random.default_rng(5).integers(5, V, size=(1, T))
    is_target = np.zeros((1, T), dtype=bool)
    is_target[0, [2, 6]] = True
    out = logits(model, ids, prediction_masks(is_target, "independent"))
    assert not np.allclose(out[0, 2], out[0, 6])


def test_both_streams_share_every_weight_and_gradients_reach_all_parameters():
    model, inp = tiny(6), inputs(6)
    out = model(inp["input_ids"], inp["perm_mask"], inp["target_mapping"], labels=inp["target_labels"])
    out["loss"].backward()
    names = [n for n, _ in model.named_parameters()]
    assert "mask_emb" in names and "lm_bias" in names and not any("lm_head" in n for n in names)
    for name, p in model.named_parameters():
        assert p.grad is not None and np.abs(p.grad).sum() > 0, name
    # the content stream of each layer is exactly a post-LN block with the content mask
    rng = np.random.default_rng(0)
    block = model.layer[0]
    h, g = Tensor(rng.standard_normal((2, T, 16)).astype(np.float32)), Tensor(
        rng.standard_normal((2, 3, 16)).astype(np.float32))
    with no_grad():
        new_h, _ = two_stream_layer(block, h, g, inp["content_mask"], inp["perm_mask"][:, :3])
        np.testing.assert_allclose(new_h.data, block(h, mask=~inp["content_mask"][:, None]).data, atol=1e-6)


def test_checkpoint_round_trip(tmp_path):
    from minilm.checkpoint import load_model, model_meta, save_checkpoint
    model, inp = tiny(7), inputs(7)
    path = save_checkpoint(tmp_path / "x.npz", model=model, meta=model_meta(model, model.config))
    loaded, _, _ = load_model(path)
    assert np.array_equal(logits(loaded, inp["input_ids"], inp["perm_mask"]),
                          logits(model, inp["input_ids"], inp["perm_mask"]))


# ---- prediction in a chosen order and the multi-token-name probe --------------------------------

def test_prediction_masks():
    is_target = np.zeros((1, 6), dtype=bool)
    is_target[0, [1, 2, 4]] = True
    ltr = prediction_masks(is_target, "left_to_right")[0]
    rtl = prediction_masks(is_target, "right_to_left")[0]
    ind = prediction_masks(is_target, "independent")[0]
    assert np.array_equal(ltr[:, [1, 2, 4]], [[1, 1, 1], [1, 1, 1], [0, 1, 1], [1, 1, 1], [0, 0, 1], [1, 1, 1]])
    assert np.array_equal(rtl[:, [1, 2, 4]], [[1, 1, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 1, 1], [1, 1, 1]])
    assert (ind == is_target).all()
    for m in (ltr, rtl, ind):
        assert not m[:, ~is_target[0]].any()
    with pytest.raises(ConfigError):
        prediction_masks(is_target, "random")


def test_predict_in_order():
    model = tiny(8)
    rng = np.random.default_rng(8)
    ids = rng.integers(5, V, size=(3, T))
    is_target = np.zeros((3, T), dtype=bool)
    is_target[0, [3, 4]] = True
    is_target[1, [1, 5, 6]] = True
    is_target[2, 8] = True
    ind = predict_in_order(model, ids, is_target, order="independent")
    ltr = predict_in_order(model, ids, is_target, order="left_to_right")
    assert model.training                       # the mode is restored
    assert np.array_equal(ind[~is_target], ids[~is_target]) and np.array_equal(ltr[~is_target], ids[~is_target])
    first = np.array([3, 1, 8])                 # the first target of each row sees only the context
    assert np.array_equal(ltr[np.arange(3), first], ind[np.arange(3), first])
    assert np.array_equal(ltr, predict_in_order(model, ids, is_target, order="left_to_right", fill_id=7))
    # step by step: the second target of row 0 is predicted given the first prediction
    x = ids.copy()
    x[0, 3] = ltr[0, 3]
    step = logits(model, x, prediction_masks(is_target, "left_to_right"))
    assert ltr[0, 4] == step[0, 4].argmax()


class WordTokenizer:
    """Whitespace words → ids, enough for the probes."""

    def __init__(self, words):
        self.ids = {w: i for i, w in enumerate(words)}

    def encode(self, text):
        return [self.ids[w] for w in text.split()]


def test_name_probes_and_scores():
    words = ["[SEP]", "the", "dog", "from", "runs", ".", "new", "york", "delhi", "los", "angeles"]
    tok = WordTokenizer(words)
    text = "the dog from new york runs . the dog from los angeles runs . the dog from new delhi runs ."
    stream = np.array(tok.encode(text))
    names = ["new york", "new delhi", "los angeles"]
    probes = name_probes(stream, tok, block_size=8, names=names)
    assert probes["input_ids"].shape == (3, 8) and probes["is_target"].sum() == 6
    spans = [tuple(r[m]) for r, m in zip(probes["input_ids"], probes["is_target"])]
    assert spans == [tuple(tok.encode(n)) for n in ("new york", "los angeles", "new delhi")]
    pred = probes["input_ids"].copy()
    t = probes["is_target"]
    pred[0][t[0]] = tok.encode("new delhi")      # wrong but a real name
    pred[1][t[1]] = tok.encode("new angeles")    # not a name
    scores = score_name_predictions(pred, probes)
    assert scores == {"joint_accuracy": 1 / 3, "token_accuracy": 4 / 6, "coherent_rate": 2 / 3, "n": 3}
    assert name_probes(stream, tok, block_size=8, names=names, max_probes=1)["input_ids"].shape == (1, 8)


def recipe_config():
    """A tiny ``minilm train xlnet`` (30 documents, width 16, one layer)."""
    from minilm.recipes import xlnet as module
    return module, override(module.XLNetRecipeConfig(), docs=30, block_size=16, n_layer=1, n_embd=16, n_head=2, batch_size=4,
                           vocab_size=150, name_probes=8)


def test_recipe_trains_and_reports(tmp_path):
    from minilm.train import train
    module, config = recipe_config()
    recipe = module.XLNetRecipe(config)
    b = recipe.batch(np.random.default_rng(0))
    candidates = (b["input_ids"] != recipe.tokenizer.sep_id).sum(axis=1)
    assert (b["labels"] != -100).sum(axis=1).tolist() == [max(1, round(n / 6)) for n in candidates]  # K = 6
    assert not (b["labels"] == recipe.tokenizer.sep_id).any()   # [SEP] is functional, never a target
    cfg = override(config, steps=3, eval_every=3, checkpoint_every=3).train_config()
    s = train(recipe, cfg, tmp_path, progress=False, plot=False)
    json.dumps(s)
    assert {"initial_loss", "final_loss", "metrics", "baselines"} <= set(s)
    assert {"target_accuracy", "names_left_to_right_coherent_rate",
            "names_independent_coherent_rate"} <= set(s["metrics"])
    assert {"most_frequent_token_accuracy", "unigram_loss"} <= set(s["baselines"])
    assert "XLNet" in module.XLNetRecipe.describe(s)


@pytest.mark.slow
def test_recipe_defaults_beat_the_baselines(tmp_path):
    """``minilm train xlnet`` as shipped (1,200 steps; about a minute on an idle 2-core machine)."""
    from minilm.recipes import xlnet as module
    from minilm.train import train
    config = module.XLNetRecipeConfig()
    recipe = module.XLNetRecipe(config)
    s = train(recipe, config.train_config(), tmp_path, progress=False, plot=False)
    b = s["baselines"]
    assert s["final_loss"] < b["unigram_loss"] - 1.0
    assert s["metrics"]["target_accuracy"] > b["most_frequent_token_accuracy"] + 0.2
