"""Task 3.3: telling the model where each token is.

Attention is permutation-invariant: shuffle the keys and values together and every output stays
the same. Word order must therefore be *added* to the input. Three ways, one per family:

* **Sinusoidal** (Vaswani et al. 2017, §3.5) — a fixed code, nothing learned::

      PE[pos, 2i]   = sin(pos / 10000^(2i/C))
      PE[pos, 2i+1] = cos(pos / 10000^(2i/C))

  Pair i turns at frequency 1/10000^(2i/C): fast for the first pairs, slow for the last ones.
  PE[pos + k] is a rotation of PE[pos] that depends only on k, so relative offsets are easy to read.
* **Learned** absolute positions (GPT, BERT): a table ``wpe`` (block_size, C) trained like the token
  embedding, plus (BERT) a **segment** table (2, C) saying "sentence A" or "sentence B".
  The input of the first block is the sum  x[b, t] = wte[ids[b, t]] + wpe[t] + wse[segment[b, t]].
* **Relative buckets** (T5; Raffel et al. 2020, §2.1; ``_relative_position_bucket`` in tensorflow/mesh,
  mesh_tensorflow/transformer/transformer_layers.py): no position in the input at all;
  each head adds a learned scalar b[bucket(key − query)] to its attention scores. Small distances
  get a bucket each, larger ones share logarithmically wider buckets, up to ``max_distance``.

Letters: B batch, T time, C channels.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd.errors import ShapeError


def sinusoidal_positions(T, C):
    """Task 3.3: the (T, C) float64 table PE of Vaswani et al. §3.5 (formula in the module docstring).

    Column 2i holds the sine and column 2i+1 the cosine of the same angle pos / 10000^(2i/C);
    ``pos`` runs over 0..T-1. (Interleaved, as in the paper: not all sines then all cosines.)
    For an odd C the last column is a sine.

    Hints: ``np.arange(T)[:, None]`` and the exponents ``np.arange(0, C, 2) / C`` broadcast to the
    (T, ⌈C/2⌉) angle table; assign ``pe[:, 0::2]`` and ``pe[:, 1::2]``.

    The graded tests check: shape; PE[0] = [0, 1, 0, 1, ...]; a few entries against the formula
    (so swapped sin/cos or a wrong exponent shows); every row has norm √(C/2) for even C.
    """
    raise NotImplementedError("Task 3.3: sinusoidal_positions")


def relative_position_bucket(relative_position, bidirectional, num_buckets=32, max_distance=128):
    """Task 3.3: T5's bucket of each relative position ``key − query`` (an int array, any shape).

    Returns an int64 array of the same shape with values in [0, num_buckets). With n = −(key − query)
    (so n > 0 means the key is *before* the query):

    1. bidirectional (encoder): num_buckets //= 2; keys *after* the query (n < 0) use the upper
       half: add num_buckets to the bucket; then n = |n|.
       unidirectional (decoder, causal): n = max(n, 0) — every future key gets bucket 0.
    2. max_exact = num_buckets // 2. If n < max_exact the bucket is n itself.
    3. Otherwise: max_exact + int(log(n / max_exact) / log(max_distance / max_exact)
       · (num_buckets − max_exact)), at most num_buckets − 1.

    Check values (32 buckets, max_distance 128), as ``key − query → bucket``:
        bidirectional:  −1→1, −8→8, −16→10, −64→14, −128→15, 0→0, +1→17, +8→24, +16→26, +64→30, +100→31
        unidirectional: −15→15, −16→16, −32→21, −64→26, −128→31, any positive → 0

    Hint: compute step 3 for every element with ``np.log(np.maximum(n, 1) / max_exact)`` — the
    ``maximum`` avoids log(0) (a RuntimeWarning and an invalid integer cast) — and pick with
    ``np.where(n < max_exact, n, large)``.

    The graded tests check all the values above (both directions, both modes), that no
    RuntimeWarning is raised (log(0)), shapes, and integer output.
    """
    raise NotImplementedError("Task 3.3: relative_position_bucket")


def embed_inputs(ids, token_weight, position_weight, segment_ids=None, segment_weight=None):
    """Task 3.3: the input of the first block, x[b, t] = wte[ids[b, t]] + wpe[t] (+ wse[seg[b, t]]).

    Shapes: ids (B, T) ints; token_weight (V, C), position_weight (T_max, C) and segment_weight
    (n_segments, C) are Tensors (Parameters: the result must carry their gradients);
    segment_ids None or (B, T) ints (BERT: 0 for sentence A, 1 for sentence B). Returns (B, T, C).

    The position of token t is t (0, 1, ..., T-1) — not its id. ``Tensor[int_array]`` picks rows;
    a (T, C) tensor broadcasts over the batch.

    The graded tests check values (positions counted from 0, by place, not by id; segments added
    by segment id) and that each table receives its gradient (a token used twice gets both).
    """
    B, T = np.shape(ids)
    if T > position_weight.shape[0]:
        raise ShapeError(f"embed_inputs: sequence length {T} exceeds the {position_weight.shape[0]} "
                         "learned positions")
    raise NotImplementedError("Task 3.3: embed_inputs")
