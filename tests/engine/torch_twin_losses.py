"""torch_twin.py's losses: cross entropy, NLL, BCE with logits, KL divergence, MSE, cosine similarity.

Only the class axis differs by design (last here, axis 1 in PyTorch for inputs of more than two
dimensions): the PyTorch side flattens to (N, V) first. docs/engine.md lists every difference.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as TF

import autograd.functional as F

from .torch_twin_graph import _has_dims


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
            t = TF.nll_loss(torch.log_softmax(flat, -1),
                            torch.tensor(target).reshape(-1) if lead else torch.tensor(target),
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
            g.add(F.mse_loss(x.e, c, red), TF.mse_loss(x.t, torch.tensor(c), reduction=red),
                  f"mse({g.name(x)}, const, {red})")
        else:
            g.add(F.mse_loss(x.e, other.e, red), TF.mse_loss(x.t, other.t, reduction=red),
                  f"mse({g.name(x)}, {g.name(other)}, {red})")
    else:
        y = g.leaf(g.compatible_shape(x.e.shape))
        shape = np.broadcast_shapes(x.e.shape, y.e.shape)
        ax = int(g.rng.integers(-len(shape), len(shape)))
        g.add(F.cosine_similarity(x.e, y.e, axis=ax), TF.cosine_similarity(x.t, y.t, dim=ax),
              f"cosine_similarity({g.name(x)}, {g.name(y)}, axis={ax})")
