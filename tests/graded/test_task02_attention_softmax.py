"""Graded tests of Task 2.4: the fused scale + mask + softmax numba kernels for attention
(slots in exercises/task02_kernels/attention_softmax.py, reached through their wrappers)."""
import math

import numpy as np
import pytest

from tests.helpers import numeric_grad

MOD = "task02_kernels.attention_softmax"
R = np.random.default_rng(24)
B, H, TQ, TK = 2, 3, 4, 6
SCALE = 1 / math.sqrt(8)


def ref(scores, mask, scale):
    """Masked softmax of scale·scores over the last axis; rows with no allowed key are 0."""
    z = np.asarray(scores, np.float64) * scale
    mask = np.broadcast_to(mask, z.shape)
    out = np.zeros(z.shape)
    for idx in np.ndindex(z.shape[:-1]):
        keep = mask[idx]
        if keep.any():
            e = np.exp(z[idx][keep] - z[idx][keep].max())
            out[idx][keep] = e / e.sum()
    return out


def causal(tq, tk):
    return np.tril(np.ones((tq, tk), bool), k=tk - tq)


def padding(lengths, tk):
    return (np.arange(tk) < np.asarray(lengths)[:, None])[:, None, None, :]  # (B, 1, 1, Tk)


@pytest.mark.task2_4
@pytest.mark.points(3)
@pytest.mark.parametrize("kind", ["causal", "padding", "both"])
def test_forward_matches_reference(impl, kind):
    forward = impl(MOD).scaled_masked_softmax_forward
    s = R.standard_normal((B, H, TQ, TK)) * 3
    mask = {"causal": causal(TQ, TK), "padding": padding([TK, 3], TK),
            "both": causal(TQ, TK) & padding([5, 2], TK)}[kind]
    p = forward(s, mask, SCALE)
    assert p.shape == s.shape, \
        f"scaled_masked_softmax_forward on {s.shape} scores should keep that shape, got {p.shape}"
    np.testing.assert_allclose(p, ref(s, mask, SCALE), rtol=1e-12, atol=1e-15,
        err_msg=(f"scaled_masked_softmax_forward with a {kind} mask: expected the softmax of scale·scores "
                 "over the allowed keys of each row"))
    assert (p[~np.broadcast_to(mask, s.shape)] == 0).all(), "masked keys must get weight exactly 0"


@pytest.mark.task2_4
@pytest.mark.points(2)
def test_scale_is_applied_before_the_softmax(impl):
    forward = impl(MOD).scaled_masked_softmax_forward
    s = R.standard_normal((1, 2, 3, 5)) * 4
    for scale in (0.25, 2.0):
        np.testing.assert_allclose(forward(s, None, scale), ref(s, True, scale), rtol=1e-12, atol=1e-15,
            err_msg=(f"scale={scale}, no mask: expected softmax(scale·scores) — multiply the scores by scale "
                     "before the max and the exp"))


@pytest.mark.task2_4
@pytest.mark.points(3)
def test_fully_masked_row_is_zero_not_nan_or_uniform(impl):
    mod = impl(MOD)
    s = R.standard_normal((B, H, TQ, TK))
    mask = np.ones((B, 1, TQ, TK), bool)
    mask[1, 0, 2] = False  # batch 1, query 2: nothing to attend to
    mask[0, 0, 0] = False
    with np.errstate(all="ignore"):
        p = mod.scaled_masked_softmax_forward(s, mask, SCALE)
        g = mod.scaled_masked_softmax_backward(R.standard_normal(s.shape), p, SCALE)
    assert not np.isnan(p).any(), "a fully masked row gave NaN"
    assert (p[1, :, 2] == 0).all() and (p[0, :, 0] == 0).all(), "a fully masked row must be all zeros"
    assert not np.isnan(g).any() and (g[1, :, 2] == 0).all() and (g[0, :, 0] == 0).all(), \
        "scaled_masked_softmax_backward: a fully masked row (p all 0) must get gradient exactly 0, not NaN"
    np.testing.assert_allclose(p, ref(s, mask, SCALE), rtol=1e-12, atol=1e-15,
        err_msg="with two fully masked rows, the other rows differ from the masked softmax of scale·scores")


@pytest.mark.task2_4
@pytest.mark.points(2)
def test_huge_scores_and_float32(impl):
    forward = impl(MOD).scaled_masked_softmax_forward
    s = np.array([[[[1e4, 0.0, -1e4, 5e3]]]])
    mask = np.array([False, True, True, True])
    with np.errstate(all="ignore"):
        p = forward(s, mask, 1.0)
        p2 = forward(s, mask, 2.0)  # the max must be taken of the *scaled* scores: exp(1e4) overflows
    assert np.isfinite(p).all() and np.isfinite(p2).all(), \
        "scores up to 1e4 (scale 1 and 2) gave inf/NaN: subtract the row max of the *scaled* allowed scores before exp"
    np.testing.assert_allclose(p, [[[[0.0, 0.0, 0.0, 1.0]]]], atol=1e-12,
        err_msg="scores [1e4 (masked), 0, -1e4, 5e3] at scale 1: all the weight goes to 5e3, expected [0, 0, 0, 1]")
    np.testing.assert_allclose(p2, [[[[0.0, 0.0, 0.0, 1.0]]]], atol=1e-12,
        err_msg=("scores [1e4 (masked), 0, -1e4, 5e3] at scale 2: expected [0, 0, 0, 1] (a masked 1e4 must "
                 "not set the max)"))
    s32 = (R.standard_normal((B, H, TQ, TK)) * 3).astype(np.float32)
    p32 = forward(s32, causal(TQ, TK), SCALE)
    assert p32.dtype == np.float32, f"float32 scores must give float32 weights, got {p32.dtype}"
    np.testing.assert_allclose(p32, ref(s32, causal(TQ, TK), SCALE), rtol=1e-5, atol=1e-7,
        err_msg="float32 scores with a causal mask: values differ from the reference softmax")


@pytest.mark.task2_4
@pytest.mark.points(2)
def test_forward_kernel_writes_every_entry(impl):
    mod = impl(MOD)
    s = R.standard_normal((B, H, TQ, TK))
    mask = np.broadcast_to(causal(TQ, TK) & padding([TK, 1], TK), s.shape)
    mask = mask.copy()
    mask[0, 1, 3] = False
    out = np.full(s.shape, np.nan)  # uninitialised memory may hold anything
    mod._forward_kernel(out, s, mask, SCALE)
    np.testing.assert_allclose(out, ref(s, mask, SCALE), rtol=1e-12, atol=1e-15,
        err_msg=("_forward_kernel must write every entry of out (masked entries 0, fully masked rows 0): "
                 "out started as NaN"))


@pytest.mark.task2_4
@pytest.mark.points(3)
@pytest.mark.parametrize("kind", ["causal", "padding_with_empty_rows"])
def test_backward_against_central_differences(impl, kind):
    mod = impl(MOD)
    s = R.standard_normal((B, H, TQ, TK))
    mask = causal(TQ, TK) if kind == "causal" else padding([TK, 0], TK)  # batch 1 sees no key
    g = R.standard_normal(s.shape)
    p = ref(s, mask, SCALE)
    got = mod.scaled_masked_softmax_backward(g, p, SCALE)
    want = numeric_grad(lambda z: ref(z, mask, SCALE), s, g)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8,
        err_msg=(f"scaled_masked_softmax_backward with a {kind} mask: expected scale·p·(g − Σ g·p) per row, "
                 "0 on masked keys and empty rows"))
