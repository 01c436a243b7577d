"""Graded tests of task module 1: the autograd engine (slots in exercises/task01_autograd/)."""
import numpy as np
import pytest

from autograd import Tensor
from autograd.errors import GradcheckError
from autograd.function import Function
from tests.helpers import numeric_grad

R = np.random.default_rng(1234)


def randn(*shape):
    return R.standard_normal(shape)


# ---------------------------------------------------------------- Task 1.1: backward -------------
@pytest.mark.task1_1
@pytest.mark.points(2)
def test_used_twice_accumulates(impl):
    backward = impl("task01_autograd.backward").backward
    x = Tensor(np.array([1.5, -2.0, 3.0]), requires_grad=True)
    y = x * x + x  # x is used three times
    backward(y, np.ones(3))
    assert x.grad is not None, "backward(y, ones) left x.grad as None: a leaf must receive its gradient"
    want = 2 * x.data + 1
    for wrong in (x.data, np.ones(3), 2 * x.data, x.data + 1):  # a single path, or two of the three
        if np.shape(x.grad) == (3,) and np.allclose(x.grad, wrong):
            pytest.fail(f"y = x·x + x uses x three times, so x.grad must be 2x + 1 = {want}; yours is {x.grad}, "
                        "the gradient of only some of the paths: one path's gradient overwrote another's "
                        "— accumulate contributions with +=")
    np.testing.assert_allclose(x.grad, want,
                               err_msg=f"y = x·x + x: x.grad should be 2x + 1 = {want}, got {x.grad}")


@pytest.mark.task1_1
@pytest.mark.points(2)
def test_diamond_graph(impl):
    backward = impl("task01_autograd.backward").backward
    a = Tensor(randn(3), requires_grad=True)
    b = Tensor(randn(3), requires_grad=True)
    c = a * b           # c feeds two paths: the order must finish c's gradient before using it
    d = c.tanh() * a + c.exp()
    up = randn(3)
    backward(d, up)
    A, B = a.data, b.data
    C = A * B
    dd_dc = (1 - np.tanh(C) ** 2) * A + np.exp(C)
    assert a.grad is not None and b.grad is not None, "backward left a.grad or b.grad as None"
    if np.allclose(a.grad, up * np.tanh(C)) or np.allclose(a.grad, up * dd_dc * B):
        pytest.fail("diamond graph d = tanh(c)·a + exp(c), c = a·b: a.grad holds only one of its two paths "
                    "(through c, and directly): gradients reaching a node from several paths must be summed")
    np.testing.assert_allclose(a.grad, up * (dd_dc * B + np.tanh(C)), rtol=1e-10,
                               err_msg="diamond graph d = tanh(c)·a + exp(c), c = a·b: a.grad is wrong — gradients "
                                       "reaching a node by several paths must be summed (+=, not overwritten), and "
                                       "c's must be complete before it flows on (reverse topological order)")
    np.testing.assert_allclose(b.grad, up * dd_dc * A, rtol=1e-10,
                               err_msg="diamond graph d = tanh(c)·a + exp(c), c = a·b: b.grad should be "
                                       "upstream·(∂d/∂c)·a with ∂d/∂c summed over both uses of c")


@pytest.mark.task1_1
def test_leaf_grad_accumulates_across_calls(impl):
    backward = impl("task01_autograd.backward").backward
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    backward(x * 3.0, np.ones(2))
    backward(x * 4.0, np.ones(2))
    if x.grad is not None and np.allclose(x.grad, [4.0, 4.0]):
        pytest.fail("two backward calls (x·3, then x·4) should leave x.grad = 3 + 4 = [7, 7]; yours is [4, 4]: "
                    "the second call overwrote the leaf's gradient — add to x.grad when it is already set")
    np.testing.assert_allclose(x.grad, [7.0, 7.0],
                               err_msg="two backward calls (x·3, then x·4) should leave x.grad = [7, 7] (accumulated)")


@pytest.mark.task1_1
def test_topological_order_and_no_recursion(impl):
    mod = impl("task01_autograd.backward")
    x = Tensor(np.array(1.0), requires_grad=True)
    const = Tensor(np.array(2.0))  # requires no grad: must not appear
    y = x
    for _ in range(20000):
        y = y * 1.0 + const * 0.0
    order = mod.topological_sort(y)
    assert order[-1] is y and order[0] is x, \
        "topological_sort(root) must list the leaves first and end with the root itself"
    assert all(t.requires_grad for t in order), \
        "topological_sort listed a tensor with requires_grad=False (a constant): skip those"
    position = {id(t): i for i, t in enumerate(order)}
    for t in order:
        if t._ctx is not None:
            assert all(position[id(p)] < position[id(t)] for p in t._ctx.parents if p.requires_grad), \
                "topological_sort placed a node before one of its parents: every parent must come first"
    mod.backward(y, np.array(1.0))
    np.testing.assert_allclose(x.grad, 1.0, err_msg="a chain of 20000 steps y = y·1 + 0 must give x.grad = 1")


