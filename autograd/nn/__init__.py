"""Neural-network building blocks, PyTorch-style: ``from autograd import nn``.

* ``module.py`` — ``Parameter`` and ``Module`` (registration, dotted names, ``state_dict``,
  ``load_state_dict``, ``train``/``eval``, ``zero_grad``);
* ``containers.py`` — ``ModuleList``, ``Sequential``;
* ``layers.py`` — ``Linear``, ``Embedding``, ``LayerNorm``, ``Dropout``, ``ReLU``, ``GELU``,
  ``Tanh``, ``Identity``.

``nn.functional`` is ``autograd.functional`` (as ``torch.nn.functional``).
"""
from .. import functional
from .containers import ModuleList, Sequential
from .layers import GELU, Dropout, Embedding, Identity, LayerNorm, Linear, ReLU, Tanh, check_rng
from .module import LoadResult, Module, Parameter

__all__ = [
    "Parameter", "Module", "LoadResult", "ModuleList", "Sequential", "Linear", "Embedding", "LayerNorm",
    "Dropout", "ReLU", "GELU", "Tanh", "Identity", "check_rng", "functional",
]
