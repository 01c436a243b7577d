"""Graded tests of Task 10.2: DistilBERT's hidden cosine loss, TinyBERT's hidden MSE through a
learned projection and attention MSE, and initialising a student from chosen teacher layers.

Reference values come from NumPy formulas written out here; padded positions are filled with
large random numbers so that counting them moves every loss far away from the right value.
"""
import numpy as np
import pytest

from autograd import Tensor

MOD = "task10_distill.intermediate"


def _padded_states(seed, B=3, T=6, C=5):
    rng = np.random.default_rng(seed)
    h_s, h_t = rng.normal(size=(B, T, C)), rng.normal(size=(B, T, C))
    mask = np.arange(T)[None, :] < np.array([T, 2, 4])[:, None]       # (B, T), one row unpadded
    return h_s, h_t, mask


def _cos_loss(h_s, h_t, mask):
    cos = (h_s * h_t).sum(-1) / (np.linalg.norm(h_s, axis=-1) * np.linalg.norm(h_t, axis=-1))
    return float(((1 - cos) * mask).sum() / mask.sum())


@pytest.mark.task10_2
@pytest.mark.points(2)
def test_cosine_loss_ignores_padding(impl):
    cosine_hidden_loss = impl(MOD).cosine_hidden_loss
    h_s, h_t, mask = _padded_states(0)
    got = float(cosine_hidden_loss(Tensor(h_s), Tensor(h_t), mask).item())
    everywhere = _cos_loss(h_s, h_t, np.ones_like(mask))
    if np.isclose(got, everywhere):
        pytest.fail("the padded positions were counted: average 1 − cos over the real tokens only")
    zeros_counted = float(((1 - (h_s * h_t).sum(-1) / (np.linalg.norm(h_s, axis=-1) * np.linalg.norm(h_t, axis=-1)))
                           * mask).sum() / mask.size)
    if np.isclose(got, zeros_counted):
        pytest.fail("the sum skipped padding but the divisor counted it: divide by the number of real positions")
    np.testing.assert_allclose(got, _cos_loss(h_s, h_t, mask), rtol=1e-6,
        err_msg="cosine_hidden_loss should be the mean of 1 − cos(h_s, h_t) over the real (mask = 1) positions")
    # whatever sits at the padded positions must not matter
    rng = np.random.default_rng(1)
    h_s2, h_t2 = h_s.copy(), h_t.copy()
    h_s2[~mask] = rng.normal(size=h_s2[~mask].shape) * 100
    h_t2[~mask] = rng.normal(size=h_t2[~mask].shape) * 100
    np.testing.assert_allclose(float(cosine_hidden_loss(Tensor(h_s2), Tensor(h_t2), mask).item()), got, rtol=1e-6,
        err_msg="cosine_hidden_loss changed when only the padded positions changed: leave them out entirely")
    # no mask: every position counts; identical states give 0
    np.testing.assert_allclose(float(cosine_hidden_loss(Tensor(h_s), Tensor(h_t), None).item()), everywhere, rtol=1e-6,
        err_msg="cosine_hidden_loss with mask=None should average 1 − cos over every position")
    assert abs(float(cosine_hidden_loss(Tensor(h_t), Tensor(h_t), mask).item())) < 1e-9, \
        "identical student and teacher states must give a cosine loss of 0"


@pytest.mark.task10_2
@pytest.mark.points(1)
def test_cosine_loss_gradient(impl):
    cosine_hidden_loss = impl(MOD).cosine_hidden_loss
    h_s, h_t, mask = _padded_states(2)
    x = Tensor(h_s.copy(), requires_grad=True)
    cosine_hidden_loss(x, Tensor(h_t), mask).backward()
    assert x.grad is not None and np.all(x.grad[~mask] == 0), "padded positions must get no gradient"
    eps, g = 1e-6, np.zeros_like(h_s)
    for idx in np.ndindex(*h_s.shape):
        if not mask[idx[:2]]:
            continue
        hp, hm = h_s.copy(), h_s.copy()
        hp[idx] += eps
        hm[idx] -= eps
        g[idx] = (_cos_loss(hp, h_t, mask) - _cos_loss(hm, h_t, mask)) / (2 * eps)
    np.testing.assert_allclose(x.grad, g, rtol=1e-4, atol=1e-8,
        err_msg="the gradient of cosine_hidden_loss differs from finite differences (build it from Tensor ops)")