# ------------------------------------------------ Task 1.2: elementwise + un-broadcasting --------
@pytest.mark.task1_2
@pytest.mark.points(2)
@pytest.mark.parametrize("grad_shape,shape", [((2, 3, 4), (3, 1)), ((2, 3, 4), (4,)), ((5, 1, 2), (1, 1, 1)),
                                              ((3, 4), (3, 4)), ((2, 3), ())])
def test_unbroadcast(impl, grad_shape, shape):
    unbroadcast = impl("task01_autograd.elementwise").unbroadcast
    g = randn(*grad_shape)
    got = unbroadcast(g, shape)
    assert np.shape(got) == tuple(shape), \
        f"unbroadcast(grad {grad_shape}, {shape}) returned shape {np.shape(got)}: it must return the input's shape"
    # the reference: d/dx Σ g · broadcast_to(x, grad_shape)
    expected = numeric_grad(lambda x: np.broadcast_to(x, grad_shape), np.zeros(shape), g)
    np.testing.assert_allclose(got, expected, atol=1e-6,
                               err_msg=f"unbroadcast(grad {grad_shape}, {shape}): sum the gradient over the axes "
                                       "that broadcasting added (leading) or stretched (size 1)")


@pytest.mark.task1_2
@pytest.mark.points(3)
@pytest.mark.parametrize("name,f", [
    ("add_backward", lambda a, b: a + b), ("sub_backward", lambda a, b: a - b),
    ("mul_backward", lambda a, b: a * b), ("div_backward", lambda a, b: a / b)])
def test_binary_backward_with_broadcasting(impl, name, f):
    fn = getattr(impl("task01_autograd.elementwise"), name)
    a, b = randn(4, 1, 3), randn(2, 1) ** 2 + 0.5
    up = randn(4, 2, 3)
    ga, gb = fn(up, a, b)
    assert ga.shape == a.shape and gb.shape == b.shape, \
        (f"{name}: a {a.shape} and b {b.shape} broadcast to {up.shape}; the gradients must have the inputs' "
         f"shapes, got {np.shape(ga)} and {np.shape(gb)}: unbroadcast them")
    np.testing.assert_allclose(ga, numeric_grad(lambda x: f(x, b), a, up), rtol=1e-5, atol=1e-7,
                               err_msg=f"{name}: the gradient of a differs from finite differences")
    np.testing.assert_allclose(gb, numeric_grad(lambda x: f(a, x), b, up), rtol=1e-5, atol=1e-7,
                               err_msg=f"{name}: the gradient of b (shape {b.shape}, broadcast) differs from "
                                       "finite differences")


@pytest.mark.task1_2
@pytest.mark.points(2)
def test_unary_backward(impl):
    m = impl("task01_autograd.elementwise")
    a = np.abs(randn(3, 4)) + 0.1  # positive: log and fractional powers are defined
    up = randn(3, 4)
    sig = 1 / (1 + np.exp(-a))
    cases = [
        (m.exp_backward(up, np.exp(a)), np.exp),
        (m.log_backward(up, a), np.log),
        (m.tanh_backward(up, np.tanh(a)), np.tanh),
        (m.sigmoid_backward(up, sig), lambda x: 1 / (1 + np.exp(-x))),
        (m.pow_backward(up, a, 2.5), lambda x: x ** 2.5),
        (m.pow_backward(up, a, -1.0), lambda x: x ** -1.0),
    ]
    names = ["exp_backward", "log_backward", "tanh_backward", "sigmoid_backward", "pow_backward(p=2.5)",
             "pow_backward(p=-1)"]
    for name, (got, f) in zip(names, cases):
        np.testing.assert_allclose(got, numeric_grad(f, a, up), rtol=1e-5, atol=1e-7,
                                   err_msg=f"{name}: differs from finite differences (times the upstream gradient)")
    b = randn(3, 4)
    np.testing.assert_allclose(m.relu_backward(up, b), up * (b > 0),
                               err_msg="relu_backward: the gradient passes where the input is > 0 and is 0 elsewhere")


