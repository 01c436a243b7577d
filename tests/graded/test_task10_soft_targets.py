"""Graded tests of Task 10.1: Hinton's soft targets at temperature T, scaled by T², mixed with the
hard-label cross-entropy.

The reference numbers are computed here in NumPy from the definitions:
p = softmax(t/T), q = softmax(s/T), L_soft = T²·Σ p(log p − log q)/N, and ∂L_soft/∂s = T·(q − p)/N.
"""
import numpy as np
import pytest

from autograd import Tensor

MOD = "task10_distill.soft_targets"
TEMPERATURES = (1.0, 2.0, 4.0, 8.0, 16.0)


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _kl(p, q):
    return float((p * (np.log(p) - np.log(q))).sum() / len(p))


def _logits(seed, N=6, K=5, scale=3.0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, K)) * scale, rng.normal(size=(N, K)) * scale


def _grad(fn, s, *args):
    x = Tensor(s.copy(), requires_grad=True)
    loss = fn(x, *args)
    loss.backward()
    return float(loss.item()), x.grad


@pytest.mark.task10_1
@pytest.mark.points(2)
def test_soft_target_value_matches_the_definition(impl):
    soft_target_loss = impl(MOD).soft_target_loss
    s, t = _logits(0)
    for T in (1.0, 3.0, 7.0):
        p, q = _softmax(t / T), _softmax(s / T)
        got = soft_target_loss(Tensor(s), Tensor(t), T)
        assert isinstance(got, Tensor) and got.data.size == 1, \
            f"soft_target_loss should return a scalar Tensor, got {type(got).__name__} of size {np.size(getattr(got, 'data', got))}"
        value = float(got.item())
        if T > 1:
            if np.isclose(value, _kl(p, q)):
                pytest.fail(f"at T={T} the loss equals KL without the T² factor: multiply by T²")
            if np.isclose(value, T * T * _kl(_softmax(t), q)):
                pytest.fail(f"at T={T} the teacher was not softened: its target must be softmax(t/T), not softmax(t)")
        if np.isclose(value, T * T * _kl(q, p)):
            pytest.fail(f"at T={T} the loss is KL(student ‖ teacher): the direction is KL(p_teacher ‖ q_student) — "
                        "F.kl_div takes the student's log-probabilities first and the teacher's probabilities second")
        np.testing.assert_allclose(value, T * T * _kl(p, q), rtol=1e-6,
                                   err_msg=f"expected T²·KL(softmax(t/T) ‖ softmax(s/T)) averaged over rows, T={T}")


@pytest.mark.task10_1
@pytest.mark.points(2)
def test_soft_gradient_is_T_times_q_minus_p(impl):
    soft_target_loss = impl(MOD).soft_target_loss
    s, t = _logits(1)
    N = len(s)
    for T in TEMPERATURES:
        _, g = _grad(soft_target_loss, s, Tensor(t), T)
        assert g is not None, "no gradient reached the student logits"
        expected = T * (_softmax(s / T) - _softmax(t / T)) / N
        if T > 1 and np.allclose(g, expected / (T * T), rtol=1e-5, atol=1e-12):
            pytest.fail(f"at T={T} the gradient is (q − p)/(N·T): the T² factor is missing")
        np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-12,
                                   err_msg=f"∂L/∂s should be T·(q − p)/N at T={T}")


