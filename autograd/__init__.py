"""autograd: a small reverse-mode automatic differentiation engine over NumPy.

    from autograd import Tensor, no_grad, gradcheck, set_backend
    import autograd.functional as F
    from autograd import nn, optim

Read in this order: ``tensor.py`` (Tensor, backward), ``function.py`` (Function: forward and
backward side by side), ``elementwise.py``, ``reductions.py``, ``movement.py``, ``linalg.py``
(the primitives), ``functional.py`` and ``losses.py`` (ops composed from primitives), ``fused.py`` and
``kernels/`` (the fast paths: numba kernels beside their NumPy references), ``nn/``, ``optim/``.
Task slots are bound through ``tasks.py``.

The engine follows PyTorch's semantics wherever PyTorch has the op; the few places where it
deliberately does not (a 2-D ``transpose(i, j)``, a mean over all-ignored targets, the class
axis, defaults, ...) are listed in ``docs/engine.md`` ("Differences from PyTorch"), and
``tests/engine/test_vs_torch.py`` checks the rest against PyTorch when it is installed.
"""
from . import errors, tasks
from .errors import (CheckpointError, ConfigError, GradcheckError, IndexOutOfRangeError, MiniLMError,
                     ShapeError, TokenizerError, TrainingError)
from .tensor import Tensor, enable_grad, is_grad_enabled, no_grad, tensor
from .function import Function
from .movement import cat, stack, where
from .gradcheck import gradcheck
from .kernels import get_backend, set_backend
from . import nn, optim

__all__ = [
    "Tensor", "tensor", "no_grad", "enable_grad", "is_grad_enabled", "Function", "gradcheck", "set_backend",
    "get_backend", "cat", "stack", "where", "errors", "tasks", "nn", "optim", "MiniLMError", "ShapeError",
    "IndexOutOfRangeError", "GradcheckError", "CheckpointError", "TokenizerError", "ConfigError", "TrainingError",
]
