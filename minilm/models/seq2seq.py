"""What T5 and BART share: the decoder input, the loss, RMSNorm, the encoder–decoder model around
their two stacks, and decoding with an encoder.

An encoder–decoder reads the source once (the encoder, fully visible) and writes the target one
token at a time (the decoder, causal, with cross-attention to the encoder's output). Training is
*teacher forcing*: the decoder's input is the target shifted one step to the right, so that the
logits at position t are scored against target token t:

    labels            y₀  y₁  y₂  </s>
    decoder input   start y₀  y₁   y₂         start = pad (T5) or </s> (BART: fairseq's denoising_dataset.py)
    loss = mean over real labels of −log p(y_t | y_<t, source)      (-100 and pad ignored, as in Task 2.2)

:class:`EncoderDecoder` is that model: a shared token table, the two stacks, Task 9.2's masks,
``encode``, ``decode``, ``forward`` and ``generate``. T5 and BART differ only inside their stacks
(relative position bias and RMSNorm vs learned positions and LayerNorm) and in the output layer.

Letters: B batch, S source length, T target length, C channels, V vocabulary, K beams.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import nn, no_grad, tasks
from autograd.errors import ConfigError, ShapeError
from minilm import decoding
from minilm.blocks import check_token_ids

from .config_checks import check_config

# Task 9.2: solutions/task09_seq2seq/architectures.py
encoder_decoder_masks = tasks.bind("task09_seq2seq.architectures", "encoder_decoder_masks")

IGNORE_INDEX = -100


def shift_right(labels, start_id: int, pad_id: int) -> np.ndarray:
    """The decoder input of teacher forcing: ``[start, y₀, …, y_{T-2}]`` for each row of ``labels``
    (B, T); -100 entries become ``pad_id``. A new (B, T) int64 array.

    For a BART target ``<s> x … </s>`` with ``start_id`` = ``</s>`` this is fairseq's "move ``</s>``
    to the front"; for T5, ``start_id`` = pad = 0 as in Hugging Face's ``_shift_right``."""
    labels = np.asarray(labels)
    if labels.ndim != 2 or not np.issubdtype(labels.dtype, np.integer):
        raise ShapeError(f"shift_right: labels of shape {labels.shape} and dtype {labels.dtype}, "
                         "expected (B, T) integer ids")
    out = np.empty(labels.shape, dtype=np.int64)
    out[:, 0] = start_id
    out[:, 1:] = labels[:, :-1]
    out[out == IGNORE_INDEX] = pad_id
    return out


def seq2seq_loss(logits, labels, pad_id: int | None):
    """Teacher-forced cross-entropy: mean over the positions whose label is neither -100
    nor ``pad_id`` (a padded label is never a target). logits (B, T, V), labels (B, T)."""
    labels = np.asarray(labels)
    if logits.shape[:-1] != labels.shape:
        raise ShapeError(f"seq2seq_loss: logits {logits.shape} need labels of shape {logits.shape[:-1]}, "
                         f"got {labels.shape}")
    if pad_id is not None:
        labels = np.where(labels == pad_id, IGNORE_INDEX, labels)
    return F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX)


def default_attention_mask(input_ids, attention_mask, pad_id: int) -> np.ndarray:
    """``attention_mask`` (B, S) as bool (True = real token), or ``input_ids != pad_id`` if None."""
    if attention_mask is None:
        return np.asarray(input_ids) != pad_id
    mask = np.asarray(attention_mask)
    if mask.shape != np.shape(input_ids):
        raise ShapeError(f"attention_mask of shape {mask.shape} for input_ids of shape {np.shape(input_ids)}")
    return mask.astype(bool)


class RMSNorm(nn.Module):
    """T5's layer norm (Zhang & Sennrich 2019): y = x / √(mean(x²) + ε) · weight.

    No mean subtraction and no bias (Mesh TF's ``layer_norm`` in T5, HF ``T5LayerNorm``); ``weight``
    (C,) starts at ones. A drop-in for ``nn.LayerNorm`` inside a ``Block``."""

    def __init__(self, n_embd: int, eps: float = 1e-6, *, dtype=np.float32):
        super().__init__()
        self.normalized_shape, self.eps = int(n_embd), float(eps)
        self.weight = nn.Parameter(np.ones(self.normalized_shape), dtype=dtype)

    def forward(self, x):
        if x.shape[-1] != self.normalized_shape:
            raise ShapeError(f"RMSNorm: input of shape {x.shape}, expected (..., {self.normalized_shape})")
        rms_inv = ((x * x).mean(axis=-1, keepdims=True) + self.eps) ** -0.5  # (..., 1)
        return x * rms_inv * self.weight                                       # (..., C)

    def extra_repr(self):
        return f"({self.normalized_shape},), eps={self.eps}"


