"""Every primitive and composed op: forward against NumPy, float64 gradcheck with a random upstream."""
import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor, cat, gradcheck, no_grad, stack, where
from autograd.errors import MiniLMError, ShapeError

R = np.random.default_rng(7)


def t(*shape, positive=False):
    x = R.standard_normal(shape)
    return Tensor(np.abs(x) + 0.5 if positive else x, requires_grad=True)


PRIMITIVES = {
    "add": (lambda a, b: a + b, lambda a, b: a + b, [(3, 1), (4,)]),
    "sub": (lambda a, b: a - b, lambda a, b: a - b, [(2, 3), (2, 1)]),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, [(2, 3, 1), (3, 4)]),
    "div": (lambda a, b: a / b, lambda a, b: a / b, [(2, 3), "pos(3,)"]),
    "neg": (lambda a: -a, lambda a: -a, [(3, 2)]),
    "pow": (lambda a: a ** 1.7, lambda a: a ** 1.7, ["pos(3, 2)"]),
    "exp": (lambda a: a.exp(), np.exp, [(3, 2)]),
    "log": (lambda a: a.log(), np.log, ["pos(4,)"]),
    "tanh": (lambda a: a.tanh(), np.tanh, [(3, 2)]),
    "relu": (lambda a: a.relu(), lambda a: np.maximum(a, 0), [(3, 5)]),
    "sigmoid": (lambda a: a.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), [(3, 5)]),
    "sum": (lambda a: a.sum(axis=1), lambda a: a.sum(axis=1), [(2, 3, 4)]),
    "mean": (lambda a: a.mean(axis=(0, 2), keepdims=True), lambda a: a.mean(axis=(0, 2), keepdims=True), [(2, 3, 4)]),
    "max": (lambda a: a.max(axis=-1), lambda a: a.max(axis=-1), [(2, 3, 4)]),
    "reshape": (lambda a: a.reshape(4, 6), lambda a: a.reshape(4, 6), [(2, 3, 4)]),
    "transpose": (lambda a: a.transpose(2, 0, 1), lambda a: a.transpose(2, 0, 1), [(2, 3, 4)]),
    "swap": (lambda a: a.transpose(0, 2), lambda a: a.swapaxes(0, 2), [(2, 3, 4)]),
    "getitem": (lambda a: a[1:, np.array([0, 0, 2])], lambda a: a[1:, np.array([0, 0, 2])], [(3, 4)]),
    "matmul": (lambda a, b: a @ b, lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "masked_fill": (lambda a: a.masked_fill(np.array([True, False, True]), -1.0),
                    lambda a: np.where([True, False, True], -1.0, a), [(2, 3)]),
}


def _inputs(specs):
    out = []
    for s in specs:
        if isinstance(s, str):
            out.append(t(*eval(s[3:]), positive=True))
        else:
            out.append(t(*s))
    return out


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_primitive_forward_and_gradcheck(name):
    op, reference, specs = PRIMITIVES[name]
    xs = _inputs(specs)
    np.testing.assert_allclose(op(*xs).data, reference(*[x.data for x in xs]), rtol=1e-12)
    assert gradcheck(op, *xs, rng=np.random.default_rng(1))


def test_cat_stack_where_gather():
    a, b = t(2, 3), t(2, 1)
    assert gradcheck(lambda a, b: cat([a, b], axis=1), a, b)
    c = t(2, 3)
    assert gradcheck(lambda a, c: stack([a, c], axis=1), a, c)
    cond = np.array([[True, False, True]])
    assert gradcheck(lambda a, b: where(cond, a, b), a, b)
    idx = np.array([[2, 0], [1, 1]])
    np.testing.assert_array_equal(a.gather(1, idx).data, np.take_along_axis(a.data, idx, 1))
    assert gradcheck(lambda a: a.gather(1, idx), a)


