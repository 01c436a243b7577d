"""The pool of torch_twin.py's graphs: every node one value computed in the engine and in PyTorch.

A :class:`Graph` holds a pool of nodes; each node is the same value computed both ways (``e`` the
engine's Tensor, ``t`` PyTorch's tensor) plus the line of code that made it, so a failing example
prints a readable program. ``_axis``, ``_axes`` and ``_has_dims`` are the draws the ops share.
"""
from __future__ import annotations

import numpy as np
import torch

from autograd import Tensor

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
