"""End to end: the engine trains. A 2-layer MLP (one hidden layer) fits two interleaved spirals —
a set no linear classifier can separate — with nn, cross-entropy, AdamW, a schedule and clipping."""
from functools import partial

import numpy as np

from autograd import nn, no_grad, optim
import autograd.functional as F


def spirals(n: int, *, rng: np.random.Generator, noise: float = 0.2):
    """Two spiral arms of 1.5 turns, class 0 and class 1 half a turn apart; x (n, 2) float32, y (n,)."""
    y = rng.integers(0, 2, n)
    angle = np.sqrt(rng.uniform(0, 1, n)) * 3 * np.pi  # sqrt: even density along the arm
    x = np.stack([angle * np.cos(angle + np.pi * y), angle * np.sin(angle + np.pi * y)], axis=1)
    x = x + rng.normal(0, noise, x.shape)
    return (x / (3 * np.pi)).astype(np.float32), y


class MLP(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes, *, rng):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden, rng=rng)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, n_classes, rng=rng)

    def forward(self, x):  # (N, d_in) -> (N, n_classes)
        return self.fc2(self.act(self.fc1(x)))


def fit(model, x, y, *, steps, lr):
    decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
    opt = optim.AdamW([{"params": decay, "weight_decay": 1e-4}, {"params": no_decay, "weight_decay": 0.0}], lr=lr)
    sched = optim.LambdaLR(opt, partial(optim.warmup_cosine, warmup=20, total=steps, min_ratio=0.1))
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def accuracy(model, x, y):
    with no_grad():
        return float((model(x).data.argmax(axis=-1) == y).mean())


def test_mlp_fits_spirals():
    rng = np.random.default_rng(0)
    x, y = spirals(300, rng=rng)
    model = MLP(2, 128, 2, rng=rng)
    losses = fit(model, x, y, steps=400, lr=0.02)
    assert losses[-1] < 0.25 * losses[0]
    assert accuracy(model, x, y) >= 0.95
    assert all(p.dtype == np.float32 for p in model.parameters())


def test_a_linear_model_cannot_fit_spirals():
    # the control: the hidden layer is what makes the fit possible
    rng = np.random.default_rng(0)
    x, y = spirals(300, rng=rng)
    linear = nn.Linear(2, 2, rng=rng)
    fit(linear, x, y, steps=200, lr=0.05)
    assert accuracy(linear, x, y) < 0.8


def test_sgd_with_momentum_fits_blobs():
    rng = np.random.default_rng(1)
    centres = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    y = rng.integers(0, 3, 300)
    x = (centres[y] + rng.normal(0, 0.5, (300, 2))).astype(np.float32)
    model = nn.Sequential(nn.Linear(2, 32, rng=rng), nn.Tanh(), nn.Linear(32, 3, rng=rng))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(100):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert accuracy(model, x, y) >= 0.95
