"""Task 6.1 (masking half): RoBERTa's masking and dynamic vs static masking.

RoBERTa (Liu et al. 2019, §4.1 "Static vs. Dynamic Masking"): BERT masked its data once, while
preparing it, and duplicated it ``dupe_factor = 10`` times with different masks, so over 40 epochs
each mask was seen 4 times ("static"). RoBERTa draws a new mask every time a sequence is fed to the
model ("dynamic"): as good or slightly better, and it needs no 10× copy of the data.

fairseq's ``MaskTokensDataset`` (fairseq/data/mask_tokens_dataset.py) masks one sequence of length ``sz`` like this:

1. ``num_mask = int(prob · sz + U)`` with U ~ Uniform[0, 1): stochastic rounding, so that the
   expected count is exactly ``prob · sz``. That many positions are drawn *without replacement*
   from ALL positions: no special-token exclusion (``<s>`` is already in place and can be masked).
2. Each masked position is "random or unmasked" with probability
   ``leave_unmasked_prob + random_token_prob`` (0.2); of those, the share
   ``leave_unmasked_prob / (leave_unmasked_prob + random_token_prob)`` stays unchanged and the rest
   become a token drawn uniformly from the non-special vocabulary ``[nspecial, vocab_size)``.
   Every other masked position becomes ``mask_id``.
3. The target is the original id at masked positions and ``pad_id`` everywhere else (fairseq's
   convention; its criterion ignores ``pad``). ``minilm.corruption.targets_to_labels`` converts to
   the -100 convention of ``cross_entropy(..., ignore_index=-100)``.

Steps 1-2 are ``mask_plan``, steps 3-4 ``apply_mask_plan``. The library's
``minilm.corruption.roberta_mask`` runs them in that order on one sequence: ``plan =
mask_plan(len(ids), ...)``, then ``apply_mask_plan(ids, plan, ...)``.

Dynamic masking reseeds a Generator from ``(seed, epoch, index)`` on every access
(``np.random.default_rng([seed, epoch, index])``): reproducible, yet new every epoch.

Shapes: one sequence ``ids`` (T,); the outputs are (T,) too.
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError, MiniLMError, ShapeError
from minilm.corruption._token_ids import as_ids, check_mask_probs, check_replacement_ids


def mask_plan(n, *, rng, prob=0.15, leave_unmasked_prob=0.1, random_token_prob=0.1):
    """Task 6.1: RoBERTa's choice of what to mask among ``n`` units (tokens, or whole words).

    Returns ``(masked, to_mask, to_random)``, three bool arrays of shape (n,):

      1. ``num_mask = int(prob * n + rng.random())`` — stochastic rounding (E[num_mask] = prob·n;
         plain ``int`` or ``round`` would bias it). Choose that many units out of ALL n, without
         replacement: ``rng.choice(n, num_mask, replace=False)``. ``masked`` is True there.
      2. For each unit draw u = ``rng.random(n)``: a masked unit with u < ``leave_unmasked_prob +
         random_token_prob`` is "random or unmasked". Split those with a second draw ``rng.random(n)``:
         the share ``leave_unmasked_prob / (leave_unmasked_prob + random_token_prob)`` stays
         unchanged, the rest become random tokens (``to_random``). Every other masked unit becomes
         ``<mask>`` (``to_mask``). (With both probabilities 0, nothing is unchanged or random.)

    So ``to_mask`` and ``to_random`` are disjoint parts of ``masked``, and ``masked & ~to_mask &
    ~to_random`` is the part left unchanged but still predicted. Draw from ``rng`` exactly in the
    order above (one ``random()``, the ``choice``, then two arrays of n), so that the whole kit gives
    the same numbers on your code as on the reference. ``apply_mask_plan`` applies the plan to the
    tokens of a sequence; RoBERTa's whole-word masking (``minilm.corruption.roberta_whole_word_mask``)
    makes the plan over words and applies each word's decision to all of its tokens.

    The graded tests check: the mean of num_mask is prob·n and each count is floor or ceil of it;
    every unit, the first included, is masked at rate prob; the 80/10/10 split among the masked;
    the three arrays nest as described; the order of the draws.
    """
    if isinstance(n, bool) or int(n) != n or n < 0:  # given: checks
        raise ConfigError(f"mask_plan: n={n!r}: expected an integer >= 0")
    check_mask_probs("mask_plan", prob, leave_unmasked_prob, random_token_prob)
    n = int(n)
    # BEGIN SOLUTION
    num_mask = int(prob * n + rng.random())                   # stochastic rounding
    masked = np.zeros(n, dtype=bool)
    masked[rng.choice(n, num_mask, replace=False)] = True     # over ALL units

    rand_or_unmask_prob = leave_unmasked_prob + random_token_prob
    rand_or_unmask = masked & (rng.random(n) < rand_or_unmask_prob)
    unmask_share = leave_unmasked_prob / rand_or_unmask_prob if rand_or_unmask_prob > 0 else 0.0
    unmask = rand_or_unmask & (rng.random(n) < unmask_share)  # stays unchanged
    to_random = rand_or_unmask & ~unmask                      # a random non-special id
    to_mask = masked & ~rand_or_unmask
    return masked, to_mask, to_random
    # END SOLUTION


def apply_mask_plan(ids, plan, *, mask_id, vocab_size, nspecial, rng, pad_id=1):
    """Task 6.1: apply a masking plan to the tokens of one sequence. Returns ``(inputs, targets)``, (T,) each.

    ``ids`` (T,) token ids; ``plan = (masked, to_mask, to_random)``, three bool arrays (T,) as
    ``mask_plan`` returns them — ``to_mask`` and ``to_random`` are disjoint parts of ``masked``, and
    ``masked & ~to_mask & ~to_random`` are the positions left unchanged but still predicted. The
    library's ``minilm.corruption.roberta_mask`` draws the plan over the T positions with your
    ``mask_plan`` and hands it to this function; RoBERTa's whole-word masking draws it over words
    and copies each word's decision to its tokens. Steps 3-4 of the module docstring:

      3. ``targets`` = the original id at EVERY masked position (the ones left unchanged and the
         random ones too: the model must predict them), ``pad_id`` elsewhere;
      4. ``inputs`` = a copy of ``ids`` with ``mask_id`` where ``to_mask``, and at the ``to_random``
         positions ids drawn with ONE call ``rng.integers(nspecial, vocab_size, size=...)``, uniform
         in ``[nspecial, vocab_size)`` (never a special token); every other position unchanged.

    The given lines make ``ids`` a new int64 array (never write into the caller's array) and check
    the plan's shapes. The graded tests check: targets at every masked position and pad elsewhere;
    ``<mask>`` exactly at ``to_mask``, the rest of the input unchanged; random ids only from
    [nspecial, V) and spread over all of it; the one draw.
    """
    op = "apply_mask_plan"  # given: checks
    ids = as_ids(ids, op=op, vocab_size=vocab_size, min_length=0)  # a new int64 array (T,)
    check_replacement_ids(op, mask_id=mask_id, vocab_size=vocab_size, nspecial=nspecial)
    masked, to_mask, to_random = (np.asarray(p, dtype=bool) for p in plan)
    if not masked.shape == to_mask.shape == to_random.shape == ids.shape:
        raise ShapeError(f"{op}: plan of shapes {masked.shape}, {to_mask.shape}, {to_random.shape}: expected "
                         f"three bool arrays of the ids' shape {ids.shape}")
    # BEGIN SOLUTION
    targets = np.where(masked, ids, pad_id)
    inputs = ids.copy()
    inputs[to_mask] = mask_id
    inputs[to_random] = rng.integers(nspecial, vocab_size, size=int(to_random.sum()))
    return inputs, targets
    # END SOLUTION


def dynamic_mask_rng(seed, epoch, index):
    """Task 6.1: the Generator that masks sequence ``index`` in epoch ``epoch``.

    Dynamic masking needs a mask that is (a) new in every epoch and for every sequence, yet
    (b) reproducible: the same ``(seed, epoch, index)`` must give the same mask, whichever order the
    data loader visits the sequences in. So do not keep one Generator running through the data;
    seed a fresh one from all three numbers, e.g. ``np.random.default_rng([seed, epoch, index])``
    (a SeedSequence mixes the list; fairseq uses ``hash((seed, epoch, index))``). Beware of
    ``seed + epoch + index``: (0, 1, 2) and (0, 2, 1) would share a mask.

    Return a ``numpy.random.Generator``. The graded tests check that equal arguments give equal
    draws and that changing any one of seed, epoch and index (or swapping two) changes them.
    """
    for name, value in (("seed", seed), ("epoch", epoch), ("index", index)):  # given
        if int(value) != value or value < 0:
            raise ConfigError(f"dynamic_mask_rng: {name}={value!r} must be an integer >= 0")
    # BEGIN SOLUTION
    return np.random.default_rng([int(seed), int(epoch), int(index)])
    # END SOLUTION


class MaskedDataset:
    """Sequences that are masked when read: dynamically (RoBERTa) or statically (BERT).

    ``masker(ids, rng=...) -> tuple of arrays`` masks one sequence, e.g.
    ``functools.partial(minilm.corruption.roberta_mask, mask_id=4, vocab_size=V, nspecial=5)``.
    ``get(index, epoch)`` returns what the masker returned for sequence ``index`` in that epoch.
    """

    def __init__(self, sequences, masker, *, seed, dynamic=True, static_copies=10):
        """Task 6.1: store the data; for static masking, make the masks now.

        The given lines store ``self.sequences`` (a list of int64 arrays), ``self.masker``,
        ``self.seed``, ``self.dynamic`` and ``self.static_copies``.

        Static masking (``dynamic=False``) is BERT's ``dupe_factor``: build ``static_copies``
        masked versions of every sequence *here*, once, and keep them (e.g. in ``self.copies``,
        where ``self.copies[index][c]`` is copy ``c`` of sequence ``index``). Give each copy its own
        Generator, e.g. ``np.random.default_rng([seed, c, index])``, so that the copies differ.
        Dynamic masking stores nothing: ``get`` masks on demand.
        """
        if int(static_copies) != static_copies or static_copies < 1:  # given
            raise ConfigError(f"MaskedDataset: static_copies={static_copies!r} must be an integer >= 1")
        if int(seed) != seed or seed < 0:
            raise ConfigError(f"MaskedDataset: seed={seed!r} must be an integer >= 0")
        self.sequences = [np.asarray(s, dtype=np.int64) for s in sequences]
        self.masker = masker
        self.seed, self.dynamic, self.static_copies = int(seed), bool(dynamic), int(static_copies)
        # BEGIN SOLUTION
        self.copies = None
        if not self.dynamic:
            self.copies = [[masker(seq, rng=np.random.default_rng([self.seed, c, index]))
                            for c in range(self.static_copies)]
                           for index, seq in enumerate(self.sequences)]
        # END SOLUTION

    def __len__(self):
        return len(self.sequences)

    def get(self, index, epoch):
        """Task 6.1: the masked sequence ``index`` as seen in epoch ``epoch``.

        * dynamic: mask ``self.sequences[index]`` now with a Generator seeded from
          ``(self.seed, epoch, index)`` — the same recipe as ``dynamic_mask_rng`` (write it inline:
          task slots never call each other). Same arguments -> same mask; new epoch -> new mask.
        * static: return the pre-made copy number ``epoch % self.static_copies`` (so the masks repeat
          with period ``static_copies``). Return copies of its arrays, so that a caller who writes
          into them cannot change what later epochs see.

        The graded tests check: dynamic masks differ across epochs (no repetition after
        ``static_copies`` epochs) and across indices, and repeat for the same (seed, epoch, index),
        also in a second dataset built with the same seed; static masks repeat with period
        ``static_copies`` and are not all the same; writing into a returned array changes nothing.
        """
        if not 0 <= index < len(self.sequences):  # given
            raise MiniLMError(f"MaskedDataset.get: index {index} outside [0, {len(self.sequences)})")
        if int(epoch) != epoch or epoch < 0:
            raise ConfigError(f"MaskedDataset.get: epoch={epoch!r} must be an integer >= 0")
        # BEGIN SOLUTION
        if self.dynamic:
            rng = np.random.default_rng([self.seed, int(epoch), int(index)])
            return self.masker(self.sequences[index], rng=rng)
        return tuple(np.array(a, copy=True) for a in self.copies[index][epoch % self.static_copies])
        # END SOLUTION
