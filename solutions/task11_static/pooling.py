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

Letters: L layers (hidden states 0..L), T time, C channels, P pieces of a word, n occurrences.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError
from minilm.downstream import static as _lib  # the library's bound slots (a slot never calls another slot directly)

SUBWORD_POOLING = ("mean", "max", "min", "last")
CONTEXT_COMBINATION = ("mean", "max", "min")


def pool_subwords(vectors, how):
    """Task 11.1: f — one vector from a word's subword pieces, element-wise.

    vectors: array (P, C), the hidden states of the word's P ≥ 1 pieces (specials already removed);
    how: "mean" | "max" | "min" | "last" (the word's last piece). Returns a new array (C,).
    The graded tests check each choice on a word of several pieces and reject an unknown ``how``
    (``ConfigError``) and an empty word (``ShapeError``).
    """
    vectors = np.asarray(vectors)
    if how not in SUBWORD_POOLING:
        raise ConfigError(f"pool_subwords: how={how!r}, expected one of {SUBWORD_POOLING}")
    if vectors.ndim != 2 or len(vectors) == 0:
        raise ShapeError(f"pool_subwords: vectors of shape {vectors.shape}, expected (P, C) with P >= 1 pieces")
    # BEGIN SOLUTION
    if how == "mean":
        return vectors.mean(axis=0)
    if how == "max":
        return vectors.max(axis=0)
    if how == "min":
        return vectors.min(axis=0)
    return vectors[-1].copy()
    # END SOLUTION


def aggregate_contexts(vectors, how):
    """Task 11.1: g — one vector from a word's n ≥ 1 pooled occurrences, element-wise.

    vectors: array (n, C); how: "mean" | "max" | "min". Returns a new array (C,).
    Unknown ``how`` raises ``ConfigError``; no occurrence raises ``ShapeError`` (the caller falls
    back to the decontextualised vector instead of calling this with nothing).
    """
    vectors = np.asarray(vectors)
    if how not in CONTEXT_COMBINATION:
        raise ConfigError(f"aggregate_contexts: how={how!r}, expected one of {CONTEXT_COMBINATION}")
    if vectors.ndim != 2 or len(vectors) == 0:
        raise ShapeError(f"aggregate_contexts: vectors of shape {vectors.shape}, expected (n, C) with n >= 1")
    # BEGIN SOLUTION
    return {"mean": np.mean, "max": np.max, "min": np.min}[how](vectors, axis=0)
    # END SOLUTION


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


def static_vectors(words, tokenizer, encode, sentences=None, *, pooling="mean", combine="mean"):
    """Task 11.1: one static vector per word and per layer — decontextualised, or aggregated over
    ``sentences`` with the decontextualised vector as the fallback.

    words: list of vocabulary words (lowercase strings). tokenizer: has
    ``encode(text, add_special_tokens=False)`` and ``cls_id``, ``sep_id``. encode: a function from
    a list of id lists (each ``[CLS] … [SEP]``) to a list of arrays (L+1, T_i, C), the hidden states
    0..L of each sequence (0 = embeddings). sentences: None (decontextualised only) or a list of
    strings. pooling: f (``pool_subwords``); combine: g (``aggregate_contexts``).
    Returns an array (L+1, len(words), C): ``out[l, i]`` is word i's vector at layer l.

    Steps:
      1. Decontextualised: ``word_pieces(tokenizer, [w])`` gives ``[CLS] pieces [SEP]`` and the
         word's span; encode every word, and at each layer l pool the rows of the span — never
         [CLS] (position 0) or [SEP] — with ``_lib.pool_subwords(h[l, start:end], pooling)``.
      2. Aggregated (when ``sentences`` is given): split each sentence on whitespace, lowercase
         the words, and ``word_pieces`` it; encode all sentences. For every occurrence of a
         vocabulary word, pool its span per layer; then for each word with ≥ 1 occurrence,
         ``_lib.aggregate_contexts(occurrences at layer l, combine)`` replaces its vector.
         Words never seen keep the decontextualised vector (the fallback).
    Call the pooling helpers through ``_lib`` (the library's bindings of this task). In a student
    release they run your own ``pool_subwords`` and ``aggregate_contexts``, so the tests of
    ``static_vectors`` can only pass once those two work.

    The graded tests use a fake encoder whose [CLS], [SEP], pieces and layers all give different
    vectors: they catch [CLS] as the static vector, specials inside the pooling, a layer index
    off by one, and a missing fallback.
    """
    words = [str(w).lower() for w in words]
    if not words:
        raise ShapeError("static_vectors: no words given")
    # BEGIN SOLUTION
    # 1. decontextualised: each word alone, [CLS] and [SEP] stripped
    seqs = [word_pieces(tokenizer, [w]) for w in words]
    states = encode([ids for ids, _ in seqs])                       # n_words × (L+1, T, C)
    n_layers = states[0].shape[0]
    out = np.stack([np.stack([_lib.pool_subwords(h[l, s:e], pooling) for h, (_, [(s, e)]) in zip(states, seqs)])
                    for l in range(n_layers)])                        # (L+1, n_words, C)
    if sentences is None:
        return out
    # 2. aggregated: pool every occurrence, then combine the occurrences
    index = {w: i for i, w in enumerate(words)}
    seqs = [word_pieces(tokenizer, s.lower().split()) for s in sentences]
    seqs = [(ids, spans, s.lower().split()) for (ids, spans), s in zip(seqs, sentences)]
    states = encode([ids for ids, _, _ in seqs])
    found = {}                                                      # word index -> list of (L+1, C)
    for h, (_, spans, toks) in zip(states, seqs):
        for w, (s, e) in zip(toks, spans):
            if w in index and e > s:
                found.setdefault(index[w], []).append(
                    np.stack([_lib.pool_subwords(h[l, s:e], pooling) for l in range(n_layers)]))
    for i, occurrences in found.items():
        occ = np.stack(occurrences)                                 # (n, L+1, C)
        for l in range(n_layers):
            out[l, i] = _lib.aggregate_contexts(occ[:, l], combine)
    return out
    # END SOLUTION