# ------------------------------------------------ Task 1.3: reductions and movement --------------
@pytest.mark.task1_3
@pytest.mark.points(2)
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), (-1, True), ((0, 2), False)])
def test_sum_mean_backward(impl, axis, keepdims):
    m = impl("task01_autograd.reductions")
    a = randn(2, 3, 4)
    up = randn(*np.sum(a, axis=axis, keepdims=keepdims).shape)
    np.testing.assert_allclose(m.sum_backward(up, a.shape, axis, keepdims),
                               numeric_grad(lambda x: np.sum(x, axis=axis, keepdims=keepdims), a, up), atol=1e-6,
                               err_msg=f"sum_backward(axis={axis}, keepdims={keepdims}): the upstream gradient "
                                       "must be broadcast back to (2, 3, 4) (re-insert the summed axes first)")
    np.testing.assert_allclose(m.mean_backward(up, a.shape, axis, keepdims),
                               numeric_grad(lambda x: np.mean(x, axis=axis, keepdims=keepdims), a, up), atol=1e-6,
                               err_msg=f"mean_backward(axis={axis}, keepdims={keepdims}): like sum_backward, divided "
                                       "by the number of averaged elements")


@pytest.mark.task1_3
@pytest.mark.points(2)
def test_max_backward_ties_split(impl):
    m = impl("task01_autograd.reductions")
    a = np.array([[1.0, 3.0, 3.0], [5.0, 2.0, 0.0]])
    out = a.max(axis=1)
    got = m.max_backward(np.array([1.0, 2.0]), a, out, 1, False)
    np.testing.assert_allclose(got, [[0, 0.5, 0.5], [2.0, 0, 0]],
                               err_msg=f"max_backward on [[1, 3, 3], [5, 2, 0]] with upstream [1, 2]: a tie splits "
                                       f"the gradient equally, expected [[0, .5, .5], [2, 0, 0]], got {got}")
    b = randn(3, 4)
    up = randn(4)
    np.testing.assert_allclose(m.max_backward(up, b, b.max(axis=0), 0, False),
                               numeric_grad(lambda x: x.max(axis=0), b, up), atol=1e-6,
                               err_msg="max_backward(axis=0, keepdims=False): the gradient must go to the "
                                       "arg-max of each column only")


@pytest.mark.task1_3
@pytest.mark.points(2)
def test_movement_backward(impl):
    m = impl("task01_autograd.reductions")
    a = randn(2, 3, 4)
    up = randn(4, 6)
    np.testing.assert_allclose(m.reshape_backward(up, a.shape), up.reshape(2, 3, 4),
                               err_msg="reshape_backward: reshape the gradient back to the input shape (2, 3, 4)")
    axes = (1, 2, 0)  # not its own inverse
    up_t = randn(3, 4, 2)
    got_t = m.transpose_backward(up_t, axes)
    if np.shape(got_t) == (2, 3, 4) and np.allclose(got_t, up_t.reshape(2, 3, 4)):
        pytest.fail("transpose_backward(axes=(1, 2, 0)) reshaped the gradient: transpose it by the inverse "
                    "permutation np.argsort(axes)")
    np.testing.assert_allclose(got_t, numeric_grad(lambda x: x.transpose(axes), a, up_t), atol=1e-6,
                               err_msg="transpose_backward(axes=(1, 2, 0)): transpose by the inverse permutation "
                                       "np.argsort(axes), not by axes again")
    up_r = randn(4, 3, 2)
    np.testing.assert_allclose(m.transpose_backward(up_r, None), up_r.transpose(),
                               err_msg="transpose_backward(axes=None): a full reversal is its own inverse")


@pytest.mark.task1_3
@pytest.mark.points(2)
def test_indexing_repeated_indices_accumulate(impl):
    m = impl("task01_autograd.reductions")
    a = randn(5, 3)
    idx = np.array([0, 2, 0, 0, 4])
    up = randn(5, 3)
    got = m.getitem_backward(up, a.shape, idx)
    np.testing.assert_allclose(got, numeric_grad(lambda x: x[idx], a, up), atol=1e-6,
                               err_msg="getitem_backward with index [0, 2, 0, 0, 4]: row 0 is read three times, so "
                                       "its gradient is the sum of three rows — use np.add.at, not grad[idx] = up")
    index = (slice(1, 4), np.array([2, 2]))
    up2 = randn(3, 2)
    np.testing.assert_allclose(m.getitem_backward(up2, a.shape, index),
                               numeric_grad(lambda x: x[index], a, up2), atol=1e-6,
                               err_msg="getitem_backward with index (1:4, [2, 2]): repeated column 2 must accumulate")


