"""Static word vectors from a trained BERT, per layer and per pooling, and how good they are.

Bommasani, Davis & Cardie 2020, "Interpreting Pretrained Contextualized Representations via
Reductions to Static Embeddings" (code: rishibommasani/Contextual2Static):

    decontextualised   v_l(w) = f(h_l(pieces of w) | [CLS] w [SEP])
    aggregated         v_l(w) = g_{contexts c}( f(h_l(pieces of w) | c) ),  unseen w → decontextualised

for every hidden state l = 0 … L, f ∈ {mean, max, min, last}, g ∈ {mean, max, min}. Task 11.1
(``solutions/task11_static/pooling.py``) writes f (``pool_subwords``) and g with its fallback
(``aggregate_contexts``); :func:`static_vectors` runs the two recipes with them. This module
also runs them on a ``BertModel`` and scores the vectors on the synthetic word-similarity pairs
(``minilm.data.word_similarity_pairs``: same category, e.g. dog/cat, vs different, e.g. dog/singer).
The paper correlates cosines with human scores (Spearman); with binary labels the analogue is the
**AUC**: the probability that a random same-category pair has a higher cosine than a random
different-category pair (0.5 = chance, 1 = perfect). We also report the mean cosine gap.

Letters: L layers, T time, C channels, W words.
"""
from __future__ import annotations

import numpy as np

from autograd import no_grad, tasks
from autograd.errors import ConfigError, ShapeError

__all__ = ["pool_subwords", "aggregate_contexts", "word_pieces", "static_vectors", "bert_encoder",
           "cached_encoder", "similarity_scores", "static_report", "markdown_table", "plot_report", "MODES"]

# Task 11.1: solutions/task11_static/pooling.py
pool_subwords = tasks.bind("task11_static.pooling", "pool_subwords")
aggregate_contexts = tasks.bind("task11_static.pooling", "aggregate_contexts")

MODES = ("decontextualised", "aggregated")


def word_pieces(tokenizer, words) -> tuple[list[int], list[tuple[int, int]]]:
    """``[CLS] pieces(w₁) … pieces(w_n) [SEP]`` as ids, and each word's (start, end) span in them
    (end exclusive; the spans skip [CLS] at 0). Each word is tokenized on its own, so the spans
    are exact. A word with no pieces gets an empty span."""
    ids, spans = [tokenizer.cls_id], []
    for w in words:
        pieces = tokenizer.encode(w, add_special_tokens=False)
        spans.append((len(ids), len(ids) + len(pieces)))
        ids.extend(pieces)
    ids.append(tokenizer.sep_id)
    return ids, spans


def static_vectors(words, tokenizer, encode, sentences=None, *, pooling: str = "mean",
                   combine: str = "mean") -> np.ndarray:
    """One static vector per word and per layer: decontextualised, or aggregated over ``sentences``
    with the decontextualised vector as the fallback. Returns (L+1, W, C): ``out[l, i]`` is word
    i's vector at hidden state l (0 = the embedding output).

    words: vocabulary words (lowercased here). tokenizer: has ``encode(text,
    add_special_tokens=False)``, ``cls_id`` and ``sep_id``. encode: a list of id lists (each
    ``[CLS] … [SEP]``) → a list of arrays (L+1, T_i, C), every hidden state of each sequence.
    sentences: None (decontextualised only) or strings, split on whitespace and lowercased.
    pooling: f of Task 11.1's ``pool_subwords``; combine: g of its ``aggregate_contexts``.
    """
    words = [str(w).lower() for w in words]
    if not words:
        raise ShapeError("static_vectors: no words given")
    # 1. decontextualised: each word alone, [CLS] w₁ … w_k [SEP]; f over its pieces at every layer
    seqs = [word_pieces(tokenizer, [w]) for w in words]
    states = encode([ids for ids, _ in seqs])                              # W × (L+1, T, C)
    out = np.stack([pool_subwords(h, span, pooling) for h, (_, [span]) in zip(states, seqs)],
                   axis=1)                                                 # (L+1, W, C)
    if sentences is None:
        return out
    # 2. aggregated: f over the word's pieces in every sentence it occurs in, then g over those
    index = {w: i for i, w in enumerate(words)}
    texts = [s.lower().split() for s in sentences]
    seqs = [word_pieces(tokenizer, toks) for toks in texts]
    states = encode([ids for ids, _ in seqs])
    found = [[] for _ in words]                                            # word i -> n × (L+1, C)
    for h, (_, spans), toks in zip(states, seqs, texts):
        for w, (s, e) in zip(toks, spans):
            if w in index and e > s:
                found[index[w]].append(pool_subwords(h, (s, e), pooling))
    for i, occurrences in enumerate(found):                                # n = 0: g keeps the fallback
        occ = np.stack(occurrences) if occurrences else np.empty((0, *out[:, i].shape), out.dtype)
        out[:, i] = aggregate_contexts(occ, out[:, i], combine)            # (n, L+1, C) -> (L+1, C)
    return out


