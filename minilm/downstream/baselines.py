"""The simple baselines every number in minilm is measured against — pure NumPy, no autograd.

A Transformer's accuracy or loss means little on its own: on a synthetic task it may be high only
because the task is easy. Each baseline below is the strongest *simple* answer to one question:

* :class:`BagOfWordsClassifier` — "can the label be read off the words, ignoring their order?"
  Multinomial logistic regression on word-presence features (fine-tuning commands). On the
  sentiment-with-negation task it fails exactly on the negated items: "good" and "not" are each
  as frequent in positive as in negative sentences, only the pair decides.
  :func:`text_baselines` scores it on a labelled split (overall, negated, plain) beside the
  majority class.
* :class:`MostFrequentToken` — "how often is the masked token simply the commonest one?" (the
  floor of a masked-LM accuracy).
* :class:`NGramLM` — unigram (``order=1``) and bigram (``order=2``) language models with add-α
  smoothing: the loss (nats per token) a model gets from token frequencies alone, or from the
  previous token alone. A GPT must beat the bigram; an MLM must beat the unigram.

Letters: N examples (or blocks), T time, F bag-of-words features, K classes, V vocabulary.

Everything is deterministic (no randomness): the same data give the same baseline.
"""
from __future__ import annotations

from collections import Counter
from typing import Hashable, Iterable, Sequence

import numpy as np

from autograd.errors import ConfigError, MiniLMError, ShapeError
from minilm.downstream.probe import fit_softmax_regression, softmax

__all__ = ["tokens_of", "BagOfWordsClassifier", "text_baselines", "MostFrequentToken", "NGramLM"]

IGNORE_INDEX = -100


def tokens_of(item) -> list[Hashable]:
    """The tokens of one example: a ``str`` is split on whitespace (lower-cased); anything else is
    taken as a sequence of hashable tokens (words or integer ids)."""
    if isinstance(item, str):
        return item.lower().split()
    return [int(t) if isinstance(t, (int, np.integer)) else t for t in item]


# ---- bag of words + logistic regression ---------------------------------------------------------

class BagOfWordsClassifier:
    """Multinomial logistic regression on bag-of-words features.

    ``x_f = 1`` if word f occurs in the example (``binary=True``, the default) or its count, plus a
    bias; ``p(y | x) = softmax(x W + b)``, trained by full-batch gradient descent on the mean
    cross-entropy + ``l2/2 · ‖W‖²`` (``minilm.downstream.probe``). The loss is convex, so a few
    hundred steps reach the optimum and the result does not depend on an initialisation (W starts
    at zero). Words not seen in training are ignored at prediction time.

        bow = BagOfWordsClassifier().fit(["the movie was good .", ...], [1, ...])
        bow.accuracy(test_texts, test_labels)
    """

    def __init__(self, *, l2: float = 1e-4, lr: float = 1.0, steps: int = 500, binary: bool = True):
        if l2 < 0 or lr <= 0 or steps < 1:
            raise ConfigError(f"BagOfWordsClassifier: l2={l2}, lr={lr}, steps={steps}: expected "
                              "l2 >= 0, lr > 0, steps >= 1")
        self.l2, self.lr, self.steps, self.binary = float(l2), float(lr), int(steps), bool(binary)
        self.vocab: dict[Hashable, int] | None = None
        self.W: np.ndarray | None = None  # (F, K)
        self.b: np.ndarray | None = None  # (K,)

    def features(self, examples: Sequence) -> np.ndarray:
        """``(N, F)`` float64 bag-of-words matrix of ``examples`` over the training vocabulary."""
        if self.vocab is None:
            raise MiniLMError("BagOfWordsClassifier: call fit() before features()/predict()")
        X = np.zeros((len(examples), len(self.vocab)))  # (N, F)
        for i, ex in enumerate(examples):
            for tok in tokens_of(ex):
                j = self.vocab.get(tok)
                if j is not None:
                    X[i, j] = 1.0 if self.binary else X[i, j] + 1.0
        return X

    def fit(self, examples: Sequence, labels) -> "BagOfWordsClassifier":
        labels = np.asarray(labels)
        if len(examples) == 0 or labels.shape != (len(examples),):
            raise ShapeError(f"BagOfWordsClassifier.fit: {len(examples)} examples and labels of shape "
                             f"{labels.shape}: expected one integer label per example (at least one)")
        if not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0:
            raise ConfigError("BagOfWordsClassifier.fit: labels must be integers >= 0 "
                              f"(got dtype {labels.dtype}, min {labels.min()})")
        words = sorted({t for ex in examples for t in tokens_of(ex)}, key=repr)
        self.vocab = {w: j for j, w in enumerate(words)}
        X = self.features(examples)                       # (N, F)
        K = max(int(labels.max()) + 1, 2)
        self.W, self.b = fit_softmax_regression(X, labels, K, steps=self.steps, lr=self.lr, l2=self.l2)
        return self

    def predict_proba(self, examples: Sequence) -> np.ndarray:
        """``(N, K)`` class probabilities."""
        return softmax(self.features(examples) @ self.W + self.b)

    def predict(self, examples: Sequence) -> np.ndarray:
        """``(N,)`` predicted classes."""
        return self.predict_proba(examples).argmax(axis=-1)

    def accuracy(self, examples: Sequence, labels) -> float:
        labels = np.asarray(labels)
        if len(examples) == 0:
            raise ShapeError("BagOfWordsClassifier.accuracy: no examples")
        return float((self.predict(examples) == labels).mean())