@pytest.mark.task1_3
def test_gather_backward(impl):
    m = impl("task01_autograd.reductions")
    a = randn(2, 4, 3)
    index = np.array([[[0, 1, 1]], [[3, 3, 0]]])  # (2, 1, 3), along axis 1, with repeats
    up = randn(2, 1, 3)
    got = m.gather_backward(up, a.shape, 1, index)
    np.testing.assert_allclose(got, numeric_grad(lambda x: np.take_along_axis(x, index, 1), a, up), atol=1e-6,
                               err_msg="gather_backward(axis=1) with repeated indices: the gradient of an element "
                                       "gathered twice is the sum of both (np.add.at, or put_along_axis does not add)")
    index2 = np.array([[[2, 2], [0, 1], [1, 1], [0, 0]]] * 2)  # axis -1
    up2 = randn(2, 4, 2)
    np.testing.assert_allclose(m.gather_backward(up2, a.shape, -1, index2),
                               numeric_grad(lambda x: np.take_along_axis(x, index2, -1), a, up2), atol=1e-6,
                               err_msg="gather_backward(axis=-1) with repeated indices: repeated gradients must add up")


# ------------------------------------------------ Task 1.4: batched matmul -----------------------
@pytest.mark.task1_4
@pytest.mark.points(3)
@pytest.mark.parametrize("sa,sb", [((3, 5), (5, 2)), ((4, 3, 5), (5, 2)), ((1, 3, 5), (4, 5, 2)),
                                   ((2, 1, 3, 5), (3, 5, 7))])
def test_matmul_backward(impl, sa, sb):
    matmul_backward = impl("task01_autograd.matmul").matmul_backward
    a, b = randn(*sa), randn(*sb)
    up = randn(*np.matmul(a, b).shape)
    ga, gb = matmul_backward(up, a, b)
    assert ga.shape == a.shape and gb.shape == b.shape, \
        (f"matmul_backward for {sa} @ {sb}: the gradients must have the input shapes, got {np.shape(ga)} and "
         f"{np.shape(gb)} — sum over the broadcast batch axes")
    np.testing.assert_allclose(ga, numeric_grad(lambda x: x @ b, a, up), rtol=1e-5, atol=1e-6,
                               err_msg=f"matmul_backward for {sa} @ {sb}: grad_a should be upstream @ bᵀ "
                                       "(transpose the last two axes only), summed over broadcast axes")
    np.testing.assert_allclose(gb, numeric_grad(lambda x: a @ x, b, up), rtol=1e-5, atol=1e-6,
                               err_msg=f"matmul_backward for {sa} @ {sb}: grad_b should be aᵀ @ upstream, summed over "
                                       "the batch axes b was broadcast along")


# ------------------------------------------------ Task 1.5: gradcheck ----------------------------
class _SoftmaxZeroGrad(Function):
    """Softmax with a backward that returns zeros: correct for a .sum() upstream only."""

    @staticmethod
    def forward(ctx, x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    @staticmethod
    def backward(ctx, grad_output):
        return np.zeros_like(grad_output)


class _DoubleWrong(Function):
    """y = x², with a backward that forgets the factor 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x


@pytest.mark.task1_5
@pytest.mark.points(2)
def test_gradcheck_accepts_correct(impl):
    gradcheck = impl("task01_autograd.gradcheck").gradcheck
    x = Tensor(randn(3, 4), requires_grad=True)
    w = Tensor(randn(4, 2), requires_grad=True)
    assert gradcheck(lambda x, w: (x @ w).tanh(), x, w, rng=np.random.default_rng(0)) is True, \
        "gradcheck must return True for a correct op (tanh(x @ w)); check your tolerances and the float64 copies"


@pytest.mark.task1_5
@pytest.mark.points(2)
def test_gradcheck_rejects_wrong_backward(impl):
    gradcheck = impl("task01_autograd.gradcheck").gradcheck
    x = Tensor(randn(2, 3), requires_grad=True)
    with pytest.raises(GradcheckError, match=r"input 0.*index"):
        gradcheck(lambda x: _DoubleWrong.apply(x), x, rng=np.random.default_rng(0))


@pytest.mark.task1_5
@pytest.mark.points(2)
def test_gradcheck_uses_random_upstream(impl):
    """With upstream = ones, softmax's true gradient is 0, so a zero backward would pass."""
    gradcheck = impl("task01_autograd.gradcheck").gradcheck
    x = Tensor(randn(2, 5), requires_grad=True)
    with pytest.raises(GradcheckError):
        gradcheck(lambda x: _SoftmaxZeroGrad.apply(x), x, rng=np.random.default_rng(0))