# ---- the model around the two stacks --------------------------------------------------------------

class EncoderDecoder(nn.Module):
    """``model(input_ids, decoder_input_ids=None, attention_mask=None, labels=None)``
    → ``{"logits": (B, T, V), "loss": scalar Tensor or None}``.

    ``attention_mask`` (B, S): 1/True on real source tokens; default ``input_ids != pad_id``.
    ``decoder_input_ids`` default: ``shift_right(labels, config.start_id, pad)``. ``labels`` (B, T):
    the target ids, -100 (or pad) where nothing is predicted.

    A family subclasses it, names its ``config_class`` (with ``vocab_size``, ``pad_id``, ``eos_id``,
    ``start_id``) and builds ``shared`` (the (V, C) token table of both stacks), ``encoder`` and
    ``decoder``, each called as ``stack(tokens (B, T, C), mask, enc=None, enc_mask=None)``, and
    defines :meth:`output_logits`.
    """

    config_class: type = object
    default_max_new_tokens = 20   # generate's budget when none is given

    def __init__(self, config):
        super().__init__()
        check_config(type(self).__name__, config, self.config_class)
        self.config = config

    def output_logits(self, g):
        """Decoder states (B, T, C) → logits (B, T, V): the family's output layer."""
        raise NotImplementedError(f"{type(self).__name__}.output_logits")

    def _masks(self, src_mask, T):
        """Task 9.2's (encoder, decoder, cross) masks for a source mask (B, S) and T decoder tokens."""
        B, S = src_mask.shape
        return encoder_decoder_masks(S, T, ~src_mask, np.zeros((B, T), dtype=bool))

    def encode(self, input_ids, attention_mask=None):
        """(B, S) source ids → (B, S, C) encoder states."""
        cfg = self.config
        ids = check_token_ids(f"{type(self).__name__}.encode", input_ids, cfg.vocab_size)
        src_mask = default_attention_mask(ids, attention_mask, cfg.pad_id)      # (B, S) bool
        enc_mask, _, _ = self._masks(src_mask, 0)
        return self.encoder(self.shared(ids), enc_mask)                          # (B, S, C)

    def decode(self, decoder_input_ids, enc, attention_mask):
        """(B, T) decoder ids, encoder states (B, S, C), source mask (B, S) → logits (B, T, V)."""
        return self.output_logits(self.decoder_states(decoder_input_ids, enc, attention_mask))   # (B, T, V)

    def decoder_states(self, decoder_input_ids, enc, attention_mask):
        """:meth:`decode` before the output layer: the decoder's final states (B, T, C)."""
        op = f"{type(self).__name__}.decode"
        ids = check_token_ids(op, decoder_input_ids, self.config.vocab_size)
        src_mask = np.asarray(attention_mask).astype(bool)
        if src_mask.shape != enc.shape[:2] or ids.shape[0] != enc.shape[0]:
            raise ShapeError(f"{op}: decoder ids {ids.shape}, encoder states {enc.shape}, source "
                             f"mask {src_mask.shape}: batch and source lengths must agree")
        _, dec_mask, cross_mask = self._masks(src_mask, ids.shape[1])
        return self.decoder(self.shared(ids), dec_mask, enc=enc, enc_mask=cross_mask)  # (B, T, C)

    def forward(self, input_ids, decoder_input_ids=None, attention_mask=None, labels=None) -> dict:
        cfg = self.config
        if decoder_input_ids is None:
            if labels is None:
                raise ShapeError(f"{type(self).__name__}: pass decoder_input_ids or labels (the decoder "
                                 "input is built from them)")
            decoder_input_ids = shift_right(labels, cfg.start_id, cfg.pad_id)
        src_mask = default_attention_mask(input_ids, attention_mask, cfg.pad_id)
        enc = self.encode(input_ids, src_mask)
        logits = self.decode(decoder_input_ids, enc, src_mask)
        loss = None if labels is None else seq2seq_loss(logits, labels, cfg.pad_id)
        return {"logits": logits, "loss": loss}

    def generate(self, input_ids, max_new_tokens: int | None = None, *, num_beams: int = 1,
                 attention_mask=None, length_penalty: float = 1.0, eos_id: int | None = None) -> np.ndarray:
        """Greedy (``num_beams=1``) or beam search (Task 4.3) from the source ``input_ids`` (B, S);
        returns the generated ids (B, n) after the start token, EOS kept, then pad. ``max_new_tokens``
        defaults to the family's ``default_max_new_tokens``, ``eos_id`` to the config's."""
        cfg = self.config
        n = self.default_max_new_tokens if max_new_tokens is None else max_new_tokens
        return generate(self, input_ids, n, start_id=cfg.start_id, eos_id=cfg.eos_id if eos_id is None else eos_id,
                        pad_id=cfg.pad_id, attention_mask=attention_mask, num_beams=num_beams,
                        length_penalty=length_penalty)

    def extra_repr(self):
        c = self.config
        return f"n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, vocab_size={c.vocab_size}"


