"""Graded tests of Task 5.4: ``classify_logits`` on h[CLS] (not the pooler) and ``pool`` with
"cls" / "mean" / "max" that respects padding.

The hidden states here are random arrays shaped like a BERT output, built so that every wrong
choice (the pooler, the last position, a mean over pads, a pad winning the max) gives a different
number.
"""
import numpy as np
import pytest

from autograd import Tensor

MOD = "task05_bert.classify"


def _outputs(seed, B=4, T=7, C=6):
    rng = np.random.default_rng(seed)
    hidden = rng.normal(size=(B, T, C))
    pooled = np.tanh(rng.normal(size=(B, C)))  # a different vector, as a real pooler gives
    return {"last_hidden_state": Tensor(hidden), "pooler_output": Tensor(pooled)}, hidden, pooled


def _linear(seed, K=3, C=6):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(K, C)), rng.normal(size=K)


def _padded(seed, B=5, T=8, C=4, pad_value=None):
    """Hidden states (B, T, C) and a right-padded mask with lengths 1..T (one row has no padding)."""
    rng = np.random.default_rng(seed)
    hidden = rng.normal(size=(B, T, C))
    lengths = np.array([T, 1, 3, 5, T - 1])[:B]
    mask = np.arange(T)[None, :] < lengths[:, None]                 # (B, T)
    if pad_value is not None:
        hidden[~mask] = pad_value
    return hidden, mask


# ---- classify_logits ------------------------------------------------------------------------------

@pytest.mark.task5_4
@pytest.mark.points(2)
def test_logits_come_from_h_cls_not_the_pooler(impl):
    classify_logits = impl(MOD).classify_logits
    outputs, hidden, pooled = _outputs(0)
    W, b = _linear(1)
    logits = classify_logits(outputs, Tensor(W), Tensor(b))
    assert isinstance(logits, Tensor) and logits.shape == (4, 3), \
        (f"classify_logits should return a Tensor of (B, num_labels) = (4, 3), got {type(logits).__name__} "
         f"{getattr(logits, 'shape', None)}")
    expected = hidden[:, 0] @ W.T + b
    if np.allclose(logits.data, pooled @ W.T + b):
        pytest.fail("the logits were computed from pooler_output: BERT fine-tuning here reads "
                    "h[CLS] = last_hidden_state[:, 0] (the pooler was trained for NSP only)")
    if np.allclose(logits.data, hidden[:, -1] @ W.T + b):
        pytest.fail("the logits came from the last position (GPT's choice): BERT's [CLS] is position 0")
    np.testing.assert_allclose(logits.data, expected, rtol=1e-10, atol=1e-12,
                               err_msg="expected h[CLS] · Wᵀ + b with h[CLS] = last_hidden_state[:, 0]")


@pytest.mark.task5_4
@pytest.mark.points(1)
def test_logits_ignore_the_other_positions(impl):
    classify_logits = impl(MOD).classify_logits
    outputs, hidden, _ = _outputs(2)
    W, b = _linear(3)
    before = classify_logits(outputs, Tensor(W), Tensor(b)).data
    changed = hidden.copy()
    changed[:, 1:] += 10.0
    outputs2 = {"last_hidden_state": Tensor(changed), "pooler_output": outputs["pooler_output"]}
    after = classify_logits(outputs2, Tensor(W), Tensor(b)).data
    np.testing.assert_allclose(after, before, err_msg="the logits depend on positions other than [CLS]")


@pytest.mark.task5_4
@pytest.mark.points(1)
def test_classify_gradients_reach_weight_bias_and_cls_only(impl):
    classify_logits = impl(MOD).classify_logits
    _, hidden, pooled = _outputs(4)
    W, b = _linear(5)
    h = Tensor(hidden, requires_grad=True)
    p = Tensor(pooled, requires_grad=True)
    Wt, bt = Tensor(W, requires_grad=True), Tensor(b, requires_grad=True)
    up = np.random.default_rng(6).normal(size=(4, 3))
    classify_logits({"last_hidden_state": h, "pooler_output": p}, Wt, bt).backward(up)
    assert h.grad is not None, "no gradient reached last_hidden_state"
    np.testing.assert_allclose(h.grad[:, 0], up @ W, rtol=1e-10,
        err_msg="the gradient of h[CLS] should be upstream @ W (use Tensor ops on last_hidden_state[:, 0])")
    assert np.all(h.grad[:, 1:] == 0.0), \
        "positions other than [CLS] must get gradient 0: the logits read position 0 only"
    assert p.grad is None or np.all(p.grad == 0.0), "a gradient flowed into pooler_output"
    np.testing.assert_allclose(Wt.grad, up.T @ hidden[:, 0], rtol=1e-10,
        err_msg="W.grad should be upstreamᵀ @ h[CLS]")
    np.testing.assert_allclose(bt.grad, up.sum(axis=0), rtol=1e-10,
        err_msg="b.grad should be the upstream gradient summed over the batch")


