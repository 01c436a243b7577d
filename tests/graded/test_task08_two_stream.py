"""Graded tests of Task 8.2: XLNet's two-stream attention layer.

Mask convention (XLNet's, Task 8.1): True = row i may NOT attend to column j. The masks are built
here from random orders, not by the Task 8.1 slot, so this task is graded on its own.
"""
from __future__ import annotations

import numpy as np
import pytest

from autograd import Tensor, no_grad
from minilm.blocks import Block

MOD = "task08_xlnet.two_stream"
C, H = 8, 2


def _masks(order, is_target):
    """XLNet's (perm_mask, content_mask) for one row, True = may NOT attend. Context positions come
    before everything and see no target; a target sees the targets before it, not itself."""
    T = len(order)
    rank = np.empty(T, dtype=np.int64)
    rank[np.asarray(order)] = np.arange(T)
    rank = np.where(is_target, rank, -1)
    self_rank = np.where(is_target, rank, 0)
    perm = (self_rank[:, None] <= rank[None, :]) & is_target[None, :]
    return perm, perm & ~np.eye(T, dtype=bool)


def _batch_masks(rng, B, T, n_targets):
    perms, contents, targets = [], [], []
    for _ in range(B):
        order = rng.permutation(T)
        is_target = np.zeros(T, dtype=bool)
        is_target[order[T - n_targets:]] = True  # partial prediction: the tail of the order
        perm, content = _masks(order, is_target)
        perms.append(perm)
        contents.append(content)
        targets.append(is_target)
    return np.stack(perms), np.stack(contents), np.stack(targets)


def _layer(rng):
    layer = Block(C, H, rng=rng, norm="pre").to(np.float64)
    for ln in (layer.ln1, layer.ln2):  # non-trivial norms: a norm skipped or misplaced shows
        ln.weight.data[...] = rng.uniform(0.5, 2.0, size=C)
        ln.bias.data[...] = rng.standard_normal(C)
    return layer


def _expected(layer, h, g, content_mask, query_mask):
    """The update of the docstring, written out from the layer's own modules."""
    h_in, g_in = layer.ln1(h), layer.ln1(g)
    h = h + layer.attn(h_in, mask=~content_mask[:, None], kv=h_in)
    g = g + layer.attn(g_in, mask=~query_mask[:, None], kv=h_in)
    return h + layer.mlp(layer.ln2(h)), g + layer.mlp(layer.ln2(g))


def _setup(seed, B=2, T=7, n_targets=3):
    rng = np.random.default_rng(seed)
    layer = _layer(rng)
    perm, content, is_target = _batch_masks(rng, B, T, n_targets)
    h = rng.standard_normal((B, T, C))
    g = rng.standard_normal((B, T, C))
    return rng, layer, perm, content, is_target, h, g


def _run(fn, layer, h, g, content, query):
    with no_grad():
        h2, g2 = fn(layer, Tensor(h), Tensor(g), content.copy(), query.copy())
    return h2.data, g2.data


@pytest.mark.task8_2
@pytest.mark.points(3)
def test_matches_the_two_stream_update(impl):
    fn = impl(MOD).two_stream_layer
    # B = H = 2: a mask given a head axis in the wrong place still broadcasts, and must fail here
    rng, layer, perm, content, is_target, h, g = _setup(0)
    got_h, got_g = _run(fn, layer, h, g, content, perm)
    with no_grad():
        want_h, want_g = _expected(layer, Tensor(h), Tensor(g), content, perm)
    assert got_h.shape == h.shape and got_g.shape == g.shape, \
        (f"two_stream_layer should return h and g of their input shapes {h.shape} and {g.shape}, got {got_h.shape} "
         f"and {got_g.shape}")
    np.testing.assert_allclose(got_h, want_h.data, rtol=1e-9, atol=1e-12,
                               err_msg="content stream: h = h + Attn(Q=LN1(h), KV=LN1(h), content_mask), then the MLP")
    np.testing.assert_allclose(got_g, want_g.data, rtol=1e-9, atol=1e-12,
                               err_msg="query stream: g = g + Attn(Q=LN1(g), KV=LN1(h), query_mask), then the MLP")
    # a query stream with one row per target only (P = 3 < T = 7): its rows of perm_mask
    B, T = perm.shape[:2]
    pos = np.stack([np.flatnonzero(t) for t in is_target])                    # (B, 3)
    query = np.take_along_axis(perm, pos[:, :, None], axis=1)                    # (B, 3, T)
    g3 = rng.standard_normal((B, 3, C))
    got_h, got_g = _run(fn, layer, h, g3, content, query)
    with no_grad():
        want_h, want_g = _expected(layer, Tensor(h), Tensor(g3), content, query)
    assert got_g.shape == (B, 3, C), \
        f"with a query stream of 3 rows (one per target) g should stay (B, 3, C) = {(B, 3, C)}, got {got_g.shape}"
    np.testing.assert_allclose(got_h, want_h.data, rtol=1e-9, atol=1e-12,
        err_msg="with a 3-row query stream the content stream h must not change (it attends with content_mask only)")
    np.testing.assert_allclose(got_g, want_g.data, rtol=1e-9, atol=1e-12,
                               err_msg=("query stream with P != T rows: queries from LN1(g), keys and values "
                                        "from LN1(h)"))