@pytest.mark.task10_1
@pytest.mark.points(2)
def test_soft_gradient_stays_level_as_T_grows(impl):
    """Hinton §2.1: without T² the soft gradients shrink as 1/T²; with it they stay level (near
    (s − t)/(N·K) once T is large, for zero-mean logits)."""
    soft_target_loss = impl(MOD).soft_target_loss
    s, t = _logits(2, N=8, K=6, scale=1.0)
    s -= s.mean(-1, keepdims=True)
    t -= t.mean(-1, keepdims=True)
    N, K = s.shape
    norms = []
    for T in TEMPERATURES[1:]:
        _, g = _grad(soft_target_loss, s, Tensor(t), T)
        norms.append(np.linalg.norm(g))
    norms = np.array(norms)
    ratios = norms / norms[-1]
    if np.all(np.abs(ratios * np.array([1 / 64, 1 / 16, 1 / 4, 1]) - 1) < 0.3):
        pytest.fail(f"gradient norms {norms} fall as 1/T²: the soft term needs the factor T²")
    np.testing.assert_allclose(ratios, 1.0, rtol=0.15, err_msg=f"gradient norms over T={TEMPERATURES[1:]}: {norms}")
    _, g = _grad(soft_target_loss, s, Tensor(t), 64.0)
    approx = (s - t) / (N * K)
    assert np.linalg.norm(g - approx) < 0.05 * np.linalg.norm(approx), \
        "at a high T the soft gradient should approach logit matching (s − t)/(N·K)"


@pytest.mark.task10_1
@pytest.mark.points(1)
def test_no_gradient_reaches_the_teacher(impl):
    soft_target_loss = impl(MOD).soft_target_loss
    s, t = _logits(3)
    student = Tensor(s, requires_grad=True)
    teacher = Tensor(t, requires_grad=True)
    soft_target_loss(student, teacher, 2.0).backward()
    assert student.grad is not None, "no gradient reached the student logits"
    assert teacher.grad is None or not np.any(teacher.grad), "the teacher is a fixed target: detach it"


@pytest.mark.task10_1
@pytest.mark.points(2)
def test_distillation_loss_mixes_soft_and_hard(impl):
    distillation_loss = impl(MOD).distillation_loss
    s, t = _logits(4)
    y = np.array([0, 1, 2, 3, 4, 0])
    T = 3.0
    soft = T * T * _kl(_softmax(t / T), _softmax(s / T))
    hard = float(-np.log(_softmax(s)[np.arange(len(y)), y]).mean())
    hard_softened = float(-np.log(_softmax(s / T)[np.arange(len(y)), y]).mean())

    def value(alpha):
        return float(distillation_loss(Tensor(s), Tensor(t), y, T, alpha).item())

    np.testing.assert_allclose(value(1.0), soft, rtol=1e-6, err_msg="alpha=1 should be the soft term alone")
    v0 = value(0.0)
    if np.isclose(v0, soft):
        pytest.fail("alpha=0 gave the soft term: alpha weighs the soft term, 1 − alpha the hard one (inverted)")
    if np.isclose(v0, hard_softened):
        pytest.fail("the hard-label CE used s/T: the hard term is the ordinary CE at T = 1")
    np.testing.assert_allclose(v0, hard, rtol=1e-6, err_msg="alpha=0 should be the hard-label CE alone")
    v = value(0.3)
    if np.isclose(v, 0.7 * soft + 0.3 * hard):
        pytest.fail("alpha mixing is inverted: L = alpha·soft + (1 − alpha)·hard")
    np.testing.assert_allclose(v, 0.3 * soft + 0.7 * hard, rtol=1e-6, err_msg="L = alpha·soft + (1 − alpha)·hard")


@pytest.mark.task10_1
@pytest.mark.points(1)
def test_distillation_gradient(impl):
    distillation_loss = impl(MOD).distillation_loss
    s, t = _logits(5)
    y = np.array([4, 3, 2, 1, 0, 0])
    N, T, alpha = len(s), 2.0, 0.6
    _, g = _grad(distillation_loss, s, Tensor(t), y, T, alpha)
    onehot = np.eye(s.shape[1])[y]
    expected = alpha * T * (_softmax(s / T) - _softmax(t / T)) / N + (1 - alpha) * (_softmax(s) - onehot) / N
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-12,
        err_msg=("∂L/∂s should be α·T·(q_T − p_T)/N + (1 − α)·(softmax(s) − one-hot)/N: the soft term carries "
                 "T² (so T·(q − p) after the 1/T), the hard term none"))
