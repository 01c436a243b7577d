"""Random expression graphs built twice, in the engine and in PyTorch, for test_vs_torch.py.

A :class:`Graph` holds a pool of nodes; each node is the same value computed both ways (``e`` the
engine's Tensor, ``t`` PyTorch's tensor) plus the line of code that made it, so a failing example
prints a readable program. Every op in ``OPS`` picks its operands from the pool (a node may be
used many times: gradients must accumulate), draws its options from ``g.rng`` and adds one node.
Only the class axis differs by design (last here, axis 1 in PyTorch for inputs of more than two
dimensions): the PyTorch side flattens to (N, V) first. docs/engine.md lists every difference.

Imported by test_vs_torch.py only after ``pytest.importorskip("torch")``.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as TF

import autograd.functional as F
from autograd import Tensor, cat, fused, stack, where

TORCH_DTYPE = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}


class Node:
    def __init__(self, e, t, code):
        self.e, self.t, self.code = e, t, code


class Graph:
    def __init__(self, rng: np.random.Generator, dtype):
        self.rng, self.dtype = rng, np.dtype(dtype)
        self.pool: list[Node] = []
        self.leaves: list[Node] = []
        self.lines: list[str] = []

    # ---- making values -------------------------------------------------------------------------
    def array(self, shape, positive=False):
        x = self.rng.standard_normal(shape)
        return (np.abs(x) + 0.5 if positive else x).astype(self.dtype)

    def leaf(self, shape, positive=False) -> Node:
        x = self.array(shape, positive)
        node = self.add(Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True),
                        f"leaf{tuple(shape)}")
        self.leaves.append(node)
        return node

    def add(self, e, t, code) -> Node:
        node = Node(e, t, f"n{len(self.pool)} = {code}")
        self.pool.append(node)
        self.lines.append(node.code)
        return node

    def pick(self, ok=lambda n: True) -> Node | None:
        choices = [n for n in self.pool if ok(n)]
        return choices[self.rng.integers(len(choices))] if choices else None

    def name(self, node) -> str:
        return node.code.split(" = ")[0]

    def sub_shape(self, shape) -> tuple:
        """A shape that broadcasts *to* ``shape``: leading axes dropped, some sizes set to 1."""
        shape = list(shape)
        drop = self.rng.integers(len(shape) + 1) if shape else 0
        return tuple(1 if self.rng.random() < 0.3 else n for n in shape[drop:])

    def compatible_shape(self, shape) -> tuple:
        """A shape that broadcasts with ``shape``: leading axes dropped, some sizes set to 1,
        sometimes a new leading axis (then ``shape`` is the one stretched)."""
        shape = list(shape)
        drop = self.rng.integers(len(shape) + 1) if shape else 0
        out = [1 if self.rng.random() < 0.3 else n for n in shape[drop:]]
        if self.rng.random() < 0.2 and len(shape) < 4 and drop == 0:
            out = [int(self.rng.integers(1, 4))] + out
        return tuple(out)

    def program(self) -> str:
        return "\n".join(self.lines)


def _axis(g, node):
    return int(g.rng.integers(-node.e.ndim, node.e.ndim))


def _axes(g, node):
    """None, one axis, or a tuple of distinct axes (some negative)."""
    nd = node.e.ndim
    r = g.rng.random()
    if nd == 0 or r < 0.25:
        return None
    if r < 0.6:
        return _axis(g, node)
    k = int(g.rng.integers(1, nd + 1))
    chosen = g.rng.permutation(nd)[:k]
    return tuple(int(a) - nd if g.rng.random() < 0.5 else int(a) for a in chosen)


def _has_dims(n):
    return n.e.ndim >= 1 and n.e.size >= 1


# ---- unary elementwise -----------------------------------------------------------------------------
UNARY = {
    "neg": (lambda x: -x, lambda x: -x),
    "exp(tanh)": (lambda x: x.tanh().exp(), lambda x: x.tanh().exp()),
    "log(x²+1)": (lambda x: (x * x + 1.0).log(), lambda x: (x * x + 1.0).log()),
    "tanh": (lambda x: x.tanh(), torch.tanh),
    "sigmoid": (lambda x: x.sigmoid(), torch.sigmoid),
    "relu": (F.relu, torch.relu),
    "sqrt(x²+½)": (lambda x: (x * x + 0.5).sqrt(), lambda x: (x * x + 0.5).sqrt()),
    "x**2": (lambda x: x ** 2, lambda x: x ** 2),
    "x**3": (lambda x: x ** 3, lambda x: x ** 3),
    "x**0": (lambda x: x ** 0, lambda x: x ** 0),
    "(x²+1)**-1.5": (lambda x: (x * x + 1.0) ** -1.5, lambda x: (x * x + 1.0) ** -1.5),
    "2**x": (lambda x: 2 ** x, lambda x: 2 ** x),
    "0.5**x": (lambda x: 0.5 ** x, lambda x: 0.5 ** x),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh")),
    "gelu_erf": (lambda x: F.gelu(x, approximate="none"), lambda x: TF.gelu(x)),
    "logsigmoid": (F.logsigmoid, TF.logsigmoid),
}


def op_unary(g):
    x = g.pick()
    name = list(UNARY)[g.rng.integers(len(UNARY))]
    fe, ft = UNARY[name]
    g.add(fe(x.e), ft(x.t), f"{name}({g.name(x)})")


def op_softmax(g):
    x = g.pick(_has_dims)
    if x is None:
        return
    ax = _axis(g, x)
    if g.rng.random() < 0.5:
        g.add(F.softmax(x.e, axis=ax), torch.softmax(x.t, dim=ax), f"softmax({g.name(x)}, axis={ax})")
    else:
        g.add(F.log_softmax(x.e, axis=ax), torch.log_softmax(x.t, dim=ax), f"log_softmax({g.name(x)}, axis={ax})")


# ---- binary with broadcasting ------------------------------------------------------------------------
BINARY = {
    "+": (lambda a, b: a + b), "-": (lambda a, b: a - b), "*": (lambda a, b: a * b),
    "/": (lambda a, b: a / (b * b + 0.5)),
}


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def op_binary(g):
    a = g.pick()
    sym = list(BINARY)[g.rng.integers(len(BINARY))]
    f = BINARY[sym]
    r = g.rng.random()
    if r < 0.15:  # a number on either side: Python, NumPy float or NumPy integer scalar
        c = [2.5, np.float64(-1.5), np.int64(3), 2][g.rng.integers(4)]
        if g.rng.random() < 0.5:
            g.add(f(a.e, c), f(a.t, float(c)), f"{g.name(a)} {sym} {c!r}")
        else:
            g.add(f(c, a.e), f(float(c), a.t) if sym != "/" else float(c) / (a.t * a.t + 0.5),
                  f"{c!r} {sym} {g.name(a)}")
        return
    if r < 0.25:  # a constant NumPy array on the left (ndarray op Tensor defers to the Tensor)
        c = g.array(g.compatible_shape(a.e.shape))
        g.add(f(c, a.e), f(torch.tensor(c), a.t), f"const{c.shape} {sym} {g.name(a)}")
        return
    b = g.pick(lambda n: _broadcasts(n.e.shape, a.e.shape)) if r < 0.6 else None
    if b is None:
        b = g.leaf(g.compatible_shape(a.e.shape))
    g.add(f(a.e, b.e), f(a.t, b.t), f"{g.name(a)} {sym} {g.name(b)}")


def op_where(g):
    a = g.pick()
    b = g.leaf(g.compatible_shape(a.e.shape))
    cond = g.rng.random(g.compatible_shape(np.broadcast_shapes(a.e.shape, b.e.shape))) < 0.5
    g.add(where(cond, a.e, b.e), torch.where(torch.tensor(cond), a.t, b.t),
          f"where(cond{cond.shape}, {g.name(a)}, {g.name(b)})")


def op_masked_fill(g):
    a = g.pick()
    mask = g.rng.random(g.sub_shape(a.e.shape)) < 0.4
    value = float(g.rng.standard_normal())
    g.add(a.e.masked_fill(mask, value), a.t.masked_fill(torch.tensor(mask), value),
          f"{g.name(a)}.masked_fill(mask{mask.shape}, {value:.3f})")


# ---- reductions and movement -----------------------------------------------------------------------
def op_reduce(g):
    x = g.pick(lambda n: n.e.size >= 1)
    ax, keep = _axes(g, x), bool(g.rng.random() < 0.5)
    kind = ["sum", "mean", "max"][g.rng.integers(3)]
    dims = tuple(range(x.e.ndim)) if ax is None else ax
    te = getattr(x.e, kind)(axis=ax, keepdims=keep)
    if kind == "max":  # the engine's max splits the gradient among ties, as torch.amax does
        tt = torch.amax(x.t, dim=dims, keepdim=keep)
    else:
        tt = getattr(x.t, kind)(dim=dims, keepdim=keep)
    g.add(te, tt, f"{g.name(x)}.{kind}(axis={ax}, keepdims={keep})")


def op_reshape(g):
    x = g.pick()
    shape = list(x.e.shape)
    if g.rng.random() < 0.5:
        new = (-1,)
    else:
        new = list(g.rng.permutation(shape)) if shape else []
        new = [int(n) for n in new]
        new.insert(int(g.rng.integers(len(new) + 1)), 1)
        new = tuple(new)
    if math.prod(new) != x.e.size and new != (-1,):
        new = (-1,)
    g.add(x.e.reshape(*new), x.t.reshape(*new), f"{g.name(x)}.reshape{tuple(new)}")


def op_permute(g):
    x = g.pick(lambda n: n.e.ndim >= 1)
    if x is None:
        return
    nd = x.e.ndim
    r = g.rng.random()
    if r < 0.4:
        perm = tuple(int(p) for p in g.rng.permutation(nd))
        g.add(x.e.permute(*perm), x.t.permute(*perm), f"{g.name(x)}.permute{perm}")
    elif nd == 2:  # .T; on a 2-D tensor two integers are a permutation here (docs/engine.md)
        g.add(x.e.T, x.t.T, f"{g.name(x)}.T")
    else:
        i, j = _axis(g, x), _axis(g, x)
        g.add(x.e.transpose(i, j), x.t.transpose(i, j), f"{g.name(x)}.transpose({i}, {j})")


def op_index(g):
    x = g.pick(_has_dims)
    if x is None:
        return
    n0 = x.e.shape[0]
    r = g.rng.random()
    if r < 0.2:
        i = int(g.rng.integers(-n0, n0))
        idx, code = i, f"[{i}]"
    elif r < 0.4:
        a = int(g.rng.integers(0, n0))
        idx, code = slice(a, None), f"[{a}:]"
    elif r < 0.7:  # an integer array with repeats: the gradient must accumulate
        ids = g.rng.integers(-n0, n0, size=int(g.rng.integers(1, 5)))
        idx, code = ids, f"[{ids.tolist()}]"
    elif r < 0.85 and x.e.ndim >= 2:
        ids = g.rng.integers(0, x.e.shape[-1], size=3)
        idx, code = (Ellipsis, ids), f"[..., {ids.tolist()}]"
    else:
        mask = g.rng.random(x.e.shape) < 0.5
        idx, code = mask, f"[mask{mask.shape}]"
    tidx = tuple(torch.tensor(i) if isinstance(i, np.ndarray) else i for i in idx) if isinstance(idx, tuple) \
        else torch.tensor(idx) if isinstance(idx, np.ndarray) else idx
    g.add(x.e[idx], x.t[tidx], f"{g.name(x)}{code}")


def op_gather(g):
    x = g.pick(_has_dims)
    if x is None:
        return
    ax = _axis(g, x)
    shape = tuple(int(g.rng.integers(1, n + 1)) if d != ax % x.e.ndim else int(g.rng.integers(1, 5))
                  for d, n in enumerate(x.e.shape))
    index = g.rng.integers(0, x.e.shape[ax], size=shape)
    g.add(x.e.gather(ax, index), torch.gather(x.t, ax, torch.tensor(index)),
          f"{g.name(x)}.gather({ax}, index{shape})")


def op_cat(g):
    x = g.pick(lambda n: n.e.ndim >= 1)
    if x is None:
        return
    ax = _axis(g, x)
    if g.rng.random() < 0.5:
        shape = list(x.e.shape)
        shape[ax] = int(g.rng.integers(1, 3))
        y = g.leaf(tuple(shape))
        g.add(cat([x.e, y.e], axis=ax), torch.cat([x.t, y.t], dim=ax), f"cat([{g.name(x)}, {g.name(y)}], {ax})")
    else:
        g.add(stack([x.e, x.e * 2.0], axis=ax), torch.stack([x.t, x.t * 2.0], dim=ax),
              f"stack([{g.name(x)}, {g.name(x)} * 2], {ax})")


def op_matmul(g):
    x = g.pick(lambda n: n.e.ndim >= 2)
    if x is None:
        x = g.leaf((int(g.rng.integers(1, 4)), int(g.rng.integers(1, 4))))
    K, N = x.e.shape[-1], int(g.rng.integers(1, 4))
    r = g.rng.random()
    if r < 0.4:
        w = g.leaf((K, N))
    elif r < 0.7:  # batched, with broadcasting batch dimensions
        batch = g.compatible_shape(x.e.shape[:-2])
        w = g.leaf(batch + (K, N))
    else:  # on the left: W (M, rows) @ x
        w = g.leaf(g.compatible_shape(x.e.shape[:-2]) + (N, x.e.shape[-2]))
        g.add(w.e @ x.e, w.t @ x.t, f"{g.name(w)} @ {g.name(x)}")
        return
    g.add(x.e @ w.e, x.t @ w.t, f"{g.name(x)} @ {g.name(w)}")


def op_linear(g):
    x = g.pick(_has_dims)
    if x is None:
        return
    C, N = x.e.shape[-1], int(g.rng.integers(1, 4))
    w, b = g.leaf((N, C)), g.leaf((N,))
    if g.rng.random() < 0.5:
        g.add(fused.Linear.apply(x.e, w.e, b.e), TF.linear(x.t, w.t, b.t), f"linear({g.name(x)}, {g.name(w)}, {g.name(b)})")
    else:
        from autograd import nn
        lin = nn.Linear(C, N, bias=False, rng=g.rng, dtype=g.dtype)
        w = g.add(lin.weight, torch.tensor(lin.weight.data.copy(), requires_grad=True), f"Linear({C}, {N}).weight")
        g.leaves.append(w)
        g.add(lin(x.e), TF.linear(x.t, w.t), f"Linear(bias=False)({g.name(x)})")


def op_layer_norm(g):
    x = g.pick(lambda n: n.e.ndim >= 1 and n.e.shape[-1] >= 2)
    if x is None:
        return
    k = int(g.rng.integers(1, x.e.ndim + 1))
    shape = x.e.shape[x.e.ndim - k:]
    w = g.leaf(shape) if g.rng.random() < 0.7 else None
    b = g.leaf(shape) if g.rng.random() < 0.7 else None
    name = lambda n: "None" if n is None else g.name(n)  # noqa: E731
    if k == 1 and g.rng.random() < 0.5:
        e = F.layer_norm(x.e, None if w is None else w.e, None if b is None else b.e)
    else:
        e = F.layer_norm(x.e, None if w is None else w.e, None if b is None else b.e, normalized_shape=shape)
    g.add(e, TF.layer_norm(x.t, shape, None if w is None else w.t, None if b is None else b.t),
          f"layer_norm({g.name(x)}, {shape}, {name(w)}, {name(b)})")


def op_embedding(g):
    V, C = int(g.rng.integers(1, 5)), int(g.rng.integers(1, 4))
    w = g.leaf((V, C))
    ids = g.rng.integers(0, V, size=tuple(int(n) for n in g.rng.integers(1, 4, size=g.rng.integers(1, 3))))
    g.add(F.embedding(ids, w.e), TF.embedding(torch.tensor(ids), w.t), f"embedding(ids{ids.shape}, {g.name(w)})")


# ---- losses ------------------------------------------------------------------------------------------
def _reduction(g, allowed=("mean", "sum", "none")):
    return allowed[g.rng.integers(len(allowed))]


def op_cross_entropy(g):
    x = g.pick(lambda n: _has_dims(n) and n.e.shape[-1] >= 2)
    if x is None:
        return
    V, lead = x.e.shape[-1], x.e.shape[:-1]
    red, eps = _reduction(g), [0.0, 0.0, 0.1][g.rng.integers(3)]
    weight = (np.abs(g.array((V,))) + 0.1) if g.rng.random() < 0.4 else None
    tw = None if weight is None else torch.tensor(weight)
    flat = x.t.reshape(-1, V) if lead else x.t  # PyTorch's class axis is 1: make it (N, V)
    if g.rng.random() < 0.3:  # probability targets
        q = g.rng.dirichlet(np.ones(V), size=lead).astype(g.dtype)
        e = F.cross_entropy(x.e, q, label_smoothing=eps, reduction=red, weight=weight)
        t = TF.cross_entropy(flat, torch.tensor(q).reshape(flat.shape), weight=tw, label_smoothing=eps, reduction=red)
        code = "probabilities"
    else:
        target = g.rng.integers(0, V, size=lead)
        target = np.where(g.rng.random(lead) < 0.25, -100, target) if lead else target
        if lead and (target == -100).all():
            target.flat[0] = 0  # PyTorch's all-ignored mean is NaN, ours 0 (docs/engine.md)
        if g.rng.random() < 0.3:
            e = F.nll_loss(F.log_softmax(x.e), target, reduction=red, weight=weight)
            t = TF.nll_loss(torch.log_softmax(flat, -1), torch.tensor(target).reshape(-1) if lead else torch.tensor(target),
                            weight=tw, reduction=red)
            code = "nll_loss"
        else:
            e = F.cross_entropy(x.e, target, label_smoothing=eps, reduction=red, weight=weight)
            t = TF.cross_entropy(flat, torch.tensor(target).reshape(-1) if lead else torch.tensor(target),
                                 weight=tw, label_smoothing=eps, reduction=red)
            code = "ids"
    if red == "none":
        t = t.reshape(lead)
    g.add(e, t, f"cross_entropy({g.name(x)}, {code}, ε={eps}, weight={weight is not None}, {red})")


def op_bce(g):
    x = g.pick(_has_dims)
    if x is None:
        return
    y = g.rng.random(x.e.shape).astype(g.dtype)
    if g.rng.random() < 0.5:
        y = (y < 0.5).astype(g.dtype)
    if g.rng.random() < 0.3:  # exact zeros: what a zero-initialised head produces
        x = g.add(x.e * 0.0, x.t * 0.0, f"{g.name(x)} * 0.0")
    w = np.abs(g.array(g.sub_shape(x.e.shape))) if g.rng.random() < 0.3 else None
    pw = np.abs(g.array(x.e.shape[-1:])) + 0.1 if g.rng.random() < 0.4 else None
    red = _reduction(g)
    e = F.binary_cross_entropy_with_logits(x.e, y, w, red, pos_weight=pw)
    t = TF.binary_cross_entropy_with_logits(x.t, torch.tensor(y), None if w is None else torch.tensor(w),
                                            reduction=red, pos_weight=None if pw is None else torch.tensor(pw))
    g.add(e, t, f"bce_with_logits({g.name(x)}, weight={w is not None}, pos_weight={pw is not None}, {red})")


def op_kl_mse_cos(g):
    x = g.pick(_has_dims)
    if x is None:
        return
    r = g.rng.random()
    if r < 0.4:
        ax = -1
        logq = (F.log_softmax(x.e, axis=ax), torch.log_softmax(x.t, dim=ax))
        p = g.rng.dirichlet(np.ones(x.e.shape[-1]), size=x.e.shape[:-1]).astype(g.dtype)
        p[g.rng.random(p.shape) < 0.2] = 0.0  # zero targets add 0
        red = _reduction(g, ("batchmean", "sum", "mean", "none"))
        g.add(F.kl_div(logq[0], p, reduction=red), TF.kl_div(logq[1], torch.tensor(p), reduction=red),
              f"kl_div(log_softmax({g.name(x)}), p, {red})")
    elif r < 0.7:
        other = g.pick(lambda n: n.e.shape == x.e.shape and n is not x)
        red = _reduction(g)
        if other is None:
            c = g.array(x.e.shape)
            g.add(F.mse_loss(x.e, c, red), TF.mse_loss(x.t, torch.tensor(c), reduction=red), f"mse({g.name(x)}, const, {red})")
        else:
            g.add(F.mse_loss(x.e, other.e, red), TF.mse_loss(x.t, other.t, reduction=red),
                  f"mse({g.name(x)}, {g.name(other)}, {red})")
    else:
        y = g.leaf(g.compatible_shape(x.e.shape))
        shape = np.broadcast_shapes(x.e.shape, y.e.shape)
        ax = int(g.rng.integers(-len(shape), len(shape)))
        g.add(F.cosine_similarity(x.e, y.e, axis=ax), TF.cosine_similarity(x.t, y.t, dim=ax),
              f"cosine_similarity({g.name(x)}, {g.name(y)}, axis={ax})")


OPS = {
    "unary": op_unary, "softmax": op_softmax, "binary": op_binary, "where": op_where,
    "masked_fill": op_masked_fill, "reduce": op_reduce, "reshape": op_reshape, "permute": op_permute,
    "index": op_index, "gather": op_gather, "cat": op_cat, "matmul": op_matmul, "linear": op_linear,
    "layer_norm": op_layer_norm, "embedding": op_embedding, "cross_entropy": op_cross_entropy,
    "bce": op_bce, "kl_mse_cos": op_kl_mse_cos,
}
