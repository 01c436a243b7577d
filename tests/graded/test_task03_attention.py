"""Graded tests of Task 3.1 (scaled dot-product attention with masks) and Task 3.2 (multi-head:
split and merge heads, so that attending on every head at once is the paper's Concat(head₁, …, head_H)).

Every expected value is computed here directly in NumPy, with float64 inputs. The module that runs
the heads (``MultiHeadAttention``: projections, queries from x and keys/values from the encoder in
cross-attention) is library code, tested in tests/models/test_blocks.py.
"""
import math

import numpy as np
import pytest

from autograd import Tensor, gradcheck
from minilm.blocks import causal_mask, padding_mask

ATT = "task03_transformer.attention"
HEADS = "task03_transformer.heads"


def _softmax_masked(s, mask):
    """Row softmax of s over the last axis where mask allows; rows with no allowed key are 0."""
    s = np.where(mask, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(mask, np.exp(s - m), 0.0)
    z = e.sum(axis=-1, keepdims=True)
    return np.divide(e, z, out=np.zeros_like(e), where=z > 0)


def _reference(q, k, v, mask=None, bias=None, scale=True):
    s = q @ np.swapaxes(k, -1, -2)
    if scale:
        s = s / math.sqrt(q.shape[-1])
    if bias is not None:
        s = s + bias
    mask = np.ones(s.shape, bool) if mask is None else np.broadcast_to(mask, s.shape)
    attn = _softmax_masked(s, mask)
    return attn @ v, attn


def _scale_hint(attn, q, k, v, mask=None, bias=None):
    """A sentence naming a wrong scaling of the scores, or "" when none of the usual ones fits."""
    d = q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2)
    for scores, what in ((s / d, f"divided by d = {d}, not by √d = {math.sqrt(d):g}"),
                         (s, "not scaled at all: divide by √d"),
                         (s * math.sqrt(d), "multiplied by √d: divide instead")):
        if bias is not None:
            scores = scores + bias
        m = np.ones(scores.shape, bool) if mask is None else np.broadcast_to(mask, scores.shape)
        if np.shape(attn) == scores.shape and np.allclose(attn, _softmax_masked(scores, m), atol=1e-9):
            return f"your attention weights are softmax of scores {what}"
    return ""


def _qkv(rng, B=2, H=3, Tq=4, Tk=5, d=8, requires_grad=False):
    shapes = [(B, H, Tq, d), (B, H, Tk, d), (B, H, Tk, d)]
    return [Tensor(rng.standard_normal(s), requires_grad=requires_grad) for s in shapes]


# ---- Task 3.1 -------------------------------------------------------------------------------------

@pytest.mark.task3_1
@pytest.mark.points(2)
def test_attention_matches_the_formula(impl):
    attention = impl(ATT).scaled_dot_product_attention
    rng = np.random.default_rng(0)
    q, k, v = _qkv(rng, d=16)                      # d = 16: a missing 1/√d changes every weight
    out, attn = attention(q, k, v)
    want_out, want_attn = _reference(q.data, k.data, v.data)
    assert out.shape == (2, 3, 4, 16) and attn.shape == (2, 3, 4, 5), \
        (f"q (2, 3, 4, 16), k and v (2, 3, 5, 16): expected out (2, 3, 4, 16) and attn (2, 3, 4, 5), "
         f"got {out.shape} and {attn.shape}")
    hint = _scale_hint(attn.data, q.data, k.data, v.data)
    if hint:
        pytest.fail(f"scaled_dot_product_attention: {hint}")
    np.testing.assert_allclose(attn.data, want_attn, rtol=1e-7, atol=1e-10,
                               err_msg="attention weights differ from softmax(q kᵀ / √d) over the keys, on a "
                                       "(2, 3, 4, 16) query and (2, 3, 5, 16) keys")
    np.testing.assert_allclose(out.data, want_out, rtol=1e-7, atol=1e-10,
                               err_msg="the weights are right but out differs from attn @ v")
    np.testing.assert_allclose(attn.data.sum(-1), 1.0, rtol=1e-9, err_msg="rows must sum to 1 (softmax over keys)")


