"""torch_twin.py's reductions and movement: sum / mean / max, reshape, permute, indexing, gather, cat.

Indexing draws an integer, a slice, an integer array with repeats (the gradient must accumulate),
``[..., ids]`` or a boolean mask.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from autograd import cat, stack

from .torch_twin_graph import _axes, _axis, _has_dims


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
