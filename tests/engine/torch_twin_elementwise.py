"""torch_twin.py's elementwise ops: unary functions, softmax, and binaries with broadcasting.

The binaries mix a node with a Python or NumPy number, a constant NumPy array on the left (ndarray op
Tensor defers to the Tensor), another node of a shape that broadcasts, or a new leaf; ``where`` and
``masked_fill`` take a random condition of a shape that broadcasts.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as TF

import autograd.functional as F
from autograd import where

from .torch_twin_graph import _axis, _has_dims


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