@pytest.mark.task3_1
@pytest.mark.points(2)
def test_causal_mask_hides_the_future(impl):
    attention = impl(ATT).scaled_dot_product_attention
    rng = np.random.default_rng(1)
    T = 6
    q, k, v = _qkv(rng, Tq=T, Tk=T)
    mask = causal_mask(T)
    out, attn = attention(q, k, v, mask=mask)
    upper = ~np.tril(np.ones((T, T), bool))
    assert np.all(attn.data[..., upper] == 0), \
        "with causal_mask a query attends to a later key (future leak): is the mask flipped, or ignored?"
    want_out, want_attn = _reference(q.data, k.data, v.data, mask)
    hint = _scale_hint(attn.data, q.data, k.data, v.data, mask)
    np.testing.assert_allclose(attn.data, want_attn, rtol=1e-7, atol=1e-12,
                               err_msg="with causal_mask the weights differ from softmax(q kᵀ / √d) over the "
                                       "allowed keys" + (f": {hint}" if hint else ""))
    np.testing.assert_allclose(out.data, want_out, rtol=1e-7, atol=1e-12,
                               err_msg="with causal_mask the weights are right but out differs from attn @ v")
    # changing the last key/value may only change the output of the last query
    k2, v2 = k.data.copy(), v.data.copy()
    k2[..., -1, :] += 5.0
    v2[..., -1, :] -= 5.0
    out2, _ = attention(q, Tensor(k2), Tensor(v2), mask=mask)
    np.testing.assert_array_equal(out2.data[..., :-1, :], out.data[..., :-1, :],
                                  err_msg="changing the last key/value changed an earlier query's output: a masked "
                                          "key must get weight exactly 0 (not e^-1e9), so it cannot leak")


@pytest.mark.task3_1
@pytest.mark.points(2)
def test_padding_mask_removes_pad_keys_not_pad_queries(impl):
    attention = impl(ATT).scaled_dot_product_attention
    rng = np.random.default_rng(2)
    T = 5
    q, k, v = _qkv(rng, B=2, Tq=T, Tk=T)
    lengths = [5, 3]
    am = np.array([[1] * n + [0] * (T - n) for n in lengths])     # (B, T) 1 = token, 0 = pad
    mask = padding_mask(am)                                        # (B, 1, 1, T): on the keys
    out, attn = attention(q, k, v, mask=mask)
    assert np.all(attn.data[1, :, :, 3:] == 0), \
        "a query attends to a padding key: with padding_mask, keys 3 and 4 of example 1 must get weight 0"
    np.testing.assert_allclose(attn.data.sum(-1), 1.0, rtol=1e-9,
                               err_msg="every query (pad queries too) must still attend to the real keys")
    want_out, want_attn = _reference(q.data, k.data, v.data, mask)
    hint = _scale_hint(attn.data, q.data, k.data, v.data, mask)
    np.testing.assert_allclose(attn.data, want_attn, rtol=1e-7, atol=1e-12,
                               err_msg="with a (B, 1, 1, T) padding mask the weights differ from the softmax over "
                                       "the real keys" + (f": {hint}" if hint else ""))
    np.testing.assert_allclose(out.data, want_out, rtol=1e-7, atol=1e-12,
                               err_msg="with a padding mask the weights are right but out differs from attn @ v")


