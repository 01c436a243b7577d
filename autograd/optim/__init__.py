"""Optimisers, gradient clipping and learning-rate schedules: ``from autograd import optim``.

* ``optimizer.py`` — ``Optimizer``: param groups, ``zero_grad``, ``step``, ``state_dict``;
* ``algorithms.py`` — ``SGD``, ``Adam``, ``AdamW`` (the update rules and their equations);
* ``clip.py`` — ``clip_grad_norm_``;
* ``schedules.py`` — ``warmup_linear``, ``warmup_cosine``, ``warmup_constant``, ``LambdaLR``.

A training step::

    loss = model(x, y); loss.backward()
    optim.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step(); scheduler.step(); optimizer.zero_grad()
"""
from .algorithms import SGD, Adam, AdamW
from .clip import clip_grad_norm_
from .optimizer import Optimizer
from .schedules import LambdaLR, warmup_constant, warmup_cosine, warmup_linear

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "clip_grad_norm_", "LambdaLR", "warmup_linear",
    "warmup_cosine", "warmup_constant",
]