def bert_encoder(bert, pad_id: int, batch_size: int = 64):
    """``encode(list of id lists) -> list of (L+1, T_i, C) arrays``: every hidden state of a
    ``BertModel`` (eval mode, no gradient), run in padded batches and cut back to each length."""

    def encode(seqs):
        bert.eval()
        out = []
        with no_grad():
            for i in range(0, len(seqs), batch_size):
                chunk = seqs[i:i + batch_size]
                T = max(len(s) for s in chunk)
                ids = np.full((len(chunk), T), pad_id, dtype=np.int64)
                mask = np.zeros((len(chunk), T), dtype=bool)
                for j, s in enumerate(chunk):
                    ids[j, :len(s)], mask[j, :len(s)] = s, True
                states = bert(ids, None, mask, output_hidden_states=True)["hidden_states"]
                h = np.stack([s.data for s in states], axis=1)          # (B, L+1, T, C)
                out.extend(h[j, :, :len(s)] for j, s in enumerate(chunk))
        return out

    return encode


def cached_encoder(encode):
    """``encode`` remembering each id sequence it has run: a report calls ``static_vectors`` once per
    (mode, f), and the hidden states of a sentence do not depend on f, so every sentence is
    encoded once. The cached arrays are shared, never written to (the slots only read them)."""
    memo = {}

    def cached(seqs):
        keys = [tuple(int(i) for i in s) for s in seqs]
        todo = list(dict.fromkeys(k for k in keys if k not in memo))
        if todo:
            memo.update(zip(todo, encode([list(k) for k in todo])))
        return [memo[k] for k in keys]

    return cached


def _cosine(a, b):
    num = (a * b).sum(-1)
    return num / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-12)


def similarity_scores(vectors, words, pairs) -> dict:
    """Score one (W, C) set of vectors on ``pairs`` [(a, b, same)]: ``auc`` (the chance that a
    same-category pair out-scores a different-category pair, ties count half) and ``gap`` (mean
    cosine of same pairs − of different pairs)."""
    index = {w: i for i, w in enumerate(words)}
    a = vectors[[index[p[0]] for p in pairs]]
    b = vectors[[index[p[1]] for p in pairs]]
    cos = _cosine(a, b)
    same = np.array([bool(p[2]) for p in pairs])
    pos, neg = cos[same], cos[~same]
    if not len(pos) or not len(neg):
        raise ConfigError("similarity_scores: need both same-category and different-category pairs")
    wins = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    return {"auc": float(wins), "gap": float(pos.mean() - neg.mean())}


def static_report(bert, tokenizer, sentences, pairs, *, poolings=("mean", "max", "min", "last"),
                  combine="mean") -> dict:
    """Every (mode, f) × layer score: ``{"rows": [{mode, pooling, layer, auc, gap}], ...}``.
    Sentences longer than the model's positions are left out."""
    words = sorted({w for p in pairs for w in p[:2]})
    encode = cached_encoder(bert_encoder(bert, tokenizer.pad_id))
    max_len = bert.config.max_position_embeddings
    kept = [s for s in sentences
            if 2 + sum(len(tokenizer.encode(w, add_special_tokens=False)) for w in s.lower().split()) <= max_len]
    seen = {w for s in kept for w in s.lower().split()} & set(words)
    rows = []
    for mode in MODES:
        for f in poolings:
            vecs = static_vectors(words, tokenizer, encode, kept if mode == "aggregated" else None,
                                  pooling=f, combine=combine)           # (L+1, W, C)
            for layer in range(vecs.shape[0]):
                rows.append({"mode": mode, "pooling": f, "layer": layer,
                             **similarity_scores(vecs[layer], words, pairs)})
    return {"rows": rows, "combine": combine, "n_words": len(words), "n_words_seen": len(seen),
            "n_sentences": len(kept), "n_pairs": len(pairs), "n_layers": bert.config.n_layer}


def markdown_table(report: dict, metric: str = "auc") -> str:
    """One row per (mode, f), one column per layer."""
    rows = report["rows"]
    layers = sorted({r["layer"] for r in rows})
    head = "| mode | f | " + " | ".join(f"layer {l}" for l in layers) + " |"
    lines = [head, "|" + "---|" * (2 + len(layers))]
    keys = []
    for r in rows:
        if (r["mode"], r["pooling"]) not in keys:
            keys.append((r["mode"], r["pooling"]))
    for mode, f in keys:
        vals = {r["layer"]: r[metric] for r in rows if r["mode"] == mode and r["pooling"] == f}
        lines.append(f"| {mode} | {f} | " + " | ".join(f"{vals[l]:.3f}" for l in layers) + " |")
    return "\n".join(lines)


def plot_report(report: dict, path, metric: str = "auc"):
    """A line per (mode, f): the metric against the layer; returns the path written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    styles = {"aggregated": "-", "decontextualised": "--"}
    keys = []
    for r in report["rows"]:
        if (r["mode"], r["pooling"]) not in keys:
            keys.append((r["mode"], r["pooling"]))
    for mode, f in keys:
        rs = [r for r in report["rows"] if r["mode"] == mode and r["pooling"] == f]
        ax.plot([r["layer"] for r in rs], [r[metric] for r in rs], styles[mode], marker="o", label=f"{mode}, f={f}")
    if metric == "auc":
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set_xticks(sorted({r["layer"] for r in report["rows"]}))
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("AUC: same vs different category" if metric == "auc" else "cosine gap")
    ax.set_title(f"static word vectors (g={report['combine']}) per layer")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
