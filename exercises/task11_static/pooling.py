"""Task 11.1: static word vectors from a contextual model (Bommasani, Davis & Cardie 2020).

A contextual encoder gives a word a different vector in every sentence. A *static* vector — one per
word, like word2vec's — can be read off it in two ways, at every layer l = 0 … L (0 = the embedding
output):

* **decontextualised**: encode the word on its own, ``[CLS] w₁ … w_k [SEP]``, strip the specials,
  and pool its k subword pieces:   v_l(w) = f(h_l[1], …, h_l[k])
* **aggregated**: for each of the word's n occurrences in a corpus, pool its pieces there, then
  combine the occurrences:         v_l(w) = g(f(pieces in context 1), …, f(pieces in context n))
  A word that never occurs falls back to its decontextualised vector.

f ∈ {mean, max, min, last} pools subword pieces element-wise; g ∈ {mean, max, min} combines contexts.
The paper finds aggregated ≫ decontextualised, f = g = mean best, and the early layers best.

This task writes f and g on arrays. ``minilm.downstream.static.static_vectors`` runs the two
recipes with them: it tokenizes, finds each word's span of pieces, runs the encoder, calls
``pool_subwords`` for every occurrence and ``aggregate_contexts`` for every word.

Letters: L layers (hidden states 0..L), T time, C channels, P pieces of a word, n occurrences.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError

SUBWORD_POOLING = ("mean", "max", "min", "last")
CONTEXT_COMBINATION = ("mean", "max", "min")


def pool_subwords(states, span, how):
    """Task 11.1: f — one vector per layer from a word's subword pieces, element-wise.

    states: array (L+1, T, C), every hidden state of one sequence ``[CLS] … [SEP]`` (state 0 = the
    embedding output, state l = layer l); span: (start, end), the positions of the word's P ≥ 1
    pieces in it (end exclusive; [CLS] at 0 and [SEP] at T − 1 are never inside a span);
    how: "mean" | "max" | "min" | "last" (the word's last piece). Returns a new array (L+1, C):
    row l pools the word's pieces at state l, over the pieces only.

    Unknown ``how`` raises ``ConfigError``; an empty span or one outside the sequence ``ShapeError``.
    The graded tests use a fake encoder whose [CLS], [SEP], pieces, positions and layers all give
    different vectors: they catch [CLS] as the static vector, specials inside the pooling, "last"
    taken one position too far, a layer shifted by one, and a reduction over the wrong axis.
    """
    states = np.asarray(states)
    if how not in SUBWORD_POOLING:
        raise ConfigError(f"pool_subwords: how={how!r}, expected one of {SUBWORD_POOLING}")
    if states.ndim != 3:
        raise ShapeError(f"pool_subwords: states of shape {states.shape}, expected (L+1, T, C)")
    start, end = (int(i) for i in span)
    if not 0 <= start < end <= states.shape[1]:
        raise ShapeError(f"pool_subwords: span {tuple(span)} in a sequence of length {states.shape[1]}, "
                         "expected 0 <= start < end <= T (a word has at least one piece)")
    raise NotImplementedError("Task 11.1: pool_subwords")


def aggregate_contexts(occurrences, fallback, how):
    """Task 11.1: g — one vector per layer from a word's n ≥ 0 pooled occurrences, element-wise.

    occurrences: array (n, L+1, C), the word's ``pool_subwords`` vectors in each of its n contexts;
    fallback: array (L+1, C), its decontextualised vector; how: "mean" | "max" | "min".
    Returns a new array (L+1, C): g over the occurrences at every layer, or a copy of ``fallback``
    when n = 0 (a word the corpus never shows keeps its decontextualised vector).

    Unknown ``how`` raises ``ConfigError``; shapes that do not fit ``ShapeError``. The graded tests
    check each g at every layer (over the occurrences, not the layers) and the fallback.
    """
    occurrences, fallback = np.asarray(occurrences), np.asarray(fallback)
    if how not in CONTEXT_COMBINATION:
        raise ConfigError(f"aggregate_contexts: how={how!r}, expected one of {CONTEXT_COMBINATION}")
    if occurrences.ndim != 3 or occurrences.shape[1:] != fallback.shape:
        raise ShapeError(f"aggregate_contexts: occurrences of shape {occurrences.shape} and fallback of shape "
                         f"{fallback.shape}, expected (n, L+1, C) and (L+1, C)")
    raise NotImplementedError("Task 11.1: aggregate_contexts")
