"""Task 10.1: soft targets at temperature T (Hinton, Vinyals & Dean 2015, §2) mixed with hard labels.

A teacher's logits z carry more than its top answer: "a BMW is a little like a garbage truck and
much less like a carrot". Dividing the logits by a temperature T > 1 before the softmax makes
those small probabilities visible:

    q_i = exp(z_i / T) / Σ_j exp(z_j / T)                      the softened softmax

The student is trained to match the teacher's softened distribution p = softmax(t/T) with its own
q = softmax(s/T) at the *same* T:

    L_soft = T² · KL(p ‖ q) = T² · Σ_i p_i (log p_i − log q_i)      (averaged over the batch)

Why T²: ∂KL/∂s_i = (1/T)(q_i − p_i), and for a large T (zero-mean logits) q_i − p_i ≈ (s_i − t_i)/(K·T)
shrinks too, so the soft gradients scale as 1/T². Multiplying by T² keeps them level with the hard-label
gradients whatever T is (§2.1), so the mixing weight α means the same thing at T = 2 and at T = 10.

    L = α · L_soft + (1 − α) · CE(s, y)        the hard-label cross-entropy at T = 1

Letters: N examples (rows), K classes.
"""
from __future__ import annotations

import autograd.functional as F
from autograd import Tensor
from autograd.errors import ConfigError, ShapeError
from autograd.function import as_tensor


def check_logits(op: str, student_logits, teacher_logits, T) -> tuple[Tensor, Tensor]:
    """Both logits as Tensors of the same (N, K) shape, and T > 0; raises otherwise."""
    s = as_tensor(student_logits)
    t = as_tensor(teacher_logits, (s,))
    if s.ndim != 2 or s.shape != t.shape:
        raise ShapeError(f"{op}: student logits {s.shape} and teacher logits {t.shape}, expected the "
                         "same (N, K) shape")
    if not float(T) > 0:
        raise ConfigError(f"{op}: temperature T={T}, expected T > 0")
    return s, t


def soft_target_loss(student_logits, teacher_logits, T):
    """Task 10.1: Hinton's soft-target loss, T² · KL(softmax(t/T) ‖ softmax(s/T)), batch mean.

    student_logits: Tensor (N, K), the logits s being trained (gradients flow into it).
    teacher_logits: Tensor or array (N, K), the teacher's logits t — a *target*: no gradient.
    T: the temperature, > 0 (T = 1 is the plain softmax).
    Returns a scalar Tensor:

        p = softmax(t / T)        the teacher's softened distribution (the target)
        log q = log_softmax(s / T)
        L = T² · (1/N) Σ_n Σ_k p_nk (log p_nk − log q_nk)

    Hints: ``F.kl_div(log_q, p, reduction="batchmean")`` is exactly KL(p ‖ q) / N — it takes the
    *model's* log-probabilities first and the target probabilities second (PyTorch's order).
    Soften both sides with the same T, and detach the teacher (``Tensor(t.data)``).
    Use ``check_logits`` (above) for the shape checks.

    The graded tests check the value against the formula at several T, that the gradient with
    respect to s is exactly T·(q − p)/N (so it stays level as T grows instead of shrinking as 1/T²),
    the KL direction (KL(p ‖ q), not KL(q ‖ p)), and that the teacher is softened too.
    """
    s, t = check_logits("soft_target_loss", student_logits, teacher_logits, T)
    # BEGIN SOLUTION
    T = float(T)
    p = F.softmax(Tensor(t.data) / T, axis=-1)             # (N, K) the target: no gradient to the teacher
    log_q = F.log_softmax(s / T, axis=-1)                  # (N, K)
    return F.kl_div(log_q, p, reduction="batchmean") * (T * T)
    # END SOLUTION


def distillation_loss(student_logits, teacher_logits, labels, T, alpha):
    """Task 10.1: the mix α · T²·KL(softmax(t/T) ‖ softmax(s/T)) + (1 − α) · CE(s, labels).

    student_logits Tensor (N, K); teacher_logits (N, K); labels ints (N,); T > 0; 0 ≤ α ≤ 1.
    α weighs the *soft* term: α = 1 is pure distillation, α = 0 is ordinary training on labels.
    The hard term is the usual cross-entropy of the student's *unsoftened* logits (T = 1).

    Compute the soft term yourself (as in ``soft_target_loss``; a slot does not call another slot)
    and the hard one with ``F.cross_entropy``. The graded tests check α = 0, α = 1 and a mixed α
    against the two terms, and that the hard term is not softened.
    """
    s, t = check_logits("distillation_loss", student_logits, teacher_logits, T)
    if not 0.0 <= float(alpha) <= 1.0:
        raise ConfigError(f"distillation_loss: alpha={alpha}, expected 0 <= alpha <= 1")
    # BEGIN SOLUTION
    T, alpha = float(T), float(alpha)
    p = F.softmax(Tensor(t.data) / T, axis=-1)             # (N, K)
    soft = F.kl_div(F.log_softmax(s / T, axis=-1), p, reduction="batchmean") * (T * T)
    hard = F.cross_entropy(s, labels)                      # at T = 1
    return soft * alpha + hard * (1.0 - alpha)
    # END SOLUTION
