"""Small helpers shared by tests (independent of any task slot)."""
import numpy as np


def numeric_grad(f, x: np.ndarray, upstream: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d/dx Σ upstream · f(x) by central differences, in float64. ``f`` maps an array to an array."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        plus = np.sum(upstream * f(x))
        x[i] = old - eps
        minus = np.sum(upstream * f(x))
        x[i] = old
        grad[i] = (plus - minus) / (2 * eps)
    return grad
