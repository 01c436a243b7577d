"""Figures (matplotlib, PNG, no screen needed). Each function returns the path it wrote.

matplotlib (and Pillow, which it brings) is imported inside the functions that draw: it takes
~0.5 s to load, and most runs of the kit draw nothing.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from minilm.data import SEED_SENTENCES
from minilm.io import atomic_open


def _plt():
    """matplotlib's pyplot on the Agg backend (files only, no screen); imported on first use."""
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
    # constrained layout makes room for the matrix's long row labels (the sentences) between the
    # two panels; with a fixed layout they ran into the loss plot.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6), layout="constrained",
                                   gridspec_kw={"width_ratios": [1.15, 1]})
    names = {"gpt_loss": "GPT (next character)", "mlm_loss": "BERT (masked characters)"}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    window = 10
    for k, (key, values) in enumerate(demo.history.items()):
        c = colours[k % len(colours)]
        s = smooth(values, window)
        ax1.plot(values, color=c, alpha=0.25, linewidth=0.8)
        ax1.plot(np.arange(len(s)) + (len(values) - len(s)), s, color=c, linewidth=2,
                 label=names.get(key, key))  # each average drawn at its window's last step
    ax1.set_xlabel("step")
    ax1.set_ylabel("cross-entropy (nats)")
    ax1.set_title("GPT and BERT objectives, one shared network")
    ax1.grid(alpha=0.3)
    ax1.legend(frameon=False)
    d = demo.cls_distances()
    im = ax2.imshow(d, cmap="viridis")
    ax2.set_xticks(range(len(d)), SEED_SENTENCES, rotation=40, ha="right")
    ax2.set_yticks(range(len(d)), SEED_SENTENCES)
    ax2.set_title("distance between h[CLS] vectors")
    fig.colorbar(im, ax=ax2, label="Euclidean distance")
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


def compare_loss_curves(histories: dict, path, title: str = "training loss") -> Path:
    """Several runs on one plot, one colour per run: every step faint, a moving average bold,
    held-out evaluations as dashed markers. ``histories``: ``{"run name": history.json's dict}``.
    (``loss_curves`` gives each of those three lines its own colour, which is fine for one run.)"""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (name, h) in enumerate(histories.items()):
        c = colours[k % len(colours)]
        steps, loss = np.asarray(h["step"]), np.asarray(h["loss"], dtype=float)
        ax.plot(steps, loss, color=c, alpha=0.2, linewidth=0.8)
        window = max(1, min(50, len(loss) // 20))          # ~5% of the run, at most 50 steps
        s = smooth(loss, window)
        start = (len(steps) - len(s)) // 2                 # each average drawn at its window's centre
        ax.plot(steps[start:start + len(s)], s, color=c, linewidth=2, label=f"{name}: training")
        if h.get("eval_step"):
            ax.plot(h["eval_step"], h["eval_loss"], "o--", color=c, markersize=4, linewidth=1,
                    label=f"{name}: held out")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats / token)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    return _save(fig, path)


def save_png(fig, path, dpi: int = 110, keep=()) -> Path:
    """Like ``_save``, but as a 256-colour PNG, for figures of flat colours and text (tables, masks;
    not heat maps). The colours in ``keep`` (matplotlib colour specs: the fills the figure uses) and
    the commonest others are kept exactly; every other pixel (an anti-aliased edge) takes the nearest
    of them. The file comes out about three times smaller and looks the same."""
    from matplotlib.colors import to_rgb  # matplotlib and Pillow: loaded only to draw (module docstring)
    from PIL import Image
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    _plt().close(fig)
    rgb = np.asarray(Image.open(buf).convert("RGB"), dtype=np.int64)          # (Hpx, Wpx, 3)
    pack = lambda a: (a[..., 0] << 16) | (a[..., 1] << 8) | a[..., 2]          # noqa: E731
    unpack = lambda c: np.stack([(c >> 16) & 255, (c >> 8) & 255, c & 255], axis=-1)  # noqa: E731
    colours, inverse, counts = np.unique(pack(rgb).ravel(), return_inverse=True, return_counts=True)
    wanted = pack(np.round(np.array([to_rgb(c) for c in keep]).reshape(-1, 3) * 255).astype(np.int64))
    by_count = colours[np.argsort(-counts, kind="stable")]
    palette = np.unique(wanted)[:256]
    palette = np.concatenate([palette, by_count[~np.isin(by_count, palette)][:256 - palette.size]])
    distance = ((unpack(colours)[:, None, :] - unpack(palette)[None, :, :]) ** 2).sum(-1)  # (U, ≤256)
    index = distance.argmin(axis=1)[inverse].reshape(rgb.shape[:2]).astype(np.uint8)
    image = Image.frombytes("P", (index.shape[1], index.shape[0]), index.tobytes())
    image.putpalette(unpack(palette).astype(np.uint8).ravel().tolist())
    with atomic_open(path, "wb") as f:
        image.save(f, format="PNG", optimize=True)
    return path