@pytest.mark.task8_2
@pytest.mark.points(2)
def test_query_stream_never_sees_its_own_content(impl):
    fn = impl(MOD).two_stream_layer
    rng, layer, perm, content, is_target, h, g = _setup(1, B=3)
    base_h, base_g = _run(fn, layer, h, g, content, perm)
    for b, i in zip(*np.nonzero(is_target)):
        h2 = h.copy()
        h2[b, i] += rng.standard_normal(C)                 # change what is AT the target
        new_h, new_g = _run(fn, layer, h2, g, content, perm)
        assert np.array_equal(new_g[b, i], base_g[b, i]), (
            f"the query stream of target {i} changed when its own content h[{i}] changed: g must "
            "attend with perm_mask (which hides the target itself), never with content_mask")
        assert not np.allclose(new_h[b, i], base_h[b, i]), "the content stream must see itself"
        visible = np.flatnonzero(~perm[b, i])
        j = visible[0]
        h3 = h.copy()
        h3[b, j] += rng.standard_normal(C)                 # change something the target may see
        assert not np.allclose(_run(fn, layer, h3, g, content, perm)[1][b, i], base_g[b, i]), (
            f"the query stream of target {i} ignores position {j}, which perm_mask lets it see "
            "(remember: the masks say True = may NOT attend; invert them for the attention)")


@pytest.mark.task8_2
@pytest.mark.points(2)
def test_keys_and_values_come_from_the_content_stream(impl):
    fn = impl(MOD).two_stream_layer
    rng, layer, perm, content, _, h, g = _setup(2)
    base_h, base_g = _run(fn, layer, h, g, content, perm)
    B, T = perm.shape[:2]
    for b in range(B):
        for j in range(T):
            g2 = g.copy()
            g2[b, j] += rng.standard_normal(C)             # change one query row
            new_h, new_g = _run(fn, layer, h, g2, content, perm)
            assert np.array_equal(new_h, base_h), "the content stream must never read the query stream"
            others = np.arange(T) != j
            assert np.array_equal(new_g[b, others], base_g[b, others]), (
                f"changing query row {j} changed other query rows: the query stream's keys and values "
                "must come from the content stream h (kv=h), not from g")
            assert not np.allclose(new_g[b, j], base_g[b, j]), \
                (f"changing query row {j} did not change g[{j}]: the query stream keeps its residual, g = "
                 "g + Attn(...)")  # the residual: g_j itself moves


@pytest.mark.task8_2
@pytest.mark.points(1)
def test_content_stream_hides_later_targets(impl):
    fn = impl(MOD).two_stream_layer
    rng, layer, perm, content, is_target, h, g = _setup(3)
    base_h, _ = _run(fn, layer, h, g, content, perm)
    B, T = perm.shape[:2]
    for b in range(B):
        for j in np.flatnonzero(is_target[b]):
            h2 = h.copy()
            h2[b, j] += rng.standard_normal(C)
            new_h, _ = _run(fn, layer, h2, g, content, perm)
            blind = content[b, :, j]                     # rows that may not see position j
            assert blind.any(), "test set-up: some row should be blind to each target"
            assert np.array_equal(new_h[b, blind], base_h[b, blind]), (
                f"content rows {np.flatnonzero(blind).tolist()} changed when target {j} did: the "
                "content stream must attend with content_mask (no context sees a target, no target "
                "sees a later one)")
            may_see = ~content[b, :, j]
            assert not np.allclose(new_h[b, may_see], base_h[b, may_see]), \
                (f"changing target {j} changed none of the content rows allowed to see it: attend with ~content_mask "
                 "(True = may NOT attend)")


@pytest.mark.task8_2
@pytest.mark.points(2)
def test_one_set_of_weights_for_both_streams(impl):
    fn = impl(MOD).two_stream_layer
    rng, layer, perm, content, _, h, g = _setup(4)
    ht, gt = Tensor(h, requires_grad=True), Tensor(g, requires_grad=True)
    new_h, new_g = fn(layer, ht, gt, content, perm)
    layer.zero_grad()
    (new_g * Tensor(rng.standard_normal(new_g.shape))).sum().backward()   # a loss on g alone
    for name, p in layer.named_parameters():
        assert p.grad is not None and np.abs(p.grad).sum() > 0, (
            f"a loss on the query stream gives {name} no gradient: both streams go through the SAME "
            "attention, LN1, MLP and LN2 of the layer")
    assert ht.grad is not None and np.abs(ht.grad).sum() > 0, "the query stream reads keys/values from h"
    ht2, gt2 = Tensor(h, requires_grad=True), Tensor(g, requires_grad=True)
    new_h, _ = fn(layer, ht2, gt2, content, perm)
    (new_h * Tensor(rng.standard_normal(new_h.shape))).sum().backward()   # a loss on h alone
    assert gt2.grad is None or not np.abs(gt2.grad).any(), "the content stream must not read g"


@pytest.mark.task8_2
@pytest.mark.points(2)
def test_xlnet_logits_never_see_the_target_token(impl):
    from minilm.models.xlnet import XLNet, XLNetConfig
    rng = np.random.default_rng(5)
    B, T, V = 2, 8, 30
    model = XLNet(XLNetConfig(vocab_size=V, max_position_embeddings=T, n_layer=2, n_head=2, n_embd=16),
                  rng=rng)
    perm, _, is_target = _batch_masks(rng, B, T, 3)
    ids = rng.integers(0, V, size=(B, T))
    with impl.use("task08_xlnet"), no_grad():
        base = model(ids, perm)["logits"].data                       # (B, T, V)
        for b, i in zip(*np.nonzero(is_target)):
            for j in range(T):
                x = ids.copy()
                x[b, j] = (x[b, j] + 1) % V
                new = model(x, perm)["logits"].data
                if perm[b, i, j]:
                    assert np.array_equal(new[b, i], base[b, i]), (
                        f"target {i}'s logits changed with the token at {j}, which perm_mask hides "
                        f"from it ({'its own token' if i == j else 'a later target'})")
                else:
                    assert not np.allclose(new[b, i], base[b, i]), (
                        f"target {i}'s logits ignore the token at {j}, which perm_mask lets it see")
