"""Learning-rate schedules: a multiplier of the base learning rate for each step, and
``LambdaLR``, which applies one to an optimiser (``torch.optim.lr_scheduler.LambdaLR``).

With W warm-up steps and S total steps (step s counts optimiser steps from 0):

* ``warmup_linear``:  s/W during warm-up, then (S − s)/(S − W) down to 0 at S
  (BERT, RoBERTa; Hugging Face's ``get_linear_schedule_with_warmup``);
* ``warmup_cosine``:  s/W during warm-up, then r + (1 − r)·½(1 + cos(π·p)) with
  p = (s − W)/(S − W), from 1 down to the floor r = ``min_ratio`` at S and r after it
  (GPT-3, nanoGPT);
* ``warmup_constant``: s/W during warm-up, then 1.

As in Hugging Face, the multiplier at step 0 is 0 when W > 0: the first update moves nothing.

Usage::

    from functools import partial
    scheduler = LambdaLR(optimizer, partial(warmup_cosine, warmup=100, total=2000, min_ratio=0.1))
    for step in range(2000):
        ...; loss.backward(); optimizer.step(); scheduler.step(); optimizer.zero_grad()
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import CheckpointError, ConfigError


def _check(op: str, step: int, warmup: int, total: int | None = None) -> None:
    if step < 0 or warmup < 0:
        raise ConfigError(f"{op}: step={step}, warmup={warmup} must be >= 0")
    if total is not None and not warmup <= total:
        raise ConfigError(f"{op}: warmup={warmup} must be <= total={total}")


def warmup_constant(step: int, warmup: int) -> float:
    _check("warmup_constant", step, warmup)
    return step / warmup if step < warmup else 1.0


def warmup_linear(step: int, warmup: int, total: int) -> float:
    _check("warmup_linear", step, warmup, total)
    if step < warmup:
        return step / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def warmup_cosine(step: int, warmup: int, total: int, min_ratio: float = 0.0) -> float:
    _check("warmup_cosine", step, warmup, total)
    if not 0.0 <= min_ratio <= 1.0:
        raise ConfigError(f"warmup_cosine: min_ratio={min_ratio} is outside [0, 1]")
    if step < warmup:
        return step / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))  # 0 → 1, then held at 1
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


class LambdaLR:
    """Sets each param group's ``lr`` to ``base_lr · lr_lambda(step)``.

    ``base_lr`` is each group's lr when the scheduler is made; step 0's multiplier is applied at
    once, and ``step()`` (call it after ``optimizer.step()``) moves to the next step.
    """

    def __init__(self, optimizer, lr_lambda):
        self.optimizer = optimizer
        self.lr_lambda = lr_lambda
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.last_step = 0
        self._apply()

    def _apply(self) -> None:
        multiplier = float(self.lr_lambda(self.last_step))
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * multiplier

    def step(self) -> None:
        self.last_step += 1
        self._apply()

    def get_last_lr(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Plain numbers and arrays (``np.savez``-able), like ``Optimizer.state_dict``."""
        return {"last_step": self.last_step, "base_lrs": np.array(self.base_lrs, dtype=float)}

    def load_state_dict(self, state_dict: dict) -> None:
        missing = sorted({"last_step", "base_lrs"} - set(state_dict))
        unexpected = sorted(set(state_dict) - {"last_step", "base_lrs"})
        if missing or unexpected:
            raise CheckpointError(f"LambdaLR.load_state_dict: missing keys {missing}, "
                                  f"unexpected keys {unexpected}")
        base_lrs = np.asarray(state_dict["base_lrs"], dtype=float).reshape(-1)
        if len(base_lrs) != len(self.optimizer.param_groups):
            raise CheckpointError(f"LambdaLR.load_state_dict: {len(base_lrs)} base_lrs for "
                                  f"{len(self.optimizer.param_groups)} param groups")
        self.base_lrs = [float(b) for b in base_lrs]
        self.last_step = int(np.asarray(state_dict["last_step"]))
        self._apply()