@pytest.mark.task10_2
@pytest.mark.points(2)
def test_hidden_mse_goes_through_the_projection(impl):
    hidden_mse_loss = impl(MOD).hidden_mse_loss
    rng = np.random.default_rng(3)
    B, T, C = 2, 4, 5
    h_s, h_t = rng.normal(size=(B, T, C)), rng.normal(size=(B, T, C))
    W = rng.normal(size=(C, C))                                        # square and not symmetric
    got = float(hidden_mse_loss(Tensor(h_s), Tensor(h_t), Tensor(W)).item())
    if np.isclose(got, ((h_s - h_t) ** 2).mean()):
        pytest.fail("the projection W_h was left out: compare H_s·W_h with H_t")
    if np.isclose(got, ((h_s @ W.T - h_t) ** 2).mean()):
        pytest.fail("W_h was used transposed: W_h is (C_s, C_t) and multiplies on the right, H_s·W_h")
    if np.isclose(got, ((h_s @ W - h_t) ** 2).sum()):
        pytest.fail("the squared errors were summed: MSE is their mean over B·T·C_t")
    np.testing.assert_allclose(got, ((h_s @ W - h_t) ** 2).mean(), rtol=1e-6,
        err_msg="hidden_mse_loss should be mean((H_s·W_h − H_t)²) over B·T·C_t")


@pytest.mark.task10_2
@pytest.mark.points(2)
def test_hidden_mse_narrow_student_and_gradients(impl):
    hidden_mse_loss = impl(MOD).hidden_mse_loss
    rng = np.random.default_rng(4)
    B, T, Cs, Ct = 2, 3, 3, 6
    h_s, h_t, W = rng.normal(size=(B, T, Cs)), rng.normal(size=(B, T, Ct)), rng.normal(size=(Cs, Ct))
    xs, xw = Tensor(h_s.copy(), requires_grad=True), Tensor(W.copy(), requires_grad=True)
    teacher = Tensor(h_t.copy(), requires_grad=True)
    loss = hidden_mse_loss(xs, teacher, xw)
    np.testing.assert_allclose(float(loss.item()), ((h_s @ W - h_t) ** 2).mean(), rtol=1e-6,
        err_msg="hidden_mse_loss with a narrow student (C_s=3, C_t=6) should be mean((H_s·W_h − H_t)²)")
    loss.backward()
    r = 2 * (h_s @ W - h_t) / (B * T * Ct)                             # ∂L/∂(H_s W)
    assert xw.grad is not None, "W_h is learned: the gradient must reach it"
    np.testing.assert_allclose(xw.grad, np.einsum("btc,btd->cd", h_s, r), rtol=1e-5, atol=1e-10,
        err_msg="W_h.grad should be H_sᵀ·r with r = 2(H_s·W_h − H_t)/(B·T·C_t)")
    np.testing.assert_allclose(xs.grad, r @ W.T, rtol=1e-5, atol=1e-10,
        err_msg="H_s.grad should be r·W_hᵀ with r = 2(H_s·W_h − H_t)/(B·T·C_t)")
    assert teacher.grad is None or not np.any(teacher.grad), "the teacher's states are a fixed target: detach them"


def _att_loss(A_s, A_t, mask):
    pairs = mask[:, None, :, None] & mask[:, None, None, :]
    H = A_s.shape[1]
    return float((((A_s - A_t) ** 2) * pairs).sum() / (H * pairs.sum()))


