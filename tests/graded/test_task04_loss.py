"""Graded tests of Task 4.1: the shifted (teacher-forced) causal LM loss and the tied output layer."""
import numpy as np
import pytest

from autograd import Tensor
from autograd.nn import Parameter

MOD = "task04_gpt.loss"


def _log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _expected_loss(logits, targets, ignore=-100):
    """mean over (b, t < T-1) with targets[b, t+1] != ignore of −log p_t(targets[b, t+1])."""
    logp = _log_softmax(logits)
    B, T, _ = logits.shape
    terms = [-logp[b, t, targets[b, t + 1]] for b in range(B) for t in range(T - 1)
             if targets[b, t + 1] != ignore]
    return float(np.mean(terms)) if terms else 0.0


@pytest.mark.task4_1
@pytest.mark.points(2)
def test_loss_predicts_the_next_token(impl):
    causal_lm_loss = impl(MOD).causal_lm_loss
    rng = np.random.default_rng(0)
    B, T, V = 3, 6, 7
    logits = rng.standard_normal((B, T, V)) * 2
    ids = rng.integers(0, V, size=(B, T))
    loss = causal_lm_loss(Tensor(logits), ids)
    assert loss.shape == () or loss.size == 1, \
        f"causal_lm_loss should return a scalar Tensor (the mean over predicted tokens), got shape {loss.shape}"
    np.testing.assert_allclose(float(loss.data), _expected_loss(logits, ids), rtol=1e-9,
                               err_msg="the logits at position t must be scored against the token at t+1")


@pytest.mark.task4_1
@pytest.mark.points(1)
def test_ignored_targets_and_short_sequences(impl):
    causal_lm_loss = impl(MOD).causal_lm_loss
    rng = np.random.default_rng(1)
    B, T, V = 2, 5, 6
    logits = rng.standard_normal((B, T, V))
    targets = rng.integers(0, V, size=(B, T))
    targets[0, 2] = -100                    # padding / a prompt: not predicted
    targets[1, 3:] = -100
    got = float(causal_lm_loss(Tensor(logits), targets).data)
    np.testing.assert_allclose(got, _expected_loss(logits, targets), rtol=1e-9,
        err_msg="with targets -100 the mean must be over the predicted (non-ignored) next tokens only")
    one = float(causal_lm_loss(Tensor(logits[:, :1]), targets[:, :1]).data)
    assert one == 0.0, "a length-1 sequence has nothing to predict: the loss is 0 (not NaN)"
    assert float(causal_lm_loss(Tensor(logits), np.full((B, T), -100)).data) == 0.0, \
        "when every target is -100 the loss must be 0 (nothing to predict), not NaN"


@pytest.mark.task4_1
@pytest.mark.points(1)
def test_last_position_gets_no_gradient(impl):
    causal_lm_loss = impl(MOD).causal_lm_loss
    rng = np.random.default_rng(2)
    logits = Tensor(rng.standard_normal((2, 4, 5)), requires_grad=True)
    ids = rng.integers(0, 5, size=(2, 4))
    causal_lm_loss(logits, ids).backward()
    assert np.all(logits.grad[:, -1] == 0), "the last position has no next token: no loss, no gradient"
    assert np.all(np.abs(logits.grad[:, :-1]).sum(-1) > 0), \
        "every position but the last predicts a next token, so each must get a non-zero gradient"


@pytest.mark.task4_1
@pytest.mark.points(2)
def test_tied_output_layer_uses_the_token_embedding(impl):
    tied_lm_logits = impl(MOD).tied_lm_logits
    rng = np.random.default_rng(3)
    V, C = 7, 4
    wte = Parameter(rng.standard_normal((V, C)))
    h = Tensor(rng.standard_normal((2, 3, C)), requires_grad=True)
    logits = tied_lm_logits(h, wte)
    assert logits.shape == (2, 3, V), \
        f"tied_lm_logits(h (2, 3, 4), wte (7, 4)) should be (2, 3, 7), got {logits.shape}"
    np.testing.assert_allclose(logits.data, h.data @ wte.data.T, rtol=1e-12, err_msg="logits = h · wteᵀ, no bias")
    g = rng.standard_normal(logits.shape)
    logits.backward(g)
    assert wte.grad is not None, "the output layer must use wte itself (tied), so wte gets its gradient"
    np.testing.assert_allclose(wte.grad, np.einsum("btv,btc->vc", g, h.data), rtol=1e-10,
        err_msg=("wte.grad should be Σ_bt g[b, t]ᵀ h[b, t] (the gradient of h · wteᵀ): use wte in a Tensor "
                 "op, not wte.data"))
    np.testing.assert_allclose(h.grad, g @ wte.data, rtol=1e-10,
        err_msg="h.grad should be g @ wte (the gradient of h · wteᵀ)")
