"""The twelve disagreements with PyTorch found by the differential check (issue 14), and the gaps
closed with them: each test names the behaviour, and the expected numbers are PyTorch 2.13's
(computed once by hand; this file needs no PyTorch). tests/engine/test_vs_torch.py keeps the rest."""
import numpy as np
import pytest

import autograd.functional as F
from autograd import IndexOutOfRangeError, ShapeError, Tensor, gradcheck, nn, optim

R = np.random.default_rng(14)


# 1
def test_iterating_a_tensor_stops_at_its_length():
    rows = list(Tensor(np.arange(6.0).reshape(3, 2)))
    assert len(rows) == 3 and all(isinstance(r, Tensor) and r.shape == (2,) for r in rows)
    np.testing.assert_array_equal(rows[2].data, [4.0, 5.0])
    with pytest.raises(TypeError):
        iter(Tensor(1.0))  # a 0-d tensor is not iterable (PyTorch: the same)


def test_indexing_past_the_end_is_both_a_shape_error_and_an_index_error():
    with pytest.raises(IndexOutOfRangeError) as info:
        Tensor(np.ones((3, 2)))[3]
    assert isinstance(info.value, ShapeError) and isinstance(info.value, IndexError)
    assert "(3, 2)" in str(info.value)


def test_np_asarray_of_a_tensor_is_its_data():
    x = Tensor(np.arange(6.0).reshape(3, 2))
    assert np.asarray(x) is x.data
    assert np.asarray(x, dtype=np.float32).dtype == np.float32


def test_nll_loss_accepts_a_tensor_target():
    logp = F.log_softmax(Tensor(np.zeros((2, 3))))
    np.testing.assert_allclose(F.nll_loss(logp, Tensor(np.array([0, 1]))).item(), np.log(3))


# 2
def test_linear_without_bias_takes_a_1d_input():
    lin = nn.Linear(3, 2, bias=False, rng=np.random.default_rng(0), dtype=np.float64)
    x = Tensor(R.standard_normal(3), requires_grad=True)
    y = lin(x)
    assert y.shape == (2,)
    np.testing.assert_allclose(y.data, lin.weight.data @ x.data)
    gradcheck(lambda v: lin(v), x)


# 3
def test_gather_output_has_the_index_shape_when_the_index_is_smaller():
    x = Tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    out = x.gather(1, [[3, 0]])
    assert out.shape == (1, 2)
    np.testing.assert_array_equal(out.data, [[3.0, 0.0]])
    out.backward(np.array([[1.0, 2.0]]))
    expected = np.zeros((3, 4))
    expected[0, 3], expected[0, 0] = 1.0, 2.0
    np.testing.assert_array_equal(x.grad, expected)
    np.testing.assert_array_equal(Tensor(np.arange(12.0).reshape(3, 4)).gather(1, [[0, 1], [2, 3]]).data,
                                  [[0.0, 1.0], [6.0, 7.0]])


def test_gather_refuses_an_out_of_range_axis_and_a_larger_index():
    x = Tensor(np.ones((3, 4)))
    with pytest.raises(IndexOutOfRangeError, match="axis 2 is out of range"):
        x.gather(2, [[0]])
    with pytest.raises(ShapeError, match="larger than input"):
        x.gather(1, np.zeros((4, 1), dtype=int))
    with pytest.raises(IndexOutOfRangeError, match="index 4"):
        x.gather(1, [[4]])


# 4
def test_cosine_similarity_broadcasts_before_taking_the_norms():
    np.testing.assert_allclose(F.cosine_similarity(Tensor([0.5]), Tensor([1.0, 2, 3, 4])).item(), 0.9128709291752768)


def test_cosine_similarity_axis_counts_in_the_broadcast_shape():
    a, b = R.standard_normal((2, 3)), R.standard_normal((4, 2, 1))
    out = F.cosine_similarity(Tensor(a), Tensor(b), axis=1)
    assert out.shape == (4, 3)
    A, B = np.broadcast_arrays(a, b)
    want = (A * B).sum(1) / (np.linalg.norm(A, axis=1) * np.linalg.norm(B, axis=1))
    np.testing.assert_allclose(out.data, want)
    gradcheck(lambda x, y: F.cosine_similarity(x, y, axis=1), Tensor(a, requires_grad=True),
              Tensor(b, requires_grad=True))


