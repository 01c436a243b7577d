"""Compute kernels behind the engine's heavy operations, each beside its NumPy reference.

``set_backend("numba" | "numpy")`` switches every kernel at once. (Being written: for now only the
NumPy references exist.)
"""
import numpy as np

from .errors import MiniLMError

BACKENDS = ("numba", "numpy")
_backend = "numpy"


def set_backend(name: str) -> None:
    """Choose the implementation of every kernel: ``"numba"`` or ``"numpy"``."""
    global _backend
    if name not in BACKENDS:
        raise MiniLMError(f"set_backend: unknown backend {name!r}; expected one of {BACKENDS}")
    _backend = name


def get_backend() -> str:
    return _backend


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched ``a @ b`` (batch dimensions broadcast)."""
    return np.matmul(a, b)
