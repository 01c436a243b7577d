"""Held-back tests of module 10: the soft-target loss at a temperature the visible tests do not use."""
import numpy as np
import pytest

from autograd import Tensor


def _log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


@pytest.mark.hidden
@pytest.mark.task10_1
def test_soft_target_loss_value_and_grad_at_T_3_5(impl):
    loss_fn = impl("task10_distill.soft_targets").soft_target_loss
    rng = np.random.default_rng(10)
    s, t, T = rng.standard_normal((5, 6)) * 3, rng.standard_normal((5, 6)) * 3, 3.5
    student = Tensor(s.copy(), requires_grad=True)
    loss = loss_fn(student, Tensor(t), T)
    log_p, log_q = _log_softmax(t / T), _log_softmax(s / T)
    p, q = np.exp(log_p), np.exp(log_q)
    want = T * T * np.mean(np.sum(p * (log_p - log_q), axis=-1))
    got = float(np.asarray(loss.data))
    if np.isclose(got, want / (T * T), rtol=1e-6):
        pytest.fail(f"soft_target_loss at T = 3.5 is {got:.6g}, exactly 1/T² of the expected {want:.6g}: multiply the "
                    "KL by T²")
    np.testing.assert_allclose(got, want, rtol=1e-6,
                               err_msg=f"soft_target_loss at T = 3.5: expected T²·KL(p‖q) batch mean = {want:.6g}")
    loss.backward()
    np.testing.assert_allclose(student.grad, T * (q - p) / 5, rtol=1e-5, atol=1e-10,
                               err_msg="soft_target_loss: dL/ds must be T·(q − p)/N; is the teacher detached and "
                                       "softened by the same T?")