# ---- pool ---------------------------------------------------------------------------------------

@pytest.mark.task5_4
@pytest.mark.points(1)
def test_pool_cls_is_position_zero(impl):
    pool = impl(MOD).pool
    hidden, mask = _padded(7)
    out = pool(Tensor(hidden), mask, how="cls")
    assert out.shape == (5, 4), f"pool(how='cls') on (5, T, 4) should be (5, 4), got {out.shape}"
    np.testing.assert_array_equal(out.data, hidden[:, 0],
        err_msg="pool(how='cls') should return position 0 of every row")


@pytest.mark.task5_4
@pytest.mark.points(2)
def test_pool_mean_over_real_tokens_only(impl):
    pool = impl(MOD).pool
    hidden, mask = _padded(8, pad_value=7.0)
    out = pool(Tensor(hidden), mask, how="mean")
    expected = np.stack([hidden[b, mask[b]].mean(axis=0) for b in range(len(hidden))])
    if np.allclose(out.data, hidden.mean(axis=1)):
        pytest.fail("the mean included the padded positions")
    np.testing.assert_allclose(out.data, expected, rtol=1e-10, atol=1e-12,
                               err_msg="expected Σ m_t h_t / Σ m_t (the mean over real tokens)")
    # whatever the pads hold makes no difference
    other = hidden.copy()
    other[~mask] = -123.0
    np.testing.assert_allclose(pool(Tensor(other), mask, how="mean").data, expected, rtol=1e-10,
        err_msg="mean pooling changed when only the padded positions changed: the pads must be left out entirely")


@pytest.mark.task5_4
@pytest.mark.points(2)
def test_pool_max_never_picks_a_pad(impl):
    pool = impl(MOD).pool
    hidden, mask = _padded(9, pad_value=1e6)  # a pad would win any unmasked max
    out = pool(Tensor(hidden), mask, how="max")
    expected = np.stack([hidden[b, mask[b]].max(axis=0) for b in range(len(hidden))])
    assert np.all(out.data < 1e5), "max pooling returned a padded position's value"
    np.testing.assert_allclose(out.data, expected, rtol=1e-12,
        err_msg="max pooling should be the per-channel max over the real tokens only")
    # with very negative real tokens the max is still among them
    neg = hidden.copy()
    neg[mask] -= 50.0
    neg[~mask] = 0.0
    expected_neg = np.stack([neg[b, mask[b]].max(axis=0) for b in range(len(neg))])
    np.testing.assert_allclose(pool(Tensor(neg), mask, how="max").data, expected_neg, rtol=1e-12,
        err_msg=("with real tokens ≤ -50 and pads 0 the max must still come from the real tokens: set the "
                 "pads to −inf, not 0, before the max"))


@pytest.mark.task5_4
@pytest.mark.points(1)
def test_pool_gradients_are_zero_on_padding(impl):
    pool = impl(MOD).pool
    hidden, mask = _padded(10)
    up = np.random.default_rng(11).normal(size=(5, 4))
    for how in ("mean", "max"):
        h = Tensor(hidden, requires_grad=True)
        pool(h, mask, how=how).backward(up)
        assert h.grad is not None and np.all(np.isfinite(h.grad)), \
            f"{how} pooling: the gradient of the hidden states is missing or not finite"
        assert np.all(h.grad[~mask] == 0.0), f"{how} pooling sent a gradient to padded positions"
        # each channel's gradient sums to the upstream gradient (a mean or one arg-max per channel)
        np.testing.assert_allclose(h.grad.sum(axis=1), up, rtol=1e-9, atol=1e-12,
            err_msg=f"{how} pooling: each channel's gradient over the positions must sum to the upstream gradient")


@pytest.mark.task5_4
@pytest.mark.points(1)
def test_pool_all_padding_row_and_no_mask(impl):
    pool = impl(MOD).pool
    hidden, mask = _padded(12)
    mask[1] = False  # a row with no real token
    for how in ("mean", "max"):
        out = pool(Tensor(hidden), mask, how=how).data
        assert np.all(np.isfinite(out)), f"{how}: a row without real tokens gave NaN or inf"
        np.testing.assert_array_equal(out[1], 0.0,
            err_msg=f"{how} pooling: a row with no real token must give zeros")
    # no mask: every position is real
    np.testing.assert_allclose(pool(Tensor(hidden), None, how="mean").data, hidden.mean(axis=1), rtol=1e-12,
        err_msg="pool(mask=None, how='mean') should average over every position")
    np.testing.assert_allclose(pool(Tensor(hidden), None, how="max").data, hidden.max(axis=1), rtol=1e-12,
        err_msg="pool(mask=None, how='max') should take the max over every position")