@pytest.mark.task10_2
@pytest.mark.points(2)
def test_attention_mse_over_real_pairs(impl):
    attention_mse_loss = impl(MOD).attention_mse_loss
    rng = np.random.default_rng(5)
    B, H, T = 3, 2, 5
    mask = np.arange(T)[None, :] < np.array([5, 2, 3])[:, None]
    A_s, A_t = rng.normal(size=(B, H, T, T)), rng.normal(size=(B, H, T, T))
    got = float(attention_mse_loss(Tensor(A_s), Tensor(A_t), mask).item())
    if np.isclose(got, ((A_s - A_t) ** 2).mean()):
        pytest.fail("padded query rows and key columns were counted: average over pairs with both real")
    keys_only = mask[:, None, None, :] & np.ones((B, 1, T, 1), bool)
    if np.isclose(got, float((((A_s - A_t) ** 2) * keys_only).sum() / (H * keys_only.sum()))):
        pytest.fail("only padded keys were left out: padded queries (rows) must go too")
    np.testing.assert_allclose(got, _att_loss(A_s, A_t, mask), rtol=1e-6,
        err_msg=("attention_mse_loss should average (A_s − A_t)² over heads and the (query, key) pairs where "
                 "both are real"))
    A_s2 = A_s.copy()
    pad = ~(mask[:, None, :, None] & mask[:, None, None, :]) & np.ones((B, H, T, T), bool)
    A_s2[pad] = 1e4
    np.testing.assert_allclose(float(attention_mse_loss(Tensor(A_s2), Tensor(A_t), mask).item()), got, rtol=1e-6,
        err_msg="attention_mse_loss changed when only padded pairs changed: leave them out entirely")
    x = Tensor(A_s.copy(), requires_grad=True)
    attention_mse_loss(x, Tensor(A_t), mask).backward()
    pairs = (mask[:, None, :, None] & mask[:, None, None, :]).astype(float)
    n_pairs = pairs.sum()                                                # Σ_b n_b² real (query, key) pairs
    np.testing.assert_allclose(x.grad, 2 * (A_s - A_t) * pairs / (H * n_pairs), rtol=1e-5, atol=1e-12,
        err_msg="the gradient of attention_mse_loss should be 2(A_s − A_t)/(H·n_pairs) on real pairs, 0 elsewhere")


def _bert_pair(n_teacher, n_student, seed=0):
    from minilm.models.bert import BertConfig, BertModel
    t_cfg = BertConfig(vocab_size=30, max_position_embeddings=8, n_layer=n_teacher, n_head=2, n_embd=8, dropout=0.0)
    s_cfg = BertConfig(vocab_size=30, max_position_embeddings=8, n_layer=n_student, n_head=2, n_embd=8, dropout=0.0)
    teacher = BertModel(t_cfg, rng=np.random.default_rng(seed))
    student = BertModel(s_cfg, rng=np.random.default_rng(seed + 100))
    return student, teacher


@pytest.mark.task10_2
@pytest.mark.points(2)
def test_init_student_copies_the_chosen_layers(impl):
    init_student_from_teacher = impl(MOD).init_student_from_teacher
    student, teacher = _bert_pair(6, 3)
    before = teacher.state_dict()
    layer_map = [0, 2, 5]
    out = init_student_from_teacher(student, teacher, layer_map)
    assert out is student, "init_student_from_teacher should return the student it filled in"
    for i, j in enumerate(layer_map):
        s_state = student.encoder.layer[i].state_dict()
        for k, v in s_state.items():
            t_v = teacher.encoder.layer[j].state_dict()[k]
            if not np.array_equal(v, t_v):
                wrong = [jj for jj in range(6) if np.array_equal(v, teacher.encoder.layer[jj].state_dict()[k])]
                pytest.fail(f"student layer {i} ({k}) should be teacher layer {layer_map[i]}"
                            + (f", got teacher layer {wrong[0]}" if wrong else ""))
    for k, v in student.embeddings.state_dict().items():
        np.testing.assert_array_equal(v, teacher.embeddings.state_dict()[k], err_msg=f"embeddings {k} not copied")
    # copies, not shared arrays: training the student must leave the teacher alone
    for p in student.parameters():
        p.data += 1.0
    for k, v in teacher.state_dict().items():
        np.testing.assert_array_equal(v, before[k], err_msg=f"the teacher's {k} changed: copy, do not share")


@pytest.mark.task10_2
@pytest.mark.points(1)
def test_init_student_runs_like_the_teacher_layers(impl):
    """A student made of teacher layers [0, 1] of a 2-layer teacher is the teacher (pooler aside)."""
    init_student_from_teacher = impl(MOD).init_student_from_teacher
    student, teacher = _bert_pair(2, 2, seed=7)
    init_student_from_teacher(student, teacher, [0, 1])
    ids = np.array([[1, 5, 7, 2, 0]])
    mask = np.array([[1, 1, 1, 1, 0]])
    np.testing.assert_allclose(student(ids, None, mask)["last_hidden_state"].data,
                               teacher(ids, None, mask)["last_hidden_state"].data, rtol=1e-5, atol=1e-6,
        err_msg=("a student made of all the teacher's layers [0, 1] must compute what the teacher does: "
                 "copy every layer parameter and the embeddings"))