@pytest.mark.task3_1
@pytest.mark.points(2)
def test_fully_masked_row_gives_zeros_not_nan(impl):
    attention = impl(ATT).scaled_dot_product_attention
    rng = np.random.default_rng(3)
    q, k, v = _qkv(rng, B=2, H=2, Tq=4, Tk=3, requires_grad=True)
    mask = np.ones((2, 1, 4, 3), bool)
    mask[0, :, 2, :] = False                  # query 2 of example 0 may see nothing
    mask[1, :, 0, 1:] = False                 # query 0 of example 1 sees key 0 only
    out, attn = attention(q, k, v, mask=mask)
    assert np.isfinite(out.data).all() and np.isfinite(attn.data).all(), "NaN/inf in attention"
    assert np.all(attn.data[0, :, 2] == 0), "a fully masked row must get weights 0 (not uniform, not NaN)"
    assert np.all(out.data[0, :, 2] == 0), "a fully masked row must output zeros"
    np.testing.assert_allclose(attn.data[1, :, 0], [[1, 0, 0]] * 2, atol=1e-12,
                               err_msg="a query that may see only key 0 must give it weight 1 and the others 0")
    want_out, want_attn = _reference(q.data, k.data, v.data, mask)
    hint = _scale_hint(attn.data, q.data, k.data, v.data, mask)
    np.testing.assert_allclose(out.data, want_out, rtol=1e-7, atol=1e-12,
                               err_msg="with one fully masked row, the other rows' output differs from "
                                       "softmax(q kᵀ / √d) @ v over the allowed keys" + (f": {hint}" if hint else ""))
    out.backward(rng.standard_normal(out.shape))
    for name, t in (("q", q), ("k", k), ("v", v)):
        assert t.grad is not None and np.isfinite(t.grad).all(), f"gradient of {name} has NaN/inf"
    assert np.all(q.grad[0, :, 2] == 0), "a query that sees nothing must get no gradient"


@pytest.mark.task3_1
@pytest.mark.points(1)
def test_scale_false_and_additive_bias(impl):
    attention = impl(ATT).scaled_dot_product_attention
    rng = np.random.default_rng(4)
    q, k, v = _qkv(rng, d=4)
    bias = rng.standard_normal((1, 3, 4, 5))  # (1, H, Tq, Tk), as T5's relative bias
    out, attn = attention(q, k, v, bias=Tensor(bias), scale=False)
    want_out, want_attn = _reference(q.data, k.data, v.data, bias=bias, scale=False)
    if np.allclose(attn.data, _reference(q.data, k.data, v.data, bias=bias, scale=True)[1], atol=1e-9):
        pytest.fail("scale=False still divided the scores by √d: with scale=False the scores are q kᵀ + bias")
    if np.allclose(attn.data, _reference(q.data, k.data, v.data, scale=False)[1], atol=1e-9):
        pytest.fail("the additive bias (1, H, Tq, Tk) was ignored: add it to the scores before the softmax")
    np.testing.assert_allclose(attn.data, want_attn, rtol=1e-7, atol=1e-12,
                               err_msg="with scale=False and a bias the weights should be softmax(q kᵀ + bias)")
    np.testing.assert_allclose(out.data, want_out, rtol=1e-7, atol=1e-12,
                               err_msg=("with scale=False and a bias the weights are right but out differs "
                                        "from attn @ v"))


@pytest.mark.task3_1
@pytest.mark.points(1)
def test_attention_gradients_match_finite_differences(impl):
    attention = impl(ATT).scaled_dot_product_attention
    rng = np.random.default_rng(5)
    q, k, v = _qkv(rng, B=1, H=2, Tq=3, Tk=3, d=4, requires_grad=True)
    mask = causal_mask(3)
    assert gradcheck(lambda a, b, c: attention(a, b, c, mask=mask)[0], q, k, v, rng=rng), \
        "the gradients of q, k, v through attention with a causal mask differ from finite differences"


# ---- Task 3.2 -------------------------------------------------------------------------------------

@pytest.mark.task3_2
@pytest.mark.points(2)
def test_split_heads_groups_features_by_head(impl):
    m = impl(HEADS)
    rng = np.random.default_rng(6)
    B, T, H, d = 2, 5, 3, 4
    x = rng.standard_normal((B, T, H * d))
    out = m.split_heads(Tensor(x), H)
    assert out.shape == (B, H, T, d), \
        f"split_heads((2, 5, 12), H=3) should be (B, H, T, d) = (2, 3, 5, 4), got {out.shape}"
    for h in range(H):
        np.testing.assert_array_equal(out.data[:, h], x[:, :, h * d:(h + 1) * d],
                                      err_msg=f"head {h} must hold features {h * d}..{(h + 1) * d - 1} "
                                              "of every position (reshape to (B, T, H, d), then transpose)")