def test_cosine_similarity_of_a_zero_vector_has_a_finite_gradient():
    x = Tensor(np.zeros(3), requires_grad=True)
    y = np.array([1.0, 2.0, 3.0])
    F.cosine_similarity(x, Tensor(y)).backward()  # the norm's own gradient at 0 is taken as 0
    np.testing.assert_allclose(x.grad, y / np.linalg.norm(y) / 1e-8)  # PyTorch's value (eps = 1e-8)


# 5
def test_kl_div_batchmean_of_a_0d_input_is_the_sum():
    got = F.kl_div(Tensor(np.log(0.3)), Tensor(0.5), reduction="batchmean").item()
    np.testing.assert_allclose(got, 0.5 * (np.log(0.5) - np.log(0.3)))


# 6
def test_sgd_momentum_and_weight_decay_keep_the_buffer_of_a_0d_parameter():
    p = Tensor(np.array(1.0), requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1)
    for _ in range(3):
        p.grad = np.array(1.0)
        opt.step()
    np.testing.assert_allclose(p.data, 0.3881689999999999)  # torch.optim.SGD, float64
    assert isinstance(opt.state[p]["momentum_buffer"], np.ndarray)


# 7
def test_bce_with_logits_gradient_at_exactly_zero_is_sigmoid_minus_target():
    x = Tensor(np.zeros(3), requires_grad=True)
    F.binary_cross_entropy_with_logits(x, np.array([1.0, 0.0, 0.5]), reduction="sum").backward()
    np.testing.assert_allclose(x.grad, [-0.5, 0.5, 0.0])


