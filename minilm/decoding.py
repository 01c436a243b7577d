"""Decoding: from a model's next-token scores to text (as transformers' src/transformers/generation/
and openai/gpt-2's src/sample.py do it).

The rules are task slots:

* Task 4.2 (``solutions/task04_gpt/decoding.py``): ``greedy``, ``apply_temperature``,
  ``top_k_filter``, ``top_p_filter`` (Hugging Face's rule: the token that crosses p is kept) and
  ``sample_token`` (one draw per row from the filtered logits), which :func:`sample_next` chains:
  temperature → top-k → top-p → sample;
* Task 4.3 (``solutions/task04_gpt/beam_search.py``): ``beam_search(step_fn, start_ids, *,
  num_beams, max_new_tokens, eos_id, length_penalty)`` with ``step_fn(ids (N, t)) -> log-probs
  (N, V)``, so any decoder (GPT, T5, BART) can use it.

They are bound below one line per slot, as every module that calls a slot does
(docs/architecture.md), so these lines look like every other module's bindings on purpose.

This module adds the autoregressive loop, :func:`generate_tokens`, shared by every model: GPT's
``generate``, the prefix LMs' (``minilm.models.prefixlm.PrefixLMBase.generate``) and the greedy
path of the encoder–decoders (``minilm.models.seq2seq.generate``).
Defaults as in the GPT-2 repository: temperature 1, no top-k, no top-p (HF's ``generate``
defaults to greedy and top_k=50; we make the choice explicit instead).

Letters: B batch, T time, V vocabulary.
"""
from __future__ import annotations

import numpy as np

from autograd import tasks
from autograd.errors import ConfigError, ShapeError

# Task 4.2: solutions/task04_gpt/decoding.py
greedy = tasks.bind("task04_gpt.decoding", "greedy")
apply_temperature = tasks.bind("task04_gpt.decoding", "apply_temperature")
top_k_filter = tasks.bind("task04_gpt.decoding", "top_k_filter")
top_p_filter = tasks.bind("task04_gpt.decoding", "top_p_filter")
sample_token = tasks.bind("task04_gpt.decoding", "sample_token")
# Task 4.3: solutions/task04_gpt/beam_search.py
beam_search = tasks.bind("task04_gpt.beam_search", "beam_search")

_argmax = greedy  # generate_tokens has a ``greedy`` flag that hides the name


def sample_next(logits, *, rng, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None) -> np.ndarray:
    """Draw the next token of each row: temperature → top-k → top-p → sample, the order of
    openai/gpt-2's src/sample.py and of transformers' logits warpers (``TemperatureLogitsWarper``,
    then ``TopKLogitsWarper``, then ``TopPLogitsWarper``). logits (V,) → a 0-d int64 array;
    (N, V) → (N,), one independent draw per row with ``rng``.

    Why the temperature comes first: dividing by T keeps the order of the logits, so top-k keeps
    the same tokens either way, but top-p counts probability mass, and T moves it. p is meant as a
    share of the distribution the token is drawn from, which is softmax(z / T): at T = 3,
    probabilities [.5, .3, .15, .05] flatten to ≈ [.34, .28, .22, .16] and p = 0.7 needs three
    tokens, where filtering before the division would keep two; at T = 0.4 they sharpen to
    ≈ [.75, .21, .04, .00] and p = 0.7 keeps one.
    """
    z = apply_temperature(logits, temperature)
    z = top_k_filter(z, top_k)
    z = top_p_filter(z, top_p)
    return sample_token(z, rng=rng)


def generate_tokens(next_logits, idx, max_new_tokens: int, *, rng=None, temperature: float = 1.0,
                    top_k: int | None = None, top_p: float | None = None, greedy: bool = False,
                    eos_id: int | None = None, context: int | None = None, process=None) -> np.ndarray:
    """Extend ``idx`` (B, T0) by up to ``max_new_tokens`` tokens, one at a time; returns (B, T0 + n).

    ``next_logits(ids (B, t)) -> (B, V)`` gives the scores of the next token after each row.
    ``greedy=True`` takes the argmax (no randomness); otherwise :func:`sample_next` draws with
    ``rng`` (required). ``context`` crops the input of ``next_logits`` to the last ``context``
    tokens (a model with learned positions cannot see more than its block size). With ``eos_id``,
    a row that produced EOS keeps producing EOS, and the loop stops once every row has.
    ``process(logits (B, V), ids (B, t), step) -> logits`` runs before each choice, as
    transformers' logits processors do (a banned n-gram, a forced first or last token).
    """
    idx = np.array(idx, dtype=np.int64)                   # a copy
    if idx.ndim != 2:
        raise ShapeError(f"generate_tokens: idx of shape {idx.shape}, expected (B, T)")
    if max_new_tokens < 0:
        raise ConfigError(f"generate_tokens: max_new_tokens={max_new_tokens} must be >= 0")
    if not greedy and rng is None:
        raise ConfigError("generate_tokens: sampling needs rng= (a numpy.random.Generator); "
                          "or pass greedy=True")
    done = np.zeros(idx.shape[0], dtype=bool)             # (B,) rows that produced EOS
    for step in range(max_new_tokens):
        window = idx if context is None else idx[:, -context:]
        logits = np.asarray(next_logits(window))         # (B, V)
        if process is not None:
            logits = np.asarray(process(logits, idx, step))
        if greedy:
            nxt = _argmax(logits)
        else:
            nxt = sample_next(logits, rng=rng, temperature=temperature, top_k=top_k, top_p=top_p)
        nxt = np.asarray(nxt, dtype=np.int64).reshape(-1)  # (B,)
        if eos_id is not None:
            nxt = np.where(done, eos_id, nxt)
            done |= nxt == eos_id
        idx = np.concatenate([idx, nxt[:, None]], axis=1)  # (B, t + 1)
        if eos_id is not None and done.all():
            break
    return idx


def log_probs(logits) -> np.ndarray:
    """log softmax over the last axis, in NumPy (for ``beam_search``'s ``step_fn``)."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
