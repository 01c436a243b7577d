"""Task 7.2: ELECTRA's joint loss, sampling without a gradient path, and the shared embeddings.

Clark et al. 2020, §2 (Figure 2) and §3.2; google-research/electra ``run_pretraining.py``.
One training step of replaced-token detection, with x the clean ids (B, T) and a_t = 1 on every
real (non-pad) token::

    1-4. m, x^masked = mask(x)                           Task 7.1's electra_mask (given below)
    5.   L_MLM  = mean over t ∈ m of −log p_G(x_t | x^masked)         the generator: a small MLM
    6-7. x̂_t   = sample_t ~ softmax(G_t / T) for t ∈ m, x_t elsewhere   a NumPy array: NO gradient
    8.   y_t    = 1[t ∈ m and x̂_t ≠ x_t]                 a sample equal to the original is "original"
    9.   L_Disc = Σ_t a_t · BCE(D_t(x̂), y_t) / (Σ_t a_t + 1e-6)        over ALL real tokens
    10.  L      = gen_weight · L_MLM + λ · L_Disc,  λ = disc_weight = 50

Why each rule (the mistakes the graded tests look for):

* L_Disc counts **every** real token, [CLS] and [SEP] included — that is ELECTRA's whole point:
  the discriminator learns from all T tokens, not the 15% masked ones (compare Task 7.3's
  ELECTRA-15%). Padding is never counted.
* λ = 50: the binary loss is much smaller than the V-way MLM loss; without λ the generator's
  loss dominates the shared embeddings.
* Sampling is not differentiable, and ELECTRA does not pretend it is (no REINFORCE, no Gumbel-
  softmax; §2 "we do not back-propagate the discriminator loss through the generator"). Build the
  discriminator's input from the sampled **ids** (a NumPy array): then no path leads from L_Disc
  back to the generator's own weights, and their gradient from L_Disc alone is exactly zero.
* The generator and the discriminator share the token, position and segment embeddings (one table,
  §3.1 "Weight Sharing"): both losses update it.

Letters: B batch, T time, V vocabulary, E embedding size.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import tasks
from autograd.errors import ShapeError
from autograd.function import as_tensor

# The slots of this file, bound: ``slots.generator_step(...)`` is the generator_step below, from the
# implementation the kit runs: yours under --impl exercises; the reference while a graded test of a
# full checkout checks one of your functions. A student release has no reference, so there it is
# always yours, and a function that calls another through ``slots`` passes only once that one works.
slots = tasks.slots("task07_electra.loss")


def discriminator_loss(disc_logits, disc_labels, attention_mask):
    """Task 7.2: the replaced-token-detection loss, averaged over the real tokens.

    Arguments:
      disc_logits     Tensor (B, T): one logit per token, > 0 means "replaced".
      disc_labels     int array (B, T): 1 = replaced, 0 = original.
      attention_mask  array (B, T) of 1/0 (or bool): the positions that count — 1 on every real
                      token, [CLS] and [SEP] included, 0 on padding. (ELECTRA-15%, Task 7.3,
                      passes the masked positions here instead.)

    Returns a scalar Tensor::

        L_Disc = Σ_t a_t · [−y_t·log σ(z_t) − (1 − y_t)·log(1 − σ(z_t))] / (Σ_t a_t + 1e-6)

    Use ``F.binary_cross_entropy_with_logits(z, y, reduction="none")`` for the bracket (it is the
    stable form max(z, 0) − z·y + log(1 + e^−|z|)), multiply by a_t and divide by the count + 1e-6
    (ELECTRA's guard: an all-padding batch gives 0, not NaN).

    The graded tests check: the value against a NumPy reference; padded positions change nothing
    (neither the value nor their gradient); [CLS]/[SEP] and unmasked tokens count (not only the
    replaced or masked ones); the gradient is (σ(z_t) − y_t)·a_t / Σa.
    """
    z = as_tensor(disc_logits)  # given: checks
    y = np.asarray(disc_labels)
    a = np.asarray(attention_mask)
    if z.ndim != 2 or y.shape != z.shape or a.shape != z.shape:
        raise ShapeError(f"discriminator_loss: logits {z.shape}, labels {y.shape} and attention_mask "
                         f"{a.shape} must all be (B, T)")
    raise NotImplementedError("Task 7.2: discriminator_loss")


def generator_step(model, input_ids, attention_mask, *, rng):
    """Task 7.2: the generator half of one ELECTRA step (steps 5-8 of the module docstring).

    Every objective runs this half — ELECTRA itself (``replaced_token_detection``) and each
    ablation of Task 7.3 (``minilm.models.electra.ablation_forward``): mask, let the generator
    predict the masked tokens, sample its replacements, and label what the discriminator will read.

    Arguments:
      model           an ``minilm.models.electra.Electra``: ``model.generator(ids, attention_mask)``
                      → MLM logits Tensor (B, T, V); ``model.config`` has ``temperature`` and
                      ``disallow_correct``.
      input_ids       int array (B, T), the clean text x (padded with ``config.pad_id``).
      attention_mask  array (B, T), 1 on real tokens.
      rng             numpy Generator: the masking (given) and the sampling draw from it, in that order.

    The given lines mask the input (Task 7.1): ``gen_inputs`` (85% of the chosen positions are
    [MASK]), ``masked`` (bool) and ``mlm_labels`` (the original id where masked, -100 elsewhere).
    Then, using the library's functions (they are imported for you):

    5. ``mlm_logits = model.generator(gen_inputs, attention_mask)``; ``mlm_loss`` =
       ``F.cross_entropy(mlm_logits, mlm_labels)`` (it skips the -100 positions).
    6. Sample one token per masked position from the generator, from the **NumPy** logits
       ``mlm_logits.data[masked]`` (V-wide rows): ``sample_from_logits(..., rng=rng,
       temperature=config.temperature, disallow_ids=input_ids[masked] if config.disallow_correct
       else None)``.
    7. ``disc_inputs = electra_corrupt(input_ids, masked, samples)`` — plain ids, no Tensor.
    8. ``disc_labels = replaced_token_labels(input_ids, disc_inputs, masked)``.

    Return a dict with the keys ``mlm_loss`` (a scalar Tensor), ``mlm_logits`` (a Tensor),
    ``generator_inputs, masked, mlm_labels, disc_inputs, disc_labels`` (NumPy arrays).

    The graded tests check: L_MLM only over the masked positions and from the [MASK]ed input (not
    the clean one); the discriminator's input holds the generator's samples (not its argmax, not
    the originals) at the masked positions and the clean ids elsewhere; a masked position whose
    sample equals the original is labelled 0; ``disc_inputs`` is a plain integer array (no gradient
    can flow through sampling); the draws follow the masking on the same ``rng``.
    """
    from minilm.corruption import electra_corrupt, electra_mask, replaced_token_labels, sample_from_logits
    cfg = model.config  # given: steps 1-4 (Task 7.1)
    input_ids = np.asarray(input_ids, dtype=np.int64)
    gen_inputs, masked, mlm_labels = electra_mask(input_ids, mask_id=cfg.mask_id, special_ids=cfg.special_ids,
                                                  pad_id=cfg.pad_id, rng=rng, mask_prob=cfg.mask_prob)
    raise NotImplementedError("Task 7.2: generator_step")


def replaced_token_detection(model, input_ids, attention_mask, *, rng):
    """Task 7.2: one ELECTRA step (steps 5-10 of the module docstring) on a batch of clean ids.

    Arguments:
      model           an ``minilm.models.electra.Electra``: ``model.discriminator(ids, attention_mask)``
                      → replaced-token logits Tensor (B, T); ``model.config`` has ``gen_weight`` and
                      ``disc_weight`` (λ).
      input_ids       int array (B, T), the clean text x (padded with ``config.pad_id``).
      attention_mask  array (B, T), 1 on real tokens.
      rng             numpy Generator, for the generator half.

    The given line runs the generator half, steps 5-8 (``slots.generator_step``: ``generator_step``
    above, bound at the top of this file): ``step`` is its dict, with ``mlm_loss`` and
    ``disc_inputs``, ``disc_labels`` (the ids the discriminator reads and its 0/1 targets). Then:

    9. ``disc_logits = model.discriminator(step["disc_inputs"], attention_mask)``; ``disc_loss`` =
       ``slots.discriminator_loss(disc_logits, step["disc_labels"], attention_mask)`` (the
       ``discriminator_loss`` above) — over every real token, not only the masked ones.
    10. ``loss = config.gen_weight * mlm_loss + config.disc_weight * disc_loss``.

    Return ``step`` with the keys ``loss, disc_loss`` (scalar Tensors) and ``disc_logits`` (a
    Tensor) added.

    The graded tests check: loss = gen_weight·L_MLM + λ·L_Disc with the config's λ; L_Disc over all
    real tokens (not the pads, not only the masked); the discriminator reads x̂ (samples, not the
    generator's argmax); and after ``disc_loss.backward()`` every generator-only parameter has a
    gradient of exactly zero (or None), while the shared embeddings have one.
    """
    cfg = model.config  # given: steps 1-8 (the generator half)
    step = slots.generator_step(model, input_ids, attention_mask, rng=rng)
    raise NotImplementedError("Task 7.2: replaced_token_detection")


def tie_embeddings(generator, discriminator):
    """Task 7.2: make the generator use the discriminator's embeddings — one table, not two.

    ``generator`` (``ElectraGenerator``) and ``discriminator`` (``ElectraDiscriminator``) were each
    built with their own ``embeddings`` module (``word_embeddings``, ``position_embeddings``,
    ``token_type_embeddings``, ``LayerNorm``: E wide). The generator's MLM head also reads the word
    table, as its tied decoder: ``generator.lm_head.decoder.weight`` (logits = h·Eᵀ + b).

    ELECTRA (§3.1) shares all the embeddings between the two networks. Sharing means *the same
    objects*, not equal values: assign the discriminator's ``embeddings`` module to the generator,
    and point the generator's decoder at the discriminator's word-embedding Parameter. (Assigning a
    Module or a Parameter to an attribute registers it; a shared Parameter is trained once, with
    the sum of the gradients of both networks.) Return nothing; change ``generator`` in place.

    The graded tests check: ``generator.embeddings`` is ``discriminator.embeddings`` and the
    decoder's weight is the discriminator's word table (identity, not a copy); one optimiser step
    on the sum of both losses moves one table that both networks read; and the model has one
    embedding table fewer parameters than before.
    """
    raise NotImplementedError("Task 7.2: tie_embeddings")
