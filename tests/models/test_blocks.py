"""minilm.blocks: masks, multi-head attention, positions, embeddings, pre-LN / post-LN blocks."""
import math

import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor, gradcheck, set_backend, get_backend, tasks
from autograd.errors import ConfigError, ShapeError
from minilm.blocks import (Block, FeedForward, LearnedPositionEmbedding, MultiHeadAttention,
                           RelativePositionBias, SegmentEmbedding, causal_mask, embed_inputs, padding_mask,
                           prefix_lm_mask, relative_position_bucket, scaled_dot_product_attention,
                           sinusoidal_positions)


@pytest.fixture(params=["numpy", "numba"])
def backend(request):
    saved = get_backend()
    set_backend(request.param)
    yield request.param
    set_backend(saved)


# ---- masks ----------------------------------------------------------------------------------------

def test_causal_and_prefix_masks():
    np.testing.assert_array_equal(causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    m = prefix_lm_mask(5, 2)
    want = np.array([[j <= i or j < 2 for j in range(5)] for i in range(5)])
    np.testing.assert_array_equal(m, want)
    np.testing.assert_array_equal(prefix_lm_mask(4, 0), causal_mask(4))
    assert prefix_lm_mask(4, 4).all()
    assert causal_mask(0).shape == (0, 0)
    with pytest.raises(ConfigError):
        prefix_lm_mask(3, 4)
    with pytest.raises(ConfigError):
        causal_mask(-1)


def test_padding_mask_is_on_the_keys_and_combines_with_causal():
    am = np.array([[1, 1, 1, 0], [1, 1, 0, 0]])
    pm = padding_mask(am)
    assert pm.shape == (2, 1, 1, 4) and pm.dtype == bool
    both = causal_mask(4) & pm
    assert both.shape == (2, 1, 4, 4)
    assert not both[1, 0, 3, 2] and both[1, 0, 3, 1] and not both[0, 0, 1, 2]
    with pytest.raises(ShapeError):
        padding_mask(np.array([1, 1, 0]))
    with pytest.raises(ShapeError):
        padding_mask(np.array([[1, 2, 0]]))


# ---- attention ------------------------------------------------------------------------------------

def test_attention_matches_the_fused_kernel(backend):
    """The composed attention of Task 3.1 against autograd's fused scaled_masked_softmax."""
    rng = np.random.default_rng(0)
    q, k, v = (Tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True) for _ in range(3))
    mask = causal_mask(5) & padding_mask(np.array([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]]))  # row 0, 1 empty
    out, attn = scaled_dot_product_attention(q, k, v, mask=mask)
    fused = F.scaled_masked_softmax(q @ k.transpose(0, 1, 3, 2), mask, 1 / math.sqrt(4))
    np.testing.assert_allclose(attn.data, fused.data, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out.data, (fused @ v).data, rtol=1e-10, atol=1e-12)
    assert np.all(attn.data[1, :, :2] == 0)
    g = rng.standard_normal(out.shape)
    out.backward(g)
    grads = [t.grad.copy() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    (fused @ v).backward(g)
    for a, t in zip(grads, (q, k, v)):
        np.testing.assert_allclose(a, t.grad, rtol=1e-8, atol=1e-10)


def test_multi_head_attention_shapes_and_last_attention():
    rng = np.random.default_rng(1)
    mha = MultiHeadAttention(16, 4, rng=rng)
    x = Tensor(rng.standard_normal((2, 5, 16)).astype(np.float32))
    y = mha(x, mask=causal_mask(5))
    assert y.shape == (2, 5, 16) and y.dtype == np.float32
    assert isinstance(mha.last_attention, np.ndarray) and mha.last_attention.shape == (2, 4, 5, 5)
    enc = Tensor(rng.standard_normal((2, 7, 16)).astype(np.float32))
    assert mha(x, kv=enc).shape == (2, 5, 16)
    assert mha.last_attention.shape == (2, 4, 5, 7)
    names = [n for n, _ in mha.named_parameters()]
    assert names == ["q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias", "v_proj.weight",
                     "v_proj.bias", "out_proj.weight", "out_proj.bias"]
    assert len(MultiHeadAttention(16, 4, rng=rng, bias=False).parameters()) == 4


def _mha_reference(mha, x, kv, mask):
    """The multi-head attention of ``mha`` written out in NumPy (Vaswani et al. 2017, §3.2.2)."""
    def lin(layer, a):
        return a @ layer.weight.data.T + layer.bias.data
    B, Tq, C = x.shape
    src = x if kv is None else kv
    H, d = mha.n_head, C // mha.n_head

    def split(a):
        return a.reshape(B, a.shape[1], H, d).transpose(0, 2, 1, 3)
    q, k, v = split(lin(mha.q_proj, x)), split(lin(mha.k_proj, src)), split(lin(mha.v_proj, src))
    s = np.where(mask, q @ k.transpose(0, 1, 3, 2) / math.sqrt(d), -np.inf)
    att = np.exp(s - s.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    return lin(mha.out_proj, (att @ v).transpose(0, 2, 1, 3).reshape(B, Tq, C)), att


@pytest.mark.parametrize("Tk", [None, 6], ids=["self", "cross"])
def test_multi_head_attention_is_the_papers_formula(Tk):
    """Queries from x; keys and values from x (self-attention) or from the encoder's output kv (cross)."""
    rng = np.random.default_rng(8)
    mha = MultiHeadAttention(12, 3, rng=rng).to(np.float64)
    x = rng.standard_normal((2, 3, 12))
    enc = None if Tk is None else rng.standard_normal((2, Tk, 12))
    mask = causal_mask(3) if Tk is None else padding_mask(np.array([[1] * Tk, [1] * 4 + [0] * (Tk - 4)]))
    with tasks.trace() as seen:
        y = mha(Tensor(x), mask=mask, kv=None if enc is None else Tensor(enc))
    assert {("task03_transformer.heads", "split_heads"), ("task03_transformer.heads", "merge_heads"),
            ("task03_transformer.attention", "scaled_dot_product_attention")} <= seen
    want_y, want_att = _mha_reference(mha, x, enc, mask)
    np.testing.assert_allclose(mha.last_attention, want_att, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(y.data, want_y, rtol=1e-10, atol=1e-12)


def test_multi_head_attention_errors():
    rng = np.random.default_rng(2)
    with pytest.raises(ConfigError):
        MultiHeadAttention(10, 4, rng=rng)
    mha = MultiHeadAttention(8, 2, rng=rng)
    x = Tensor(rng.standard_normal((2, 3, 8)))
    with pytest.raises(ShapeError, match="mask"):
        mha(x, mask=causal_mask(4))
    with pytest.raises(ShapeError, match="boolean"):
        mha(x, mask=np.ones((3, 3)))
    with pytest.raises(ShapeError, match="kv"):
        mha(x, kv=Tensor(rng.standard_normal((3, 3, 8))))
    with pytest.raises(ShapeError):
        mha(Tensor(rng.standard_normal((2, 3, 6))))


def test_causal_attention_does_not_leak_the_future():
    rng = np.random.default_rng(3)
    mha = MultiHeadAttention(8, 2, rng=rng)
    x = rng.standard_normal((1, 6, 8)).astype(np.float32)
    y = mha(Tensor(x), mask=causal_mask(6)).data
    x2 = x.copy()
    x2[:, 4:] = rng.standard_normal((1, 2, 8))
    y2 = mha(Tensor(x2), mask=causal_mask(6)).data
    np.testing.assert_array_equal(y[:, :4], y2[:, :4])
    assert not np.allclose(y[:, 4:], y2[:, 4:])


def test_dropout_follows_training_mode():
    rng = np.random.default_rng(4)
    block = Block(8, 2, rng=rng, dropout=0.5)
    x = Tensor(rng.standard_normal((2, 4, 8)))
    a, b = block(x).data, block(x).data
    assert not np.allclose(a, b), "training mode: two calls draw different dropout masks"
    block.eval()
    np.testing.assert_array_equal(block(x).data, block(x).data)
    with pytest.raises(ConfigError):
        Block(8, 2, rng=None, dropout=0.1)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_block_gradients(norm):
    rng = np.random.default_rng(5)
    block = Block(4, 2, n_inner=6, rng=rng, norm=norm).to(np.float64)
    x = Tensor(rng.standard_normal((1, 3, 4)), requires_grad=True)
    mask = causal_mask(3)
    assert gradcheck(lambda t: block(t, mask=mask), x, rng=rng)
    params = block.parameters()
    assert gradcheck(lambda w: block(x, mask=mask), params[2], rng=rng)  # q_proj.weight


def test_block_equivalences_with_silent_sublayers():
    """With the sublayers' output projections zeroed, a pre-LN block is the identity and a
    post-LN block is LN2(LN1(x)): the residual stream is untouched in one, normalised in the other."""
    rng = np.random.default_rng(6)
    x = Tensor(rng.standard_normal((2, 4, 8)) * 3 + 1)
    for norm in ("pre", "post"):
        block = Block(8, 2, rng=rng, norm=norm, cross_attention=True).to(np.float64)
        for lin in (block.attn.out_proj, block.cross_attn.out_proj, block.mlp.fc2):
            lin.weight.data[...] = 0
            lin.bias.data[...] = 0
        enc = Tensor(rng.standard_normal((2, 3, 8)))
        y = block(x, mask=causal_mask(4), enc=enc)
        if norm == "pre":
            np.testing.assert_array_equal(y.data, x.data)
        else:
            want = block.ln2(block.ln_cross(block.ln1(x)))
            np.testing.assert_allclose(y.data, want.data, rtol=1e-12)


def test_block_layout_and_errors():
    rng = np.random.default_rng(7)
    block = Block(8, 2, rng=rng)
    assert block.mlp.fc1.out_features == 32
    assert [n for n, _ in block.named_children()] == ["ln1", "attn", "ln2", "mlp"]
    dec = Block(8, 2, rng=rng, cross_attention=True)
    assert [n for n, _ in dec.named_children()] == ["ln1", "attn", "ln_cross", "cross_attn", "ln2", "mlp"]
    x = Tensor(rng.standard_normal((1, 2, 8)))
    with pytest.raises(ShapeError, match="enc"):
        dec(x)
    with pytest.raises(ShapeError, match="cross_attention"):
        block(x, enc=x)
    with pytest.raises(ConfigError):
        Block(8, 2, rng=rng, norm="middle")
    with pytest.raises(ConfigError):
        FeedForward(8, 16, rng=rng, activation="swish")
    relu = FeedForward(8, 16, rng=rng, activation="relu")
    assert relu(x).shape == (1, 2, 8)


# ---- positions and embeddings ---------------------------------------------------------------------

def test_sinusoidal_dot_products_depend_only_on_the_offset():
    pe = sinusoidal_positions(40, 32)
    for k in (1, 5):
        dots = np.einsum("tc,tc->t", pe[:-k], pe[k:])
        np.testing.assert_allclose(dots, dots[0], rtol=1e-9)
    assert sinusoidal_positions(3, 5).shape == (3, 5)


def test_relative_position_bias():
    rng = np.random.default_rng(8)
    rpb = RelativePositionBias(3, rng=rng, bidirectional=True)
    bias = rpb(4, 6)
    assert bias.shape == (1, 3, 4, 6)
    table = rpb.relative_attention_bias.weight.data                      # (32, H)
    buckets = relative_position_bucket(np.arange(6)[None, :] - np.arange(4)[:, None], True)
    np.testing.assert_array_equal(bias.data[0], table[buckets].transpose(2, 0, 1))
    g = rng.standard_normal(bias.shape)
    bias.backward(g)
    want = np.zeros_like(table)
    np.add.at(want, buckets, g[0].transpose(1, 2, 0))
    np.testing.assert_allclose(rpb.relative_attention_bias.weight.grad, want, rtol=1e-6)
    dec = RelativePositionBias(2, rng=rng, bidirectional=False)(3)
    assert np.all(dec.data[0, :, 0, 1:] == dec.data[0, :, 0, 1:2])      # every future key: bucket 0
    # T5 attention: scale=False with the bias
    mha = MultiHeadAttention(6, 3, rng=rng, scale=False, bias=False)
    assert mha(Tensor(rng.standard_normal((2, 4, 6))), bias=RelativePositionBias(3, rng=rng)(4)).shape == (2, 4, 6)


def test_learned_positions_and_segments():
    rng = np.random.default_rng(9)
    wpe = LearnedPositionEmbedding(8, 4, rng=rng)
    np.testing.assert_array_equal(wpe(5).data, wpe.weight.data[:5])
    np.testing.assert_array_equal(wpe(np.array([[0, 7]])).data, wpe.weight.data[[[0, 7]]])
    with pytest.raises(ShapeError, match="9"):
        wpe(9)
    with pytest.raises(ShapeError):
        wpe(np.array([8]))
    seg = SegmentEmbedding(2, 4, rng=rng)
    assert seg(np.array([[0, 1, 1]])).shape == (1, 3, 4)
    with pytest.raises(ShapeError, match="segment id 2"):
        seg(np.array([[0, 2]]))
    with pytest.raises(ShapeError, match="exceeds"):
        embed_inputs(np.zeros((1, 9), int), Tensor(np.ones((3, 4))), wpe.weight)
