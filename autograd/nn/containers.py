"""Containers: ``ModuleList`` (an indexable list of modules) and ``Sequential`` (a pipeline).

A plain Python list of layers is invisible to ``Module``'s bookkeeping — its parameters would be
missing from ``parameters()`` and the optimiser would never update them. ``ModuleList`` registers
each entry under its index, so a GPT's blocks are named ``blocks.0.attn...``, ``blocks.1.attn...``
exactly as in PyTorch and Hugging Face checkpoints.
"""
from __future__ import annotations

from ..errors import ConfigError
from .module import Module


class ModuleList(Module):
    """``ModuleList([block0, block1])``: ``len``, ``[i]``, iteration, ``append``, ``extend``."""

    def __init__(self, modules=()):
        super().__init__()
        self.extend(modules)

    def _check(self, module):
        if not isinstance(module, Module):
            raise ConfigError(f"{type(self).__name__}: entries must be Modules, got {type(module).__name__}")
        return module

    def append(self, module: Module) -> "ModuleList":
        setattr(self, str(len(self._modules)), self._check(module))
        return self

    def extend(self, modules) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(list(self._modules.values()))

    def _index(self, i: int) -> str:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"{type(self).__name__}: index {i} out of range for {n} modules")
        return str(i % n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ModuleList(list(self._modules.values())[i])
        return self._modules[self._index(i)]

    def __setitem__(self, i: int, module: Module):
        setattr(self, self._index(i), self._check(module))

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(): loop over it in your model's forward")


class Sequential(ModuleList):
    """``Sequential(Linear(2, 64, rng=rng), ReLU(), Linear(64, 3, rng=rng))``: ``forward(x)``
    feeds ``x`` through each module in turn."""

    def __init__(self, *modules: Module):
        super().__init__(modules)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Sequential(*list(self._modules.values())[i])
        return super().__getitem__(i)

    def forward(self, x):
        for module in self:
            x = module(x)
        return x