def test_bce_with_logits_stays_finite_for_huge_logits():
    x = Tensor(np.array([1e4, -1e4, 0.0]), requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, np.array([0.0, 1.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.data, [1e4, 1e4, np.log(2)])
    loss.sum().backward()
    np.testing.assert_allclose(x.grad, [1.0, -1.0, -0.5])


# 8
def test_power_zero_has_a_zero_gradient_at_zero():
    x = Tensor(np.zeros(2), requires_grad=True)
    (x ** 0).sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


# 9
@pytest.mark.parametrize("number", [np.int64(2), np.int32(2), np.float64(2.0), np.array(2), 2, 2.0])
def test_a_number_keeps_float32_float32(number):
    x = Tensor(np.ones(3, np.float32), requires_grad=True)
    for y in (x * number, number * x, x / number, x - number, x ** 2 + number):
        assert y.dtype == np.float32, f"{type(number).__name__}: {y.dtype}"


def test_dividing_by_an_integer_count_keeps_float32():
    x = Tensor(np.ones((2, 3), np.float32))
    mask = np.array([[True, False, True], [True, True, False]])
    assert (x / mask.sum()).dtype == np.float32
    assert (x / Tensor(mask).sum()).dtype == np.float32  # an integer tensor meets a float one
    assert (x * Tensor(mask)).dtype == np.float32


# 10
@pytest.mark.parametrize("call", [lambda t: t.permute(0, 1, 5), lambda t: t.transpose(0, 4),
                                  lambda t: t.permute(0, 1, -4)])
def test_permute_and_transpose_refuse_out_of_range_axes(call):
    with pytest.raises(IndexOutOfRangeError, match="out of range"):
        call(Tensor(np.ones((2, 3, 4))))


def test_transpose_of_a_1d_tensor_refuses_an_out_of_range_axis():
    with pytest.raises(IndexOutOfRangeError):
        Tensor(np.ones(3)).transpose(0, 2)
    assert Tensor(np.ones(3)).transpose(0, -1).shape == (3,)


# 11
@pytest.mark.parametrize("logp_shape,target_shape", [((4, 5), (1,)), ((3, 2), (4,)), ((4, 5), (4, 1))])
def test_nll_loss_checks_the_target_shape(logp_shape, target_shape):
    with pytest.raises(ShapeError, match="nll_loss"):
        F.nll_loss(Tensor(-np.ones(logp_shape)), np.zeros(target_shape, dtype=int))


# 12
@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_a_repeated_reduction_axis_is_a_shape_error(op):
    with pytest.raises(ShapeError, match="names an axis twice"):
        getattr(Tensor(np.ones((2, 3))), op)(axis=(1, -1))


def test_reductions_accept_numpy_integer_axes():
    assert Tensor(np.ones((2, 3))).sum(axis=np.int64(1)).shape == (2,)


# ---- gaps closed --------------------------------------------------------------------------------------
def test_reflected_power_of_a_number():
    x = Tensor(np.array([0.0, 1.5, -2.0]), requires_grad=True)
    y = 2 ** x
    np.testing.assert_allclose(y.data, [1.0, 2.8284271247461903, 0.25])
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [0.6931471805599453, 1.9605162869370945, 0.17328679513998632])
    assert (2 ** Tensor(np.ones(2, np.float32))).dtype == np.float32
    z = Tensor(np.array([0.0, 1.5, 2.0]), requires_grad=True)
    (0 ** z).sum().backward()
    np.testing.assert_array_equal(z.grad, 0.0)  # PyTorch's convention at base 0


LOGITS = np.array([[1.0, 2, 0.5], [0.0, -1, 3], [2, 2, 2]])
TARGET = np.array([0, 2, -100])
WEIGHT = np.array([0.2, 1.0, 3.0])
PROBS = np.array([[0.2, 0.3, 0.5], [1, 0, 0], [0.1, 0.1, 0.8]])


def test_cross_entropy_class_weights_divide_by_the_weights_of_the_counted_targets():
    np.testing.assert_allclose(F.cross_entropy(Tensor(LOGITS), TARGET, weight=WEIGHT).item(), 0.15328920877933633)
    np.testing.assert_allclose(F.cross_entropy(Tensor(LOGITS), TARGET, weight=WEIGHT, label_smoothing=0.1).item(),
                               0.2580338429955128)
    gradcheck(lambda x: F.cross_entropy(x, TARGET, weight=WEIGHT, label_smoothing=0.1),
              Tensor(LOGITS, requires_grad=True))


def test_nll_loss_class_weights():
    logp = F.log_softmax(Tensor(LOGITS))
    np.testing.assert_allclose(F.nll_loss(logp, TARGET, weight=WEIGHT).item(), 0.15328920877933633)


def test_cross_entropy_with_probability_targets():
    np.testing.assert_allclose(F.cross_entropy(Tensor(LOGITS), PROBS).item(), 1.859621658844495)
    np.testing.assert_allclose(F.cross_entropy(Tensor(LOGITS), PROBS, weight=WEIGHT, label_smoothing=0.2).item(),
                               2.0989922807307893)
    gradcheck(lambda x: F.cross_entropy(x, PROBS, reduction="none"), Tensor(LOGITS, requires_grad=True))


def test_weighted_cross_entropy_with_every_target_ignored_is_zero():
    x = Tensor(LOGITS, requires_grad=True)
    loss = F.cross_entropy(x, np.full(3, -100), weight=WEIGHT)
    loss.backward()
    assert loss.item() == 0.0 and np.all(x.grad == 0.0)


def test_bce_with_logits_pos_weight_scales_the_positive_term():
    x, y = np.array([[0.3, -1.0], [2.0, 0.0]]), np.array([[1.0, 0.0], [1.0, 1.0]])
    got = F.binary_cross_entropy_with_logits(Tensor(x), y, pos_weight=np.array([2.0, 0.5]))
    np.testing.assert_allclose(got.item(), 0.5056004472052986)
    gradcheck(lambda v: F.binary_cross_entropy_with_logits(v, y, pos_weight=np.array([2.0, 0.5]), reduction="none"),
              Tensor(x, requires_grad=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layer_norm_over_the_trailing_normalized_shape(dtype):
    x = (np.arange(24.0).reshape(2, 3, 4) ** 1.5).astype(dtype)
    out = F.layer_norm(Tensor(x), normalized_shape=(3, 4))
    np.testing.assert_allclose(out.data[0, 0], [-1.2612990457535687, -1.176815927459393, -1.022344702387181,
                                                -0.8223118859514766], rtol=1e-5)
    assert out.dtype == dtype
    if dtype == np.float64:
        gradcheck(lambda v, w, b: F.layer_norm(v, w, b, normalized_shape=(3, 4)),
                  Tensor(R.standard_normal((2, 3, 4)), requires_grad=True),
                  Tensor(R.standard_normal((3, 4)), requires_grad=True),
                  Tensor(R.standard_normal((3, 4)), requires_grad=True))
    with pytest.raises(ShapeError, match="trailing"):
        F.layer_norm(Tensor(x), normalized_shape=(2, 3))


def test_nn_layer_norm_takes_a_tuple_normalized_shape():
    ln = nn.LayerNorm((3, 4), dtype=np.float64)
    assert ln.weight.shape == (3, 4)
    x = R.standard_normal((2, 3, 4))
    np.testing.assert_allclose(ln(Tensor(x)).data, F.layer_norm(Tensor(x), normalized_shape=(3, 4)).data)
    assert nn.LayerNorm([5]).normalized_shape == 5  # one size stays an int
