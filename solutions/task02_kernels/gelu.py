"""Task 2.5 (part 2): GELU, forward and backward, in its exact and its tanh form.

GELU (Hendrycks & Gimpel 2016) weighs x by the probability that a standard normal is below it:

    exact ("none"):  gelu(x) = x·Φ(x),   Φ(x) = ½·(1 + erf(x/√2)),   φ(x) = exp(−x²/2)/√(2π)
    tanh  ("tanh"):  gelu(x) ≈ ½·x·(1 + tanh(u)),   u = √(2/π)·(x + 0.044715·x³)

BERT's TensorFlow code (google-research/bert, ``modeling.py``) and GPT-2 (openai/gpt-2, ``src/model.py``)
use the tanh form of Hendrycks & Gimpel 2016, §2 (it differs from the exact one by at most 4.7e-4,
near x ≈ −2.70); Hugging Face's BERT ``"gelu"`` and PyTorch's default are exact.

Derivatives (the backward multiplies them by grad_output):

    exact:  d/dx x·Φ(x) = Φ(x) + x·φ(x)
    tanh:   d/dx = ½·(1 + t) + ½·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²),   t = tanh(u)

NumPy has no erf; use ``erf`` from ``autograd.kernels`` (``math.erf`` applied elementwise: exact,
but slow — the numba backend calls ``math.erf`` in compiled code). x: any shape; keep its dtype.
"""
import math

import numpy as np

from autograd.errors import ConfigError
from autograd.kernels import erf


def _check(approximate):
    if approximate not in ("tanh", "none"):
        raise ConfigError(f"gelu: approximate={approximate!r}, expected 'tanh' or 'none'")


def gelu_forward(x, approximate="tanh"):
    """Task 2.5: gelu(x) in the tanh form (``approximate="tanh"``) or exact (``"none"``).

    Tests check: both forms against float64 references at x in [−6, 6] to 1e-7 (a wrong constant —
    0.0447 or √(1/π), say — fails); the exact form against math.erf; float32 stays float32.
    """
    _check(approximate)
    # BEGIN SOLUTION
    if approximate == "tanh":
        u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + np.tanh(u))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    # END SOLUTION


def gelu_backward(grad_output, x, approximate="tanh"):
    """Task 2.5: dL/dx = grad_output · gelu'(x) for the chosen form (formulas in the module docstring).

    Tests check: both forms against central differences of the references (float64, random
    upstream gradient).
    """
    _check(approximate)
    # BEGIN SOLUTION
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        t = np.tanh(k * (x + 0.044715 * x * x * x))
        slope = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x)
    else:
        cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
        pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
        slope = cdf + x * pdf
    return grad_output * slope
    # END SOLUTION
