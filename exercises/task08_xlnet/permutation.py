"""Task 8.1: XLNet's factorisation order, permutation mask and partial prediction.

Yang et al. 2019, "XLNet: Generalized Autoregressive Pretraining for Language Understanding", §2.2
(permutation language modelling), §2.3 (two-stream attention, partial prediction). The reference is
zihangdai/xlnet ``data_utils.py`` (``_local_perm``), and HF's
``DataCollatorForPermutationLanguageModeling`` for the span sampler.

XLNet keeps the tokens in their places and changes only *who may look at whom*. A factorisation
order ``z`` (a permutation of the positions) is sampled; the token at ``z_t`` is predicted from the
tokens at ``z_1 … z_{t-1}``. Only the last ~1/K of the order are predicted (the *targets*); the
others are plain context that every position may see.

The mask convention is XLNet's: ``perm_mask[i, j] = True`` means position i may **not** attend to
position j.

* query stream (``perm_mask``): a target sees the context and the targets before it in the order —
  never itself (it must predict its own token) and never a later target;
* content stream (``content_mask`` = ``perm_mask`` with the diagonal cleared): the same, but every
  position also sees itself.

Letters: T sequence length, K the partial-prediction constant (``|z| / (|z| - c) ≈ K``).
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, ShapeError
from minilm.corruption._token_ids import check_fraction, check_length


def check_order(order, op="permutation_mask"):
    """``order`` as a new int64 array; raises unless it is a permutation of ``0 … T-1``."""
    order = np.array(order, dtype=np.int64)
    if order.ndim != 1 or order.size == 0:
        raise ShapeError(f"{op}: order has shape {order.shape}: expected a non-empty 1-D permutation")
    if not np.array_equal(np.sort(order), np.arange(order.size)):
        raise ConfigError(f"{op}: order {order.tolist()[:12]} is not a permutation of "
                          f"0..{order.size - 1}")
    return order


def check_flags(flags, T, name, op="permutation_mask"):
    """``(T,)`` bool flags (``None`` → all False), as a new array."""
    if flags is None:
        return np.zeros(T, dtype=bool)
    flags = np.array(flags)
    if flags.shape != (T,) or flags.dtype != bool:
        raise ShapeError(f"{op}: {name} has shape {flags.shape} and dtype {flags.dtype}: expected "
                         f"a ({T},) bool array")
    return flags.copy()


def sample_factorization_order(T, *, rng, perm_size=None):
    """Task 8.1: a random factorisation order ``order (T,)``: ``order[t]`` is the position predicted
    at step t (a permutation of ``0 … T-1``).

    ``perm_size=None``: a uniformly random permutation (``rng.permutation(T)``).
    ``perm_size=P`` (the local permutation of XLNet's ``_local_perm``, used by HF with
    ``P = T // 2``): cut the positions into ``T // P`` consecutive blocks of P; draw ONE random
    permutation ``π`` of ``0 … P-1`` and use it in every block, blocks kept in order, so
    ``order[b·P + o] = b·P + π[o]`` (block b's positions all come before block b+1's). ``T`` must be
    a multiple of ``P`` (else ``ShapeError``). Tests check it is a permutation, the block structure,
    and that every order is equally likely.
    """
    raise NotImplementedError("Task 8.1: sample_factorization_order")


def partial_prediction_targets(order, *, K=6, candidates=None):
    """Task 8.1: partial prediction — the targets are the LAST ``c`` candidates of the order.

    ``N`` = number of candidate positions (``candidates (T,)`` bool; ``None`` = all positions).
    Predict ``n = max(1, round(N / K))`` of them (none if ``N == 0``), so ``|z| / (|z| - c) ≈ K``
    (XLNet: K = 6, 85 of 512). The targets are the last n candidates in the order — walk ``order``
    from its end and keep the candidate positions. Raise ``ConfigError`` if ``K < 1``.
    Returns ``is_target (T,)`` bool, a new array. Tests check the count for several K and that no
    target comes before a non-target candidate in the order.
    """
    raise NotImplementedError("Task 8.1: partial_prediction_targets")


def permutation_mask(order, is_target, *, is_functional=None):
    """Task 8.1: the permutation masks — returns ``(perm_mask, content_mask)``, both ``(T, T)``
    bool, ``True`` = row i may NOT attend to column j.

    ``rank[p]`` is the step at which position p comes in ``order`` (the inverse permutation). Three
    kinds of position: *targets* (``is_target``), *functional* tokens (``is_functional``, e.g.
    ``[SEP]``/``[CLS]``: never targets, but they keep their place in the order), and plain
    *context* (everything else). XLNet's recipe (``_local_perm``):

    1. Context positions get rank −1: they come before everything, so all positions see them, and
       they see no target (no information about a target leaks through the context).
    2. ``self_rank = rank`` for targets and ``rank + 1`` for the others.
    3. ``perm_mask[i, j] = (self_rank[i] <= rank[j]) and j is a target or functional``.

    So a target sees the context, the functional tokens and the targets before it in the order,
    and not itself or any later target. ``content_mask`` is ``perm_mask`` with the diagonal set to
    False: in the content stream a token sees itself. A position may not be both a target and
    functional (``ConfigError``). Tests check these properties on random orders and that the mask
    is not transposed (row = the one who looks).
    """
    raise NotImplementedError("Task 8.1: permutation_mask")


def sample_plm_spans(T, *, rng, plm_probability=1 / 6, max_span_length=5):
    """Task 8.1: HF's span sampler for permutation LM targets (``DataCollatorForPermutationLM...``).

    Walk along the row with ``cur = 0``; while ``cur < T``:
    ``span ~ U{1 … max_span_length}`` (``rng.integers(1, max_span_length + 1)`` — HF's NumPy path
    used Python's inclusive ``randint(1, max_span_length + 1)`` and so drew spans of 6: avoid that),
    ``context = int(span / plm_probability)``, ``start = cur + U{0 … context - span}``,
    mark ``start : start + span`` (clipped at T), then ``cur += context``. So about
    ``plm_probability`` of the tokens are targets, one span per context window.

    HF permutes the two halves separately, so ``T`` must be even: an odd ``T`` raises
    ``ShapeError`` (a ``ValueError``, like HF). Returns ``mask (T,)`` bool, ``True`` = target.
    Tests check the rate, that no run is longer than it could be, and the odd-length error.
    """
    raise NotImplementedError("Task 8.1: sample_plm_spans")
