"""Graded tests of Task 12.1: GPT-1's fine-tuning loss L3 = L2 + λ·L1 (``gpt_finetune_loss``) and the
sequence vector of a decoder under right padding (``sequence_representation``).

The hidden states are random, with rows of different lengths, and the padded positions hold huge
values: the first token, position T − 1, a mean over the pads and a pad winning the max all give
different numbers from the right answer.
"""
import numpy as np
import pytest

from autograd import Tensor

MOD = "task12_beyond.aux_lm"


def _ce(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(labels)), labels].mean()


def _task(seed, B=6, K=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(B, K)), rng.integers(0, K, size=B)


@pytest.mark.task12_1
@pytest.mark.points(2)
def test_loss_is_task_loss_plus_lambda_times_lm(impl):
    gpt_finetune_loss = impl(MOD).gpt_finetune_loss
    logits, labels = _task(0)
    for lam in (0.0, 0.5, 1.0, 2.5):
        lm = Tensor(np.array(1.7))
        out = gpt_finetune_loss(Tensor(logits), labels, lm, lam)
        assert np.allclose(float(np.asarray(out.data)), _ce(logits, labels) + lam * 1.7, atol=1e-6), \
            f"aux_weight={lam}: expected CE + λ·LM"


@pytest.mark.task12_1
@pytest.mark.points(1)
def test_lambda_zero_is_plain_finetuning(impl):
    gpt_finetune_loss = impl(MOD).gpt_finetune_loss
    logits, labels = _task(1)
    out = gpt_finetune_loss(Tensor(logits), labels, Tensor(np.array(123.0)), 0.0)
    assert np.allclose(float(np.asarray(out.data)), _ce(logits, labels), atol=1e-6), \
        (f"with λ = 0 the loss should be the task cross-entropy alone ({_ce(logits, labels):.6f}), got {float(np.asarray(out.data)):.6f}: "
         "L = L_task + λ·L_LM")


@pytest.mark.task12_1
@pytest.mark.points(2)
def test_gradients_reach_both_losses(impl):
    gpt_finetune_loss = impl(MOD).gpt_finetune_loss
    logits, labels = _task(2)
    lt = Tensor(logits, requires_grad=True)
    lm = Tensor(np.array(0.9), requires_grad=True)
    gpt_finetune_loss(lt, labels, lm, 0.7).backward()
    assert np.allclose(np.asarray(lm.grad), 0.7), "the LM loss's gradient must be λ"
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    expected = p.copy()
    expected[np.arange(len(labels)), labels] -= 1
    assert np.allclose(lt.grad, expected / len(labels), atol=1e-6), "the logits' gradient is the mean CE's"


def _padded(seed, B=5, T=8, C=4, pad_value=1e3):
    """(B, T, C) states and a right-padded mask with lengths T, 1, 3, 5, T−1."""
    rng = np.random.default_rng(seed)
    hidden = rng.normal(size=(B, T, C))
    lengths = np.array([T, 1, 3, 5, T - 1])[:B]
    mask = (np.arange(T)[None, :] < lengths[:, None]).astype(np.int64)
    hidden[mask == 0] = pad_value
    return hidden, mask, lengths


@pytest.mark.task12_1
@pytest.mark.points(2)
def test_last_is_the_last_real_token(impl):
    sequence_representation = impl(MOD).sequence_representation
    hidden, mask, lengths = _padded(3)
    out = sequence_representation(Tensor(hidden), mask, "last")
    expected = hidden[np.arange(len(lengths)), lengths - 1]
    assert out.shape == expected.shape, \
        f"sequence_representation('last') on (5, 8, 4) should be (5, 4), got {out.shape}"
    assert np.allclose(out.data, expected), "'last' must take h[b, n_b − 1], the last real token of each row"
    assert not np.allclose(out.data, hidden[:, 0]) and not np.allclose(out.data, hidden[:, -1]), \
        "'last' must be neither position 0 nor the final (padded) position T − 1: take each row's last real token"


@pytest.mark.task12_1
@pytest.mark.points(1)
def test_last_is_the_default(impl):
    sequence_representation = impl(MOD).sequence_representation
    hidden, mask, lengths = _padded(4)
    out = sequence_representation(Tensor(hidden), mask)
    assert np.allclose(out.data, hidden[np.arange(len(lengths)), lengths - 1]), \
        "the default pooling should be 'last': h[b, n_b − 1], the last real token of each row"


@pytest.mark.task12_1
@pytest.mark.points(1)
def test_last_gradient_reaches_only_the_last_real_position(impl):
    sequence_representation = impl(MOD).sequence_representation
    hidden, mask, lengths = _padded(5)
    h = Tensor(hidden, requires_grad=True)
    g = np.random.default_rng(0).normal(size=(len(lengths), hidden.shape[2]))
    (sequence_representation(h, mask, "last") * Tensor(g)).sum().backward()
    expected = np.zeros_like(hidden)
    expected[np.arange(len(lengths)), lengths - 1] = g
    assert np.allclose(h.grad, expected), \
        "the gradient of 'last' must reach only h[b, n_b − 1] of each row (index with a Tensor op)"


@pytest.mark.task12_1
@pytest.mark.points(2)
def test_mean_ignores_padding(impl):
    sequence_representation = impl(MOD).sequence_representation
    hidden, mask, lengths = _padded(6)
    out = sequence_representation(Tensor(hidden), mask, "mean")
    expected = np.stack([hidden[b, :n].mean(axis=0) for b, n in enumerate(lengths)])
    assert np.allclose(out.data, expected, atol=1e-6), "the mean runs over the real tokens only"


@pytest.mark.task12_1
@pytest.mark.points(2)
def test_max_ignores_padding(impl):
    sequence_representation = impl(MOD).sequence_representation
    hidden, mask, lengths = _padded(7, pad_value=1e6)              # a pad would win any max
    out = sequence_representation(Tensor(hidden), mask, "max")
    expected = np.stack([hidden[b, :n].max(axis=0) for b, n in enumerate(lengths)])
    assert np.allclose(out.data, expected), "the max runs over the real tokens only"
    hidden, mask, lengths = _padded(8, pad_value=0.0)              # zero pads beside negative states
    hidden[mask == 1] = -np.abs(hidden[mask == 1]) - 1.0
    out = sequence_representation(Tensor(hidden), mask, "max")
    expected = np.stack([hidden[b, :n].max(axis=0) for b, n in enumerate(lengths)])
    assert np.allclose(out.data, expected), "filling the pads with 0 is not enough: states can be negative"
