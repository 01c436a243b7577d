"""torch_twin.py's layers: matmul (batched, broadcasting, either side), linear, layer norm, embedding.

``linear`` is the fused ``Linear`` op or an ``nn.Linear`` without bias; ``layer_norm`` normalises over
the last one or more axes, with or without weight and bias.
"""
from __future__ import annotations

import torch
import torch.nn.functional as TF

import autograd.functional as F
from autograd import fused

from .torch_twin_graph import _has_dims


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
        g.add(fused.Linear.apply(x.e, w.e, b.e), TF.linear(x.t, w.t, b.t),
              f"linear({g.name(x)}, {g.name(w)}, {g.name(b)})")
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