# ---- decoding ------------------------------------------------------------------------------------

def _decoder_log_probs(model, enc, src_mask):
    """step_fn for :func:`minilm.decoding.beam_search`: (K, t) decoder ids → (K, V) log-probs."""
    def step(ids):
        K = ids.shape[0]
        enc_k = enc[np.zeros(K, dtype=np.int64)] if enc.shape[0] != K else enc  # (K, S, C)
        mask_k = np.repeat(src_mask, K, axis=0) if src_mask.shape[0] != K else src_mask
        logits = model.decode(ids, enc_k, mask_k)                              # (K, t, V)
        return decoding.log_probs(logits.data[:, -1, :])
    return step


def _greedy(model, enc, src_mask, max_new_tokens, *, start_id, eos_id, pad_id) -> np.ndarray:
    """Greedy decoding of every row at once with :func:`minilm.decoding.generate_tokens`: (B, n)."""
    ids = np.full((enc.shape[0], 1), start_id, dtype=np.int64)
    out = decoding.generate_tokens(lambda t: model.decode(t, enc, src_mask).data[:, -1, :], ids,
                                   max_new_tokens, greedy=True, eos_id=eos_id)[:, 1:]   # (B, n)
    if eos_id is not None:  # generate_tokens repeats EOS after the first: pad instead
        after_eos = np.cumsum(out == eos_id, axis=1) - (out == eos_id) > 0
        out = np.where(after_eos, pad_id, out)
    return out


def _beams(model, enc, src_mask, max_new_tokens, *, start_id, eos_id, pad_id, num_beams,
           length_penalty) -> np.ndarray:
    """Beam search, one source row at a time; the best beam of each, padded to (B, n)."""
    rows = []
    for b in range(enc.shape[0]):
        step = _decoder_log_probs(model, enc[b:b + 1], src_mask[b:b + 1])
        best = decoding.beam_search(step, np.array([start_id], dtype=np.int64), num_beams=num_beams,
                                    max_new_tokens=max_new_tokens, eos_id=eos_id, length_penalty=length_penalty)
        rows.append(np.asarray(best[0][1])[1:])
    out = np.full((len(rows), max((len(r) for r in rows), default=0)), pad_id, dtype=np.int64)
    for b, r in enumerate(rows):
        out[b, :len(r)] = r
    return out


def generate(model, input_ids, max_new_tokens: int, *, start_id: int, eos_id: int | None, pad_id: int,
             attention_mask=None, num_beams: int = 1, length_penalty: float = 1.0) -> np.ndarray:
    """Greedy (``num_beams=1``) or beam-search decoding of an encoder–decoder.

    ``model`` has ``encode(input_ids, attention_mask) -> (B, S, C)`` and
    ``decode(decoder_ids, enc, attention_mask) -> logits (B, t, V)``. The source is encoded once;
    each step re-runs the decoder on the tokens so far (no key/value cache: simple, and cheap at
    these sizes). Returns the generated tokens (B, n) — the start token left out, EOS kept, rows
    that finished early padded with ``pad_id``. Runs in eval mode without gradients.
    """
    if max_new_tokens < 0 or num_beams < 1:
        raise ConfigError(f"generate: max_new_tokens={max_new_tokens}, num_beams={num_beams}: "
                          "expected max_new_tokens >= 0 and num_beams >= 1")
    input_ids = np.asarray(input_ids)
    if input_ids.ndim == 1:
        input_ids = input_ids[None]
    src_mask = default_attention_mask(input_ids, attention_mask, pad_id)    # (B, S)
    ids = dict(start_id=start_id, eos_id=eos_id, pad_id=pad_id)
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            enc = model.encode(input_ids, src_mask)                            # (B, S, C)
            if num_beams == 1:
                return _greedy(model, enc, src_mask, max_new_tokens, **ids)
            return _beams(model, enc, src_mask, max_new_tokens, num_beams=num_beams,
                          length_penalty=length_penalty, **ids)
    finally:
        model.train(was_training)


def strip_after_eos(ids, eos_id: int) -> list[list[int]]:
    """Each row of generated ids (B, n) up to and including its first EOS, as a list of ints."""
    out = []
    for row in np.asarray(ids):
        row = [int(t) for t in row]
        out.append(row[:row.index(eos_id) + 1] if eos_id in row else row)
    return out