FUNCTIONAL = {
    "softmax": lambda x: F.softmax(x, axis=-1),
    "log_softmax": lambda x: F.log_softmax(x, axis=0),
    "cross_entropy": lambda x: F.cross_entropy(x, np.array([1, -100, 3, 0]), label_smoothing=0.1),
    "cross_entropy_sum": lambda x: F.cross_entropy(x, np.array([1, 2, 3, 0]), reduction="sum"),
    "bce": lambda x: F.binary_cross_entropy_with_logits(x, (np.arange(20).reshape(4, 5) % 3 == 0).astype(float)),
    "gelu": lambda x: F.gelu(x),
    "layer_norm": lambda x: F.layer_norm(x, Tensor(np.linspace(0.5, 1.5, 5)), Tensor(np.linspace(-1, 1, 5))),
    "kl_div": lambda x: F.kl_div(F.log_softmax(x), F.softmax(Tensor(np.arange(20.0).reshape(4, 5) / 7))),
    "cosine": lambda x: F.cosine_similarity(x, Tensor(np.arange(20.0).reshape(4, 5))),
    "mse": lambda x: F.mse_loss(x, np.ones((4, 5))),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_gradcheck(name):
    assert gradcheck(FUNCTIONAL[name], t(4, 5), rng=np.random.default_rng(2))


def test_functional_forward_against_formulas():
    x = R.standard_normal((4, 5))
    e = np.exp(x - x.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(F.softmax(Tensor(x)).data, p, rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(Tensor(x)).data, np.log(p), rtol=1e-12)
    target = np.array([1, -100, 3, 0])
    valid = target != -100
    nll = -np.log(p[np.arange(4), np.where(valid, target, 0)])
    np.testing.assert_allclose(F.cross_entropy(Tensor(x), target).data, nll[valid].mean())
    eps = 0.2
    smooth = (1 - eps) * nll - eps * np.log(p).mean(-1)
    np.testing.assert_allclose(F.cross_entropy(Tensor(x), target, label_smoothing=eps).data, smooth[valid].mean())
    y = (x > 0).astype(float)
    bce = -(y * np.log(1 / (1 + np.exp(-x))) + (1 - y) * np.log(1 - 1 / (1 + np.exp(-x))))
    np.testing.assert_allclose(F.binary_cross_entropy_with_logits(Tensor(x), y).data, bce.mean())
    gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(F.gelu(Tensor(x)).data, gelu, rtol=1e-12)
    ln = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(F.layer_norm(Tensor(x)).data, ln, rtol=1e-10)
    q = p[::-1].copy()
    np.testing.assert_allclose(F.kl_div(Tensor(np.log(p)), q).data, np.sum(q * (np.log(q) - np.log(p))) / 4)
    w = R.standard_normal((7, 3))
    np.testing.assert_array_equal(F.embedding(np.array([[6, 0]]), Tensor(w)).data, w[[[6, 0]]])


def test_bce_is_stable_for_huge_logits():
    loss = F.binary_cross_entropy_with_logits(Tensor(np.array([1e4, -1e4])), np.array([0.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.data, [1e4, 1e4])


def test_cross_entropy_all_ignored_is_zero_not_nan():
    x = Tensor(R.standard_normal((3, 4)), requires_grad=True)
    loss = F.cross_entropy(x, np.full(3, -100))
    assert loss.item() == 0.0
    loss.backward()
    assert np.all(x.grad == 0)


def test_dtype_is_kept():
    x = Tensor(np.ones((2, 3), np.float32), requires_grad=True)
    y = (x * 0.5 + 1).exp().sum() / 3
    assert y.dtype == np.float32
    y.backward()
    assert x.grad.dtype == np.float32
    assert F.softmax(x).dtype == np.float32 and F.layer_norm(x).dtype == np.float32


def test_errors_name_the_shapes():
    with pytest.raises(ShapeError, match=r"\(4, 3\) @ \(5, 2\).*3 != 5"):
        Tensor(np.ones((4, 3))) @ Tensor(np.ones((5, 2)))
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4,\)"):
        Tensor(np.ones((2, 3))) + Tensor(np.ones(4))
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(ShapeError, match=r"\(2, 3\)"):
        (x * 2).backward()
    with pytest.raises(ShapeError, match="id -1"):
        F.embedding(np.array([0, -1]), Tensor(np.ones((4, 2))))
    with pytest.raises(ShapeError, match="id 4"):
        F.embedding(np.array([4]), Tensor(np.ones((4, 2))))
    with pytest.raises(ShapeError, match="target id 7"):
        F.cross_entropy(Tensor(np.ones((2, 5))), np.array([7, 0]))
    with pytest.raises(MiniLMError):
        Tensor(np.ones(2)).sum().backward()  # requires no grad


def test_no_grad_and_detach():
    x = Tensor(np.ones(3), requires_grad=True)
    with no_grad():
        y = x * 2
    assert not y.requires_grad and y.is_leaf
    z = (x * 2).detach()
    assert not z.requires_grad
    w = x * 3
    assert w.requires_grad and not w.is_leaf


def test_enable_grad_records_inside_no_grad_and_restores_it():
    from autograd import enable_grad, is_grad_enabled
    x = Tensor(np.ones(3), requires_grad=True)
    with no_grad():
        with enable_grad():
            y = (x * 2).sum()
        assert not is_grad_enabled() and not (x * 2).requires_grad
    y.backward()
    np.testing.assert_allclose(x.grad, [2, 2, 2])
    assert is_grad_enabled()


def test_reflected_numpy_operands():
    x = Tensor(np.ones(3), requires_grad=True)
    y = np.array([1.0, 2.0, 3.0]) * x + 1.0
    assert isinstance(y, Tensor)
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [1, 2, 3])