def text_baselines(train_texts, y_train, test_texts, y_test, negated) -> dict:
    """The simple answers on the same sentences: a bag-of-words logistic regression (accuracy overall,
    on the negated and on the plain sentences, and its held-out cross-entropy) and the majority class
    of the training labels (its accuracy, and the cross-entropy of predicting the training label
    frequencies)."""
    y_train, y_test, negated = np.asarray(y_train), np.asarray(y_test), np.asarray(negated, dtype=bool)
    bow = BagOfWordsClassifier().fit(list(train_texts), y_train)
    proba = bow.predict_proba(list(test_texts))                               # (N, K)
    correct = proba.argmax(-1) == y_test
    K = max(int(y_train.max()), int(y_test.max())) + 1
    freq = np.bincount(y_train, minlength=K) / len(y_train)                   # (K,)
    return {"bow_accuracy": float(correct.mean()), "bow_negation_accuracy": float(correct[negated].mean()),
            "bow_plain_accuracy": float(correct[~negated].mean()),
            "bow_loss": float(-np.log(np.maximum(proba[np.arange(len(y_test)), y_test], 1e-12)).mean()),
            "majority_accuracy": float((y_test == int(freq.argmax())).mean()),
            "majority_loss": float(-np.log(np.maximum(freq[y_test], 1e-12)).mean())}


# ---- most frequent token ------------------------------------------------------------------------

class MostFrequentToken:
    """Always predicts the commonest token of the training data (ties: the smallest id).

    ``fit(sequences, ignore_ids=special_ids)`` counts every id except ``ignore_ids``;
    ``accuracy(labels)`` is the fraction of predicted positions (``labels != -100``) whose label is
    that token — the accuracy an MLM reaches by learning nothing but frequencies.
    """

    def __init__(self):
        self.token: int | None = None
        self.counts: Counter | None = None

    def fit(self, sequences, ignore_ids: Iterable[int] = ()) -> "MostFrequentToken":
        ignore = set(int(i) for i in ignore_ids)
        self.counts = Counter(t for seq in _sequences(sequences, "MostFrequentToken.fit")
                              for t in seq.tolist() if t not in ignore)
        if not self.counts:
            raise MiniLMError("MostFrequentToken.fit: no tokens left to count")
        best = max(self.counts.values())
        self.token = min(t for t, c in self.counts.items() if c == best)
        return self

    def predict(self, labels) -> np.ndarray:
        """An array shaped like ``labels`` filled with the most frequent token."""
        if self.token is None:
            raise MiniLMError("MostFrequentToken: call fit() first")
        return np.full(np.shape(labels), self.token, dtype=np.int64)

    def accuracy(self, labels, ignore_index: int = IGNORE_INDEX) -> float:
        """Accuracy over the positions where ``labels != ignore_index`` (0.0 if there are none)."""
        labels = np.asarray(labels)
        valid = labels != ignore_index
        if not valid.any():
            return 0.0
        return float((self.predict(labels)[valid] == labels[valid]).mean())


# ---- n-gram language models ---------------------------------------------------------------------

def _sequences(data, op: str) -> list[np.ndarray]:
    """A 1-D id array is one sequence; a 2-D array or a list is a collection of sequences."""
    if isinstance(data, np.ndarray) and data.ndim in (1, 2) and np.issubdtype(data.dtype, np.integer):
        return [data] if data.ndim == 1 else list(data)
    out = []
    for i, s in enumerate(data):
        a = np.asarray(s)
        if a.size == 0:
            continue
        if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
            raise ShapeError(f"{op}: sequence {i} has shape {a.shape} and dtype {a.dtype}: "
                             "expected 1-D integer ids")
        out.append(a.astype(np.int64))
    return out


