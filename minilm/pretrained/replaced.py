"""ELECTRA's replaced-token view on a loaded checkpoint (``minilm inspect DIR --replaced``).

ELECTRA's discriminator (Clark et al. 2020, §2) reads a sequence and gives each token one logit;
sigmoid(logit) is its probability that the token was *replaced* (by the generator during
pre-training) rather than original. ``transformers``' ``ElectraForPreTraining`` returns these logits
(B, T); ``hf_logits`` gives the same array here.

* :func:`replaced_view`: the user writes the corruption — take a sentence and swap one word ("the chef
  cooked the meal" → "the chef ate the meal") — and reads p(replaced) at every token.
* :func:`generator_view`: the pre-training step itself, with the generator folder too: mask tokens as
  ELECTRA does (Task 7.1's ``electra_mask``: 15% of the non-special tokens, 85% of them shown as
  [MASK]), let the generator sample a token at each masked position (``sample_from_logits``, the
  Gumbel-max draw from softmax of its MLM logits), and label a position "replaced" only where the
  sample differs from the original (``replaced_token_labels``). The discriminator then reads the
  corrupted sequence. The two folders must share one vocabulary (the released
  google/electra-small-discriminator and -generator do).

Letters: T tokens, V vocabulary.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, TokenizerError
from minilm.corruption.electra import electra_mask, replaced_token_labels, sample_from_logits
from minilm.models.electra import ElectraDiscriminator, ElectraGenerator

from .auto import hf_logits

__all__ = ["replaced_view", "generator_view", "sigmoid"]


def sigmoid(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    return np.exp(-np.logaddexp(0.0, -z))           # 1 / (1 + e^-z) without overflow


def _check_discriminator(model) -> None:
    if not isinstance(model, ElectraDiscriminator):
        raise ConfigError(f"inspect --replaced: the checkpoint is a {type(model).__name__}; the replaced-token "
                          "view needs an ELECTRA discriminator (ElectraForPreTraining, e.g. "
                          "google/electra-small-discriminator)")


def replaced_view(model, tok, text: str) -> dict:
    """p(replaced) = sigmoid(discriminator logit) at every token of ``text`` (special tokens
    included): ``{"text", "tokens", "ids", "special", "p_replaced"}``, lists of length T."""
    _check_discriminator(model)
    ids = tok.encode(text, add_special_tokens=True)
    if not ids:
        raise TokenizerError(f"inspect --replaced: {text!r} gives no tokens")
    p = sigmoid(hf_logits(model, [ids])[0])                                  # (T,)
    specials = set(tok.special_ids)
    return {"text": text, "tokens": tok.convert_ids_to_tokens(ids), "ids": list(ids),
            "special": [i in specials for i in ids], "p_replaced": p.tolist()}


def generator_view(model, generator, tok, text: str, *, rng, mask_prob: float = 0.15,
                   generator_tok=None) -> dict:
    """One ELECTRA corruption of ``text`` by ``generator`` and the discriminator's reading of it:
    per token the original id, the generator's input, its sample (masked positions only, else
    None), the corrupted id, the label (1 = replaced) and p(replaced)."""
    _check_discriminator(model)
    if not isinstance(generator, ElectraGenerator):
        raise ConfigError(f"inspect --generator: the folder holds a {type(generator).__name__}; expected an "
                          "ELECTRA generator (ElectraForMaskedLM, e.g. google/electra-small-generator)")
    if generator_tok is not None and generator_tok.get_vocab() != tok.get_vocab():
        raise ConfigError(f"inspect --generator: the generator's vocabulary ({generator_tok.vocab_size} tokens) "
                          f"differs from the discriminator's ({tok.vocab_size}); ELECTRA's two networks share one")
    if tok.mask_id is None:
        raise TokenizerError("inspect --generator: the tokenizer has no mask_token")
    ids = np.asarray(tok.encode(text, add_special_tokens=True), dtype=np.int64)     # (T,)
    inputs, masked, _ = electra_mask(ids, mask_id=tok.mask_id, special_ids=tok.special_ids,
                                     pad_id=tok.pad_id if tok.pad_id is not None else -1, rng=rng,
                                     mask_prob=mask_prob)
    samples = sample_from_logits(hf_logits(generator, [inputs])[0], rng=rng)        # (T,)
    corrupted = np.where(masked, samples, ids)
    labels = replaced_token_labels(ids, corrupted, masked)
    p = sigmoid(hf_logits(model, [corrupted])[0])                                   # (T,)
    names = tok.convert_ids_to_tokens
    return {"text": text, "mask_prob": mask_prob, "tokens": names(ids.tolist()), "ids": ids.tolist(),
            "generator_input": names(inputs.tolist()), "masked": masked.tolist(),
            "sampled": [names([int(s)])[0] if m else None for s, m in zip(samples, masked)],
            "corrupted": names(corrupted.tolist()), "replaced": labels.tolist(), "p_replaced": p.tolist(),
            "accuracy": float(((p > 0.5) == labels.astype(bool)).mean())}
