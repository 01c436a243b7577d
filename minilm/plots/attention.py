"""Attention maps of a trained model, one panel per layer and head (``minilm plot attention``).

Head h of a layer computes ``A = softmax(Q Kᵀ / √d + mask)`` (Vaswani et al. 2017, §3.2.1): row i
is how much query token i takes from each key token j, and every row sums to 1. After a forward
pass each :class:`~minilm.blocks.MultiHeadAttention` keeps these probabilities in
``last_attention`` (B, H, Tq, Tk); this module runs one sentence through a checkpoint and draws
them. A GPT's maps are lower-triangular (the causal mask); a BERT's are full. Trained heads often
specialise: one looks at the previous token, one at the first token or at [SEP], one at the same
word elsewhere (Clark et al. 2019, "What Does BERT Look At?").

Letters: H heads, T tokens, L attention layers.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd import no_grad
from autograd.errors import ShapeError
from minilm.blocks import MultiHeadAttention
from minilm.checkpoint import load_model
from minilm.plots import _plt, _save

MASKED = "#dddddd"


def context_length(model) -> int | None:
    """The longest input the model takes (GPT: block_size; BERT: max_position_embeddings)."""
    cfg = getattr(model, "config", None)
    for name in ("block_size", "max_position_embeddings", "n_positions"):
        if cfg is not None and getattr(cfg, name, None):
            return int(getattr(cfg, name))
    return None


def encode_for(model, tokenizer, text: str, *, causal: bool, max_tokens: int = 24) -> np.ndarray:
    """``text`` as the model reads it: plain ids for a causal LM, ``[CLS] … [SEP]`` for an encoder
    (when the tokenizer has them); cut to ``max_tokens`` and to the model's context."""
    ids = list(tokenizer.encode(text))
    if not causal and getattr(tokenizer, "cls_id", None) is not None and tokenizer.sep_id is not None:
        ids = [tokenizer.cls_id, *ids, tokenizer.sep_id]
    limit = min(max_tokens, context_length(model) or max_tokens)
    if not ids:
        raise ShapeError(f"plot attention: the text {text!r} gives no tokens")
    return np.asarray(ids[:limit], dtype=np.int64)


def attention_maps(model, ids) -> list[tuple[str, np.ndarray]]:
    """Run ``model(ids[None])`` without gradients and return ``(module name, A (H, T, T))`` for
    every attention module that ran, in the order of the model's modules."""
    ids = np.asarray(ids, dtype=np.int64)
    attn = [(name, m) for name, m in model.named_modules() if isinstance(m, MultiHeadAttention)]
    for _, m in attn:
        m.last_attention = None                             # only maps from this forward count
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            model(ids[None])                                # (1, T)
    finally:
        model.train(was_training)
    return [(name, np.asarray(m.last_attention)[0]) for name, m in attn if m.last_attention is not None]


def attention_figure(maps, tokens, path, *, title: str = "") -> Path:
    """Draw ``maps`` (from :func:`attention_maps`) as an L × H grid with the tokens on the axes."""
    plt = _plt()
    from matplotlib.colors import PowerNorm  # matplotlib loads only to draw (plots/__init__.py)
    if not maps:
        raise ShapeError("plot attention: the model ran no attention module (no maps to draw)")
    L, H = len(maps), max(a.shape[0] for _, a in maps)
    T = len(tokens)
    panel = min(2.6, max(1.6, 20.0 / H), 0.16 * T + 1.0)
    fig, axes = plt.subplots(L, H, figsize=(panel * H + 1.6, panel * L + 1.2), squeeze=False,
                             layout="constrained")
    font = 7 if T <= 16 else 6 if T <= 28 else 5
    # a square-root colour scale: a head that spreads 1/T over every key is still visible
    norm = PowerNorm(gamma=0.5, vmin=0.0, vmax=1.0)
    cmap = plt.get_cmap("Blues").with_extremes(bad=MASKED)  # weight exactly 0: the mask hid that key
    image = None
    for row, (name, att) in enumerate(maps):
        for h in range(H):
            ax = axes[row, h]
            if h >= att.shape[0]:
                ax.axis("off")
                continue
            image = ax.imshow(np.ma.masked_equal(att[h], 0.0), cmap=cmap, norm=norm, interpolation="nearest")
            ax.set_xticks(range(att.shape[2]), tokens[:att.shape[2]] if row == L - 1 else [],
                          rotation=90, fontsize=font)
            ax.set_yticks(range(att.shape[1]), tokens[:att.shape[1]] if h == 0 else [], fontsize=font)
            ax.tick_params(length=1.5, pad=1.5)
            if row == 0:
                ax.set_title(f"head {h}", fontsize=9)
            if h == 0:
                ax.set_ylabel(f"layer {row}\n({name})\nquery", fontsize=8)
            if row == L - 1:
                ax.set_xlabel("key", fontsize=8)
    fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight (√ scale); grey: masked")
    if title:
        fig.suptitle(title, fontsize=11)
    return _save(fig, path)


def attention_plot(checkpoint, text: str, path, *, max_tokens: int = 24) -> Path:
    """Load ``checkpoint`` (``minilm train``'s ``checkpoint.npz``), run ``text`` and draw its maps."""
    model, tokenizer, meta = load_model(checkpoint)
    if tokenizer is None:
        raise ShapeError(f"plot attention: {checkpoint} holds no tokenizer, so the text cannot be encoded")
    family = meta.get("family", type(model).__name__)
    causal = family in ("gpt", "transformer-xl") or type(model).__name__ == "GPT"
    ids = encode_for(model, tokenizer, text, causal=causal, max_tokens=max_tokens)
    maps = attention_maps(model, ids)
    tokens = tokenizer.convert_ids_to_tokens(ids)
    step = meta.get("step")
    title = f"{family} attention on \"{text if len(text) < 90 else text[:87] + '...'}\""
    if step is not None:
        title += f"  (checkpoint after {int(step) + 1} steps)"
    return attention_figure(maps, tokens, path, title=title)
