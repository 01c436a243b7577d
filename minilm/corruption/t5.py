"""T5's span corruption with sentinels, the prefix-LM split, and the three attention masks.

Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
Transformer": §3.1.4 (the unsupervised objective), §3.2.1 (architectures as masks, Figs. 3–4),
§3.3 (span corruption with mean span length 3 and corruption rate 15%). The reference is
google-research/text-to-text-transfer-transformer, ``t5/data/preprocessors.py``
(``random_spans_noise_mask``, ``noise_span_to_unique_sentinel``, ``random_spans_helper``).

Letters: L sequence length, T attention length, P prefix length, V vocabulary size.

Span corruption of ``a b c d e f`` with noise ``{c d}, {f}``::

    inputs  = a b <extra_id_0> e <extra_id_1> </s>
    targets = <extra_id_0> c d <extra_id_1> f </s>

The task slots (Task 9.1) are bound here; :func:`span_corruption` runs two of them in T5's order,
and the helpers below are plain library code.

Attention masks here follow Raffel's M: ``M[i, j] = True`` means query i **may** attend to key j.
(XLNet's ``perm_mask`` uses the opposite sign: True there means "may not".) ``full_mask`` is defined
here; ``causal_mask`` and ``prefix_lm_mask`` are minilm/blocks/masks.py's, re-exported so that the
three masks of §3.2.1 sit side by side.
"""
from __future__ import annotations

import numpy as np

from autograd import tasks
from autograd.errors import MiniLMError
from minilm.blocks.masks import causal_mask, prefix_lm_mask

from ._token_ids import as_ids, check_id, check_length, check_sentinel_args

__all__ = [
    "random_spans_noise_mask", "spans_to_sentinels", "span_corruption", "random_spans_helper",
    "t5_sentinel_ids", "reconstruct", "prefix_lm_split",
    "causal_mask", "prefix_lm_mask", "full_mask",
]

# Task 9.1: solutions/task09_seq2seq/span_corruption.py
random_spans_noise_mask = tasks.bind("task09_seq2seq.span_corruption", "random_spans_noise_mask")
spans_to_sentinels = tasks.bind("task09_seq2seq.span_corruption", "spans_to_sentinels")  # Task 9.1
random_spans_helper = tasks.bind("task09_seq2seq.span_corruption", "random_spans_helper")  # Task 9.1


def span_corruption(ids, *, sentinel_ids, eos_id, rng: np.random.Generator, noise_density: float = 0.15,
                    mean_span_length: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """T5's span corruption of one text ``ids (L,)``: returns ``(inputs, targets)``, new 1-D int arrays.

    1. the noise: Task 9.1's ``random_spans_noise_mask(L)`` — ``round(L · noise_density)`` tokens in
       spans of mean length ``mean_span_length``, the first token clean and the last one noise;
    2. the two sides: Task 9.1's ``spans_to_sentinels`` — each noise span becomes one sentinel in
       ``inputs``, each clean span one sentinel in ``targets``, ``eos_id`` ends both.

    ``sentinel_ids[j]`` is ``<extra_id_j>`` (:func:`t5_sentinel_ids`); ``ids`` may not contain one.
    """
    ids, sentinel_ids, eos_id = check_sentinel_args(ids, sentinel_ids, eos_id, op="span_corruption")
    noise = random_spans_noise_mask(ids.size, rng=rng, noise_density=noise_density,
                                    mean_noise_span_length=mean_span_length)      # (L,) bool
    return spans_to_sentinels(ids, noise, sentinel_ids=sentinel_ids, eos_id=eos_id)


def t5_sentinel_ids(vocab_size: int, n: int) -> np.ndarray:
    """The ids of ``<extra_id_0> … <extra_id_{n-1}>``: ``[V-1, V-2, …, V-n]`` (they count DOWN from
    the top of the vocabulary; in T5's 32100-id vocabulary ``<extra_id_0>`` is 32099)."""
    vocab_size = check_length(vocab_size, op="t5_sentinel_ids", name="vocab_size")
    n = check_length(n, op="t5_sentinel_ids", name="n", minimum=0)
    if n > vocab_size:
        raise MiniLMError(f"t5_sentinel_ids: n={n} sentinels do not fit in vocab_size={vocab_size}")
    return np.arange(vocab_size - 1, vocab_size - 1 - n, -1, dtype=np.int64)


def reconstruct(inputs, targets, sentinel_ids, eos_id) -> np.ndarray:
    """Undo :func:`span_corruption`: put each noise span of ``targets`` back where its sentinel sits
    in ``inputs``. ``reconstruct(*span_corruption(ids, ...), sentinel_ids, eos_id)`` equals ``ids``.

    ``targets`` reads ``S_0 noise_0 S_1 noise_1 …``: the tokens after sentinel ``S_k`` (up to the next
    sentinel) are the ones that ``S_k`` replaced in ``inputs``.
    """
    op = "reconstruct"
    inputs = as_ids(inputs, op=op, name="inputs")
    targets = as_ids(targets, op=op, name="targets")
    sentinels = as_ids(sentinel_ids, op=op, name="sentinel_ids")
    eos_id = check_id(eos_id, op=op, name="eos_id")
    for name, arr in (("inputs", inputs), ("targets", targets)):
        if arr[-1] != eos_id:
            raise MiniLMError(f"{op}: {name} ends with {arr[-1]}: expected eos_id {eos_id}")
    inputs, targets = inputs[:-1], targets[:-1]
    is_sentinel = np.isin(targets, sentinels)
    if targets.size and not is_sentinel[0]:
        raise MiniLMError(f"{op}: targets start with {targets[0]}: expected a sentinel")
    spans: dict[int, np.ndarray] = {}
    starts = np.flatnonzero(is_sentinel)
    for a, b in zip(starts, np.append(starts[1:], targets.size)):
        spans[int(targets[a])] = targets[a + 1:b]
    pieces = []
    for tok in inputs:
        if int(tok) in spans:
            pieces.append(spans[int(tok)])
        elif np.isin(tok, sentinels):
            raise MiniLMError(f"{op}: sentinel {tok} of inputs is missing from targets")
        else:
            pieces.append(np.array([tok], dtype=np.int64))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)


def prefix_lm_split(ids, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """T5's ``prefix_lm`` objective: cut at a point uniform in ``[1, L-1]``; the prefix is the input
    and the rest the target (both non-empty). Returns ``(prefix (P,), rest (L-P,))``, new arrays."""
    ids = as_ids(ids, op="prefix_lm_split", min_length=2)
    split = int(rng.integers(1, ids.size))  # high is exclusive: split in {1, ..., L-1}
    return ids[:split].copy(), ids[split:].copy()


def full_mask(T: int) -> np.ndarray:
    """Fully visible: ``M[i, j] = True`` for all i, j (the encoder's mask). (T, T) bool."""
    T = check_length(T, op="full_mask", name="T")
    return np.ones((T, T), dtype=bool)
