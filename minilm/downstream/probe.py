"""Softmax regression fitted by full-batch gradient descent — the one linear classifier behind the
bag-of-words baseline (``baselines.BagOfWordsClassifier``) and the frozen-encoder probes
(``probe_accuracy``, used by the ELECTRA experiments). Pure NumPy, no autograd.

    p(y | x) = softmax(x W + b)
    L(W, b)  = mean_n −log p(y_n | x_n) + l2/2 · ‖W‖²      (the bias is not decayed)
    ∂L/∂z    = (P − Y) / N                                  z = x W + b, Y one-hot

The loss is convex, so W and b start at zero and the result depends on no initialisation (nor on
any randomness): the same features give the same classifier.

Letters: N examples, F features, K classes.
"""
from __future__ import annotations

import numpy as np

__all__ = ["softmax", "fit_softmax_regression", "probe_accuracy", "PROBE_STEPS", "PROBE_LR", "PROBE_L2"]

PROBE_STEPS, PROBE_LR, PROBE_L2 = 300, 0.5, 1e-2


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax (N, K) → (N, K), shifted by each row's maximum so that exp cannot overflow."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def fit_softmax_regression(X: np.ndarray, y: np.ndarray, num_classes: int, *, steps: int, lr: float,
                           l2: float) -> tuple[np.ndarray, np.ndarray]:
    """``(W (F, K), b (K,))`` after ``steps`` full-batch gradient steps of size ``lr`` on the loss of
    the module docstring, from W = 0, b = 0. ``X`` (N, F) float, ``y`` (N,) integers in [0, K)."""
    N = len(y)
    Y = np.zeros((N, num_classes))
    Y[np.arange(N), y] = 1.0                              # (N, K) one-hot
    W, b = np.zeros((X.shape[1], num_classes)), np.zeros(num_classes)
    for _ in range(steps):
        G = (softmax(X @ W + b) - Y) / N                  # (N, K): d(mean CE)/d(logits)
        W -= lr * (X.T @ G + l2 * W)
        b -= lr * G.sum(axis=0)
    return W, b


def probe_accuracy(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *,
                   steps: int = PROBE_STEPS, lr: float = PROBE_LR, l2: float = PROBE_L2) -> float:
    """Test accuracy of a softmax regression fitted on standardised features (a linear probe of a
    frozen encoder's sentence vectors). The mean and standard deviation of every feature come from
    the training rows only."""
    mu, sd = x_train.mean(0), x_train.std(0) + 1e-6
    a, b_ = (x_train - mu) / sd, (x_test - mu) / sd                           # (N, F)
    K = int(max(y_train.max(), y_test.max())) + 1
    W, b = fit_softmax_regression(a, y_train, K, steps=steps, lr=lr, l2=l2)
    return float(((b_ @ W + b).argmax(1) == y_test).mean())
