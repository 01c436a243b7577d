"""Figures (matplotlib, PNG, no screen needed). Each function returns the path it wrote."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return path


def smooth(values, window: int = 10) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if len(values) < window:
        return values
    kernel = np.ones(window) / window
    return np.convolve(values, kernel, mode="valid")


def demo_figure(demo, path) -> Path:
    """The demo's two loss curves and the [CLS] distance matrix of the six sentences."""
    plt = _plt()
    from minilm.data import SEED_SENTENCES
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, values in demo.history.items():
        ax1.plot(values, alpha=0.3)
        ax1.plot(np.arange(len(smooth(values))) + 9, smooth(values), label=name.replace("_", " "))
    ax1.set_xlabel("step")
    ax1.set_ylabel("cross-entropy (nats)")
    ax1.set_title("GPT and BERT objectives, one shared network")
    ax1.legend()
    d = demo.cls_distances()
    im = ax2.imshow(d, cmap="viridis")
    ax2.set_xticks(range(len(d)), SEED_SENTENCES, rotation=40, ha="right")
    ax2.set_yticks(range(len(d)), SEED_SENTENCES)
    ax2.set_title("distance between h[CLS] vectors")
    fig.colorbar(im, ax=ax2)
    return _save(fig, path)


def loss_curves(histories: dict, path, title: str = "training loss") -> Path:
    """Several runs' loss curves together: ``{"run name": {"step": [...], "loss": [...]}}``."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, h in histories.items():
        steps, loss = np.asarray(h["step"]), np.asarray(h["loss"])
        ax.plot(steps, loss, alpha=0.25)
        s = smooth(loss)
        ax.plot(steps[len(steps) - len(s):], s, label=f"{name}")
        if h.get("eval_step"):
            ax.plot(h["eval_step"], h["eval_loss"], "o--", label=f"{name} (held out)")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.legend()
    return _save(fig, path)