@pytest.mark.task3_2
@pytest.mark.points(2)
def test_merge_heads_inverts_split_heads(impl):
    m = impl(HEADS)
    rng = np.random.default_rng(7)
    B, H, T, d = 2, 3, 5, 4
    heads = rng.standard_normal((B, H, T, d))
    merged = m.merge_heads(Tensor(heads))
    assert merged.shape == (B, T, H * d), \
        f"merge_heads((2, 3, 5, 4)) should be (B, T, H·d) = (2, 5, 12), got {merged.shape}"
    for h in range(H):
        np.testing.assert_array_equal(merged.data[:, :, h * d:(h + 1) * d], heads[:, h],
                                      err_msg=f"merge_heads: features {h * d}..{(h + 1) * d - 1} must hold head {h} "
                                              "(transpose to (B, T, H, d) before the reshape)")
    x = Tensor(rng.standard_normal((B, T, H * d)), requires_grad=True)
    back = m.merge_heads(m.split_heads(x, H))
    np.testing.assert_array_equal(back.data, x.data, err_msg="merge_heads(split_heads(x)) must give x back")
    assert back.requires_grad, \
        "merge_heads(split_heads(x)) lost the graph to x: use the Tensor's reshape and transpose, not .data or NumPy"
    g = rng.standard_normal(back.shape)
    back.backward(g)
    np.testing.assert_array_equal(x.grad, g, err_msg="the gradient through merge_heads(split_heads(x)) must be the "
                                                     "upstream gradient unchanged (use Tensor ops, not .data)")


def _concat_of_heads(q, k, v, H):
    """Concat(head₁, …, head_H), headₕ = Attention(Qₕ, Kₕ, Vₕ) on the feature slices h·d:(h+1)·d (§3.2.2)."""
    d = q.shape[-1] // H
    cols = [slice(h * d, (h + 1) * d) for h in range(H)]
    return np.concatenate([_reference(q[..., c], k[..., c], v[..., c])[0] for c in cols], axis=-1)


@pytest.mark.task3_2
@pytest.mark.points(1)
@pytest.mark.parametrize("Tq, Tk", [(5, 5), (3, 6)], ids=["self", "cross"])
def test_attending_on_split_heads_is_the_concat_of_heads(impl, Tq, Tk):
    """split_heads → one attention over all heads → merge_heads equals H separate attentions on feature
    slices, concatenated. Cross-attention: queries (Tq = 3) and keys/values (Tk = 6) differ in length."""
    m = impl(HEADS)
    rng = np.random.default_rng(8)
    B, H, d = 2, 3, 4
    q = rng.standard_normal((B, Tq, H * d))              # the projected queries X W_Q
    k, v = rng.standard_normal((2, B, Tk, H * d))        # the projected keys S W_K and values S W_V
    qh, kh, vh = (m.split_heads(Tensor(a), H) for a in (q, k, v))
    assert (qh.shape, kh.shape) == ((B, H, Tq, d), (B, H, Tk, d)), \
        (f"split_heads of queries (2, {Tq}, 12) and keys (2, {Tk}, 12) with 3 heads should give (2, 3, {Tq}, 4) and "
         f"(2, 3, {Tk}, 4), got {qh.shape} and {kh.shape}: each sequence keeps its own length")
    out, _ = _reference(qh.data, kh.data, vh.data)       # (B, H, Tq, d): every head attends at once
    y = m.merge_heads(Tensor(out))
    assert y.shape == (B, Tq, H * d), f"merge_heads of (2, 3, {Tq}, 4) should be (2, {Tq}, 12), got {y.shape}"
    np.testing.assert_allclose(y.data, _concat_of_heads(q, k, v, H), rtol=1e-10, atol=1e-12,
                               err_msg="merge_heads(attention(split_heads(q), split_heads(k), split_heads(v))) must "
                                       "be Concat(head_1, head_2, head_3) with head_h = attention on features "
                                       "4h..4h+3 of q, k and v: head h must own the same feature slice in all "
                                       "three and come back to that slice")
