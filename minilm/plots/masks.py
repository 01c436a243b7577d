"""One figure with the attention mask of every objective, side by side (``minilm plot masks``).

A mask says which key j each query i may look at. Every family in minilm differs in this picture
more than anywhere else in the code (Raffel et al. 2020, §3.2.1, Figs. 3–4; Yang et al. 2019, §2.3):

    causal         GPT, every decoder           M[i, j] = j ≤ i
    padding        any batch with [PAD]         M[i, j] = key j is a real token
    prefix LM      UniLM, T5's prefix LM        M[i, j] = j ≤ i or j < P
    XLNet content  two-stream attention         i sees j iff j comes no later than i in the order
    XLNet query    two-stream attention         i sees j iff j comes strictly earlier in the order
    T5 enc–dec     encoder self / decoder self / cross (decoder queries, encoder keys)

The masks come from the library itself: ``minilm.blocks`` (causal, padding, prefix LM) and
``minilm.corruption.xlnet_inputs`` (Task 8.1's ``permutation_mask``). XLNet writes True for
"may NOT attend"; the figure flips it so that every panel reads the same way. A panel whose task
slot is not implemented yet (a student release) says so instead of stopping the figure.

Letters: T sequence length, P prefix length.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd.errors import ConfigError
from minilm.blocks import causal_mask, padding_mask, prefix_lm_mask
from minilm.corruption import xlnet_inputs
from minilm.plots import _plt, save_png

ATTEND, BLOCKED = "#3b6ea8", "#ececec"


def mask_panels(T: int = 8, prefix: int = 3, *, rng: np.random.Generator) -> list[dict]:
    """The panels of the figure: ``{"title", "mask" (Tq, Tk) bool True = may attend, "xlabels",
    "ylabels", "note"}``; a panel whose task slot raises ``NotImplementedError`` has ``mask=None``
    and the error in ``note``."""
    if T < 4:
        raise ConfigError(f"mask_panels: T={T} is too short to show anything, expected T >= 4")
    if not 0 < prefix < T:
        raise ConfigError(f"mask_panels: prefix={prefix} must be in [1, T-1] = [1, {T - 1}]")
    pos = [str(i) for i in range(T)]
    n_pad = 2
    attention_mask = np.array([[1] * (T - n_pad) + [0] * n_pad])         # (1, T): the last two are pads
    pad_rows = np.broadcast_to(padding_mask(attention_mask)[0, 0], (T, T))  # (T, T)
    pad_labels = pos[:T - n_pad] + ["PAD"] * n_pad
    panels = [
        {"title": "causal (GPT, decoders)", "mask": causal_mask(T), "xlabels": pos, "ylabels": pos,
         "note": "j ≤ i: never the future"},
        {"title": f"padding (last {n_pad} keys are [PAD])", "mask": pad_rows, "xlabels": pad_labels,
         "ylabels": pos, "note": "no query looks at a pad key"},
        {"title": f"prefix LM (prefix P = {prefix})", "mask": prefix_lm_mask(T, prefix),
         "xlabels": pos, "ylabels": pos, "note": f"j ≤ i or j < {prefix}"},
    ]
    panels += _xlnet_panels(T, rng=rng)
    panels += _t5_panels(T)
    return panels


def _xlnet_panels(T: int, *, rng) -> list[dict]:
    try:
        # K = 2: the last half of the order is predicted (the paper uses K = 6 or 7 on long texts)
        x = xlnet_inputs(np.arange(T), rng=rng, K=2)
    except NotImplementedError as e:
        return [{"title": title, "mask": None, "note": f"not implemented yet:\n{e}"}
                for title in ("XLNet content stream", "XLNet query stream")]
    order = x["order"]                                      # (T,) order[t] = position predicted at step t
    step = np.empty(T, dtype=np.int64)
    step[order] = np.arange(T)                              # step[i] = when position i comes
    targets = x["inp_q"].astype(bool)                       # (T,) predicted positions
    labels = [f"{i}{'*' if targets[i] else ''}" for i in range(T)]
    # a target is predicted at its step of the order; the context (no star) is seen all at once
    ylabels = [f"{i}* (step {step[i] + 1})" if targets[i] else str(i) for i in range(T)]
    note = "order " + "→".join(str(int(i)) for i in order) + ";  * = predicted"
    return [
        {"title": "XLNet content stream (h)", "mask": ~x["content_mask"], "xlabels": labels,
         "ylabels": ylabels, "note": note},
        {"title": "XLNet query stream (g)", "mask": ~x["perm_mask"], "xlabels": labels,
         "ylabels": ylabels, "note": "like h, but a target never sees itself"},
    ]


def _t5_panels(T: int) -> list[dict]:
    T_enc, T_dec = T - 2, T - 3                             # a shorter target, as in span corruption
    enc_attention = np.array([[1] * (T_enc - 1) + [0]])     # (1, T_enc): one pad at the end
    enc_keys = padding_mask(enc_attention)[0, 0]            # (1, T_enc)
    enc_labels = [f"x{i}" for i in range(T_enc - 1)] + ["PAD"]
    dec_labels = [f"y{i}" for i in range(T_dec)]
    return [
        {"title": "T5 encoder self-attention", "mask": np.broadcast_to(enc_keys, (T_enc, T_enc)),
         "xlabels": enc_labels, "ylabels": enc_labels, "note": "fully visible, pads hidden"},
        {"title": "T5 decoder self-attention", "mask": causal_mask(T_dec), "xlabels": dec_labels,
         "ylabels": dec_labels, "note": "causal over the target"},
        {"title": "T5 cross-attention", "mask": np.broadcast_to(enc_keys, (T_dec, T_enc)),
         "xlabels": enc_labels, "ylabels": dec_labels, "note": "decoder queries, encoder keys"},
    ]


def _draw(ax, panel) -> None:
    from matplotlib.colors import ListedColormap  # matplotlib loads only to draw (plots/__init__.py)
    ax.set_title(panel["title"], fontsize=10, pad=6)
    if panel["mask"] is None:
        ax.text(0.5, 0.5, panel["note"], ha="center", va="center", fontsize=8, wrap=True,
                transform=ax.transAxes, color="#a03030")
        ax.set_xticks([])
        ax.set_yticks([])
        return
    m = np.asarray(panel["mask"], dtype=float)              # (Tq, Tk): 1 = may attend
    Tq, Tk = m.shape
    ax.imshow(m, cmap=ListedColormap([BLOCKED, ATTEND]), vmin=0, vmax=1, aspect="equal")
    ax.set_xticks(range(Tk), panel["xlabels"], fontsize=7, rotation=90)
    ax.set_yticks(range(Tq), panel["ylabels"], fontsize=7)
    ax.set_xticks(np.arange(Tk + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(Tq + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1.2)
    ax.tick_params(which="minor", length=0)
    ax.tick_params(which="major", length=2, pad=2)
    ax.set_xlabel(f"key j\n{panel['note']}", fontsize=7.5)
    ax.set_ylabel("query i", fontsize=8)


def masks_figure(path, *, T: int = 8, prefix: int = 3, rng: np.random.Generator) -> Path:
    """Draw every objective's mask (see the module docstring) into one PNG; returns its path."""
    plt = _plt()
    from matplotlib.patches import Patch  # matplotlib loads only to draw (plots/__init__.py)
    panels = mask_panels(T, prefix, rng=rng)
    cols = 4
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 3.7 * rows), layout="constrained")
    for ax, panel in zip(axes.flat, panels):
        _draw(ax, panel)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.legend(handles=[Patch(color=ATTEND, label="query i may attend to key j"),
                        Patch(color=BLOCKED, label="masked out")],
               loc="outside lower center", ncol=2, frameon=False, fontsize=9)
    fig.suptitle("Attention masks of the pre-training objectives (rows = queries, columns = keys)",
                 fontsize=12)
    return save_png(fig, path, keep=[ATTEND, BLOCKED, "#a03030"])