class NGramLM:
    """Unigram (``order=1``) or bigram (``order=2``) language model with add-α smoothing.

    * unigram: p(w) = (c(w) + α) / (N + α·V)
    * bigram:  p(w | u) = (c(u, w) + α) / (c(u, ·) + α·V), where c(u, ·) counts the bigrams that
      start with u (so a never-seen u gives the uniform distribution).

    Bigram counts are kept sparse (sorted keys ``u·V + w``), so a large vocabulary costs memory only
    for the pairs that occur. ``loss(x, y)`` takes GPT's teacher-forcing pairs (``y[t]`` follows
    ``x[t]``, as ``minilm.data.lm_blocks`` makes them) and returns the mean negative
    log-likelihood of ``y`` in nats — directly comparable with a GPT's cross-entropy.
    """

    def __init__(self, order: int = 2, alpha: float = 0.1):
        if order not in (1, 2):
            raise ConfigError(f"NGramLM: order={order}: expected 1 (unigram) or 2 (bigram)")
        if alpha <= 0:
            raise ConfigError(f"NGramLM: alpha={alpha}: expected > 0 (unseen tokens need a probability)")
        self.order, self.alpha = order, float(alpha)
        self.vocab_size: int | None = None

    def fit(self, sequences, vocab_size: int) -> "NGramLM":
        """Count tokens (and, for a bigram, adjacent pairs inside each sequence) of ``sequences``: a
        1-D stream, an ``(N, T)`` array or a list of 1-D id sequences."""
        V = self.vocab_size = int(vocab_size)
        seqs = _sequences(sequences, "NGramLM.fit")
        if not seqs:
            raise MiniLMError("NGramLM.fit: no tokens to count")
        for s in seqs:
            _check_range("NGramLM.fit", s, V)
        self.unigram = np.bincount(np.concatenate(seqs), minlength=V).astype(np.float64)  # (V,)
        if self.order == 1:                       # a unigram reads no pairs: log_prob and predict ignore x
            return self
        pairs = [s[:-1] * V + s[1:] for s in seqs if len(s) > 1]
        keys = np.concatenate(pairs) if pairs else np.zeros(0, np.int64)
        self.pair_keys, pair_counts = np.unique(keys, return_counts=True)      # sorted keys u·V + w
        self.pair_counts = pair_counts.astype(np.float64)
        self.context_counts = np.bincount(self.pair_keys // V, weights=self.pair_counts,
                                          minlength=V)                           # (V,) c(u, ·)
        # most likely successor of each u (ties: the smallest id), else the commonest token
        self.best_next = np.full(V, int(self.unigram.argmax()), dtype=np.int64)
        order = np.lexsort((self.pair_keys % V, -self.pair_counts, self.pair_keys // V))
        u_sorted = self.pair_keys[order] // V
        first = np.r_[True, u_sorted[1:] != u_sorted[:-1]] if len(order) else np.zeros(0, bool)
        self.best_next[u_sorted[first]] = self.pair_keys[order][first] % V
        return self

    def _check_fitted(self):
        if self.vocab_size is None:
            raise MiniLMError("NGramLM: call fit() first")

    def log_prob(self, x, y) -> np.ndarray:
        """log p(y | x) for every position: arrays of equal shape (x is ignored by a unigram)."""
        self._check_fitted()
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            raise ShapeError(f"NGramLM.log_prob: x {x.shape} and y {y.shape} differ")
        V, a = self.vocab_size, self.alpha
        _check_range("NGramLM.log_prob", y, V)
        if self.order == 1:
            return np.log((self.unigram[y] + a) / (self.unigram.sum() + a * V))
        _check_range("NGramLM.log_prob", x, V)
        keys = x.astype(np.int64) * V + y
        c = np.zeros(keys.shape)                                   # c(x, y), 0 where unseen
        if len(self.pair_keys):
            pos = np.minimum(np.searchsorted(self.pair_keys, keys), len(self.pair_keys) - 1)
            found = self.pair_keys[pos] == keys
            c[found] = self.pair_counts[pos[found]]
        return np.log((c + a) / (self.context_counts[x] + a * V))

    def loss(self, x, y, ignore_index: int = IGNORE_INDEX) -> float:
        """Mean −log p(y | x) in nats over positions where ``y != ignore_index``."""
        x, y = np.asarray(x), np.asarray(y)
        valid = y != ignore_index
        if not valid.any():
            return 0.0
        return float(-self.log_prob(x[valid], y[valid]).mean())

    def perplexity(self, x, y, ignore_index: int = IGNORE_INDEX) -> float:
        return float(np.exp(self.loss(x, y, ignore_index)))

    def predict(self, x) -> np.ndarray:
        """The most likely next token after each entry of ``x`` (a unigram ignores x)."""
        self._check_fitted()
        x = np.asarray(x)
        if self.order == 1:
            return np.full(x.shape, int(self.unigram.argmax()), dtype=np.int64)
        _check_range("NGramLM.predict", x, self.vocab_size)
        return self.best_next[x]

    def accuracy(self, x, y, ignore_index: int = IGNORE_INDEX) -> float:
        """Top-1 next-token accuracy over positions where ``y != ignore_index``."""
        x, y = np.asarray(x), np.asarray(y)
        valid = y != ignore_index
        if not valid.any():
            return 0.0
        return float((self.predict(x[valid]) == y[valid]).mean())


def _check_range(op: str, ids: np.ndarray, V: int) -> None:
    if not np.issubdtype(np.asarray(ids).dtype, np.integer):
        raise ShapeError(f"{op}: ids must be integers, got dtype {np.asarray(ids).dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        bad = ids[(ids < 0) | (ids >= V)].flat[0]
        raise ShapeError(f"{op}: id {int(bad)} is outside the vocabulary [0, {V})")
