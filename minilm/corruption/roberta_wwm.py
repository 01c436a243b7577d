"""Whole-word masking for byte-level BPE (RoBERTa): fairseq's ``MaskTokensDataset(mask_whole_words=...)``.

BERT's whole-word masking (Task 12.2) finds words through WordPiece's ``##`` marks: a piece that
*continues* a word says so. Byte-level BPE marks the other end: a token that *starts* a word after a
space carries the space, written ``Ġ`` by the byte map (GPT-2's src/encoder.py), so ``" forest"`` may become
``Ġf or es t``. fairseq's RoBERTa (``--mask-whole-words``, ``get_whole_word_mask`` in
``fairseq/tasks/masked_lm.py``) keeps one flag per vocabulary entry, "does this token begin a word?",
true for ``Ġ`` tokens and for the special tokens, and masks words instead of tokens:

1. Word starts (:func:`bpe_word_starts`): a token begins a word if it begins with ``Ġ``, if it is a
   special token (``<s>``, ``</s>``, ...: a word of its own), if it follows a special token, or if
   it is the first token of the text. Every other token continues the word before it.
   A sentence's *first* word has no space before it (``"the cat" -> the Ġcat``), so it begins a
   word although it has no ``Ġ``: encode sentences one by one and mark each one's first token (the
   RoBERTa recipe does this before packing sentences into blocks). fairseq's per-vocabulary flag
   cannot see this and glues such a word to the token before it.
2. Masking (:func:`roberta_whole_word_mask`): RoBERTa's rule with *words* in place of positions:
   Task 6.1's ``mask_plan`` over the W words, each word's decision then copied to its tokens and
   applied by Task 6.1's ``apply_mask_plan``. With W words in the sequence, ``num_mask = int(prob · W + U[0, 1))``
   words are drawn without replacement; each drawn word is, as a whole, ``<mask>`` at every position
   (p = 0.8), left unchanged (0.1), or random tokens from the non-special vocabulary (0.1, one draw
   per token).
   Targets are the original ids at every token of a drawn word and ``pad_id`` elsewhere.

So a word is always masked entirely or not at all, and each word — long or short — is drawn with
probability ``prob``; the share of masked *tokens* is therefore a little above ``prob`` when long
words are rare and common words short.

Letters: T tokens in the sequence, W words, V vocabulary size.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ShapeError

from ._token_ids import as_ids, check_mask_args
from .roberta import apply_mask_plan, mask_plan  # Task 6.1: solutions/task06_roberta/masking.py

__all__ = ["WORD_START", "bpe_word_starts", "roberta_whole_word_mask"]

WORD_START = "\u0120"  # "Ġ": the byte map's image of the space byte 0x20 (GPT-2's bytes_to_unicode)


def bpe_word_starts(tokens, special_tokens=()) -> np.ndarray:
    """``(T,)`` bool: does each byte-level BPE token begin a word?

    ``tokens`` are token strings (``tokenizer.convert_ids_to_tokens(ids)``); ``special_tokens`` the
    tokenizer's specials (``tokenizer.special_tokens``). True at position 0, at a special token, right
    after a special token, and at a token starting with ``Ġ``; False elsewhere (a continuation)."""
    special = set(special_tokens)
    starts = np.zeros(len(tokens), dtype=bool)
    previous_special = True                       # the first token begins a word
    for t, token in enumerate(tokens):
        if not isinstance(token, str):
            raise ShapeError(f"bpe_word_starts: token {t} is {token!r}: expected token strings")
        is_special = token in special
        starts[t] = is_special or previous_special or token.startswith(WORD_START)
        previous_special = is_special
    return starts


def roberta_whole_word_mask(ids, word_starts, *, mask_id: int, vocab_size: int, nspecial: int,
                            rng: np.random.Generator, prob: float = 0.15, leave_unmasked_prob: float = 0.1,
                            random_token_prob: float = 0.1, pad_id: int = 1):
    """RoBERTa's masking of one sequence, whole words at a time; returns ``(inputs, targets)``, (T,) each.

    ``ids`` (T,) token ids; ``word_starts`` (T,) bools from :func:`bpe_word_starts` (position 0 always
    begins a word). The other arguments are those of ``roberta_mask``, and so are the
    outputs: ``targets`` holds the original id where a token is predicted and ``pad_id`` elsewhere
    (``targets_to_labels`` turns it into the -100 convention).
    """
    op = "roberta_whole_word_mask"
    ids = as_ids(ids, op=op, vocab_size=vocab_size, min_length=0)          # (T,) a new int64 array
    starts = np.asarray(word_starts)
    if starts.shape != ids.shape or starts.dtype != bool:
        raise ShapeError(f"{op}: word_starts of shape {starts.shape} and dtype {starts.dtype}: expected "
                         f"bools of the ids' shape {ids.shape}")
    check_mask_args(op, mask_id=mask_id, vocab_size=vocab_size, nspecial=nspecial, prob=prob,
                    leave_unmasked_prob=leave_unmasked_prob, random_token_prob=random_token_prob)
    if ids.size == 0:
        return ids.copy(), ids.copy()

    starts = starts.copy()
    starts[0] = True                                   # a sequence cannot begin inside a word
    word_of = np.cumsum(starts) - 1                    # (T,) the word each token belongs to
    W = int(word_of[-1]) + 1

    # 1-2. which words, and what each becomes (<mask> / unchanged / random tokens): Task 6.1's plan over W words
    word_mask, word_to_mask, word_to_random = mask_plan(W, rng=rng, prob=prob, leave_unmasked_prob=leave_unmasked_prob,
                                                        random_token_prob=random_token_prob)
    # 3. from words to tokens: every token takes its word's decision; Task 6.1's apply_mask_plan applies it
    plan = (word_mask[word_of], word_to_mask[word_of], word_to_random[word_of])      # (T,) each
    return apply_mask_plan(ids, plan, mask_id=mask_id, vocab_size=vocab_size, nspecial=nspecial, rng=rng,
                           pad_id=pad_id)
