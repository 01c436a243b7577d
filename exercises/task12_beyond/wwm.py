"""Task 12.2: whole-word masking (WWM), BERT's ``do_whole_word_mask``.

WordPiece splits a rare word into pieces: ``unaffable -> un ##aff ##able``. Masking pieces one by one
lets the model cheat: seeing ``un [MASK] ##able`` it only has to finish a word it can almost read.
Whole-word masking (released with BERT in May 2019, ``create_pretraining_data.py``) chooses *words*
instead: the pieces of a word are masked together or not at all. The budget is still counted in
pieces, so a long word that does not fit is skipped and the sequence may end up under-filled.

The procedure (google-research/bert, ``create_pretraining_data.py``, ``create_masked_lm_predictions``):

1. Group the positions: a piece starting with ``##`` joins the group before it; every other token
   starts a new group; ``[CLS]`` and ``[SEP]`` belong to no group (they are never predicted).
2. Shuffle the groups.
3. ``num_to_predict = min(max_predictions, max(1, round(len(tokens) * prob)))``, where
   ``len(tokens)`` counts ``[CLS]`` and ``[SEP]`` too, and ``round`` is Python's (half to even).
4. Walk the shuffled groups: stop once ``num_to_predict`` positions are chosen; skip a group that
   would take the count past it (a later, shorter word may still fit).

Step 1 is ``word_groups``; steps 2-4 are ``choose_groups``, which BERT's ordinary masking shares
(each position a group of one). The library puts them together: ``minilm.corruption.bert_whole_word_mask``
runs ``choose_groups(word_groups(tokens), len(tokens), ...)`` and sorts the result, and
``minilm.corruption.mask_tokens_wwm`` applies BERT's 80/10/10 replacement to those positions.
"""
from __future__ import annotations

from autograd.errors import ConfigError
from minilm.corruption._token_ids import check_fraction

NEVER_MASKED = ("[CLS]", "[SEP]")


def _check_budget_args(op, prob, max_predictions):
    """Given helper (not the lesson): ``prob`` in [0, 1] and a non-negative ``max_predictions``."""
    check_fraction(prob, op=op, name="prob")
    if isinstance(max_predictions, bool) or int(max_predictions) != max_predictions or max_predictions < 0:
        raise ConfigError(f"{op}: max_predictions={max_predictions!r}: expected an integer >= 0")


def word_groups(tokens):
    """Task 12.2: group WordPiece positions into whole words.

    ``tokens`` is a list of WordPiece strings, e.g.
    ``["[CLS]", "un", "##aff", "##able", "cat", "[SEP]"]``. Return a list of groups, each a list of
    positions (ints, increasing) that form one word: here ``[[1, 2, 3], [4]]``.

    Rules (BERT's ``create_masked_lm_predictions`` with ``do_whole_word_mask=True``):
      * ``[CLS]`` and ``[SEP]`` are skipped: they are in no group.
      * a token starting with ``"##"`` is appended to the last group, if there is one;
      * every other token (and a ``##`` token when no group exists yet) starts a new group.

    The graded tests compare your groups with hand-made examples.
    """
    raise NotImplementedError("Task 12.2: word_groups")


def choose_groups(groups, num_tokens, *, rng, prob=0.15, max_predictions=20):
    """Task 12.2: BERT's budget-and-group walk: which groups of positions to predict.

    ``groups``: a list of groups, each a list of positions (ints) — the words of ``word_groups``, or
    one position per group for BERT's ordinary masking. ``num_tokens``: the length of the sequence,
    ``[CLS]`` and ``[SEP]`` included. Return the chosen positions (ints) **in the order chosen** (not
    sorted: the 80/10/10 rule is then applied to them in this order).

    Steps (BERT's ``create_masked_lm_predictions``):
      1. ``budget = min(max_predictions, max(1, round(num_tokens * prob)))`` — Python's ``round``
         (half to even: 30 tokens at 0.15 give round(4.5) = 4);
      2. shuffle the groups with ONE call ``rng.permutation(len(groups))``;
      3. walk the shuffled groups: ``break`` once ``budget`` positions are chosen; ``continue`` past a
         group whose positions would take the count above ``budget`` (a later, shorter one may still
         fit); otherwise take all its positions, in the group's order.

    The library's ``minilm.corruption.bert_whole_word_mask`` (over ``word_groups``) and
    ``minilm.corruption.bert_masked_lm_predictions`` (one position per group) both make their choice
    with this function.

    The graded tests check over many draws: the count never exceeds the budget, and reaches it when
    short groups can fill it; a group is taken whole or not at all; a group too long for what is left
    is skipped, not cut, and the walk goes on; every group is chosen at about the same rate (the
    groups really are shuffled, anew on each call); the budget's rounding and its cap.
    """
    _check_budget_args("choose_groups", prob, max_predictions)  # given
    groups = [[int(t) for t in g] for g in groups]
    raise NotImplementedError("Task 12.2: choose_groups")
