"""Task 7.2: ELECTRA's two losses, L_Disc and the joint L, and the shared embeddings.

Clark et al. 2020, §2 (Figure 2) and §3.1; google-research/electra ``run_pretraining.py``.
``minilm.models.electra.Electra.forward`` runs one step as the paper draws it — mask (Task 7.1),
generator, sample, corrupt, label (Task 7.1), discriminator — and calls the pieces of this file
for the losses. With x the clean ids (B, T), m the masked positions and a_t = 1 on every real
(non-pad) token::

    L_MLM  = mean over t ∈ m of −log p_G(x_t | x^masked)                  the generator, a small MLM
    L_Disc = Σ_t a_t · BCE(D_t(x̂), y_t) / (Σ_t a_t + 1e-6)              over ALL real tokens
    L      = gen_weight · L_MLM + λ · L_Disc,  λ = disc_weight = 50

Why each rule (the mistakes the graded tests look for):

* L_Disc counts **every** real token, [CLS] and [SEP] included — that is ELECTRA's whole point:
  the discriminator learns from all T tokens, not the 15% masked ones (compare Task 7.3's
  ELECTRA-15%). Padding is never counted.
* L_MLM counts only the masked positions: elsewhere the generator sees the answer in its input.
* λ = 50: the binary loss is much smaller than the V-way MLM loss; without λ the generator's
  loss dominates the shared embeddings. (The MLM ablations of Task 7.3 put a cross-entropy in
  L_Disc's place and pass weight 1.)
* The generator and the discriminator share the token, position and segment embeddings (one table,
  §3.1 "Weight Sharing"): both losses update it.

No gradient flows through the sampling (§2: "we do not back-propagate the discriminator loss
through the generator"): the model samples from the generator's NumPy logits, so x̂ is plain ids.

Letters: B batch, T time, V vocabulary, E embedding size.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd.errors import ShapeError
from autograd.function import as_tensor


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
    # BEGIN SOLUTION
    weights = a.astype(z.dtype)                                             # (B, T) 1 = counts
    per_token = F.binary_cross_entropy_with_logits(z, y.astype(z.dtype), reduction="none")  # (B, T)
    return (per_token * weights).sum() / (float(weights.sum()) + 1e-6)
    # END SOLUTION


def electra_loss(mlm_logits, mlm_labels, main_loss, *, gen_weight=1.0, disc_weight=50.0):
    """Task 7.2: ELECTRA's joint loss, the one loss line of every objective.

    Arguments:
      mlm_logits   Tensor (B, T, V): the generator's logits on the [MASK]ed input x^masked.
      mlm_labels   int array (B, T): the original id x_t where t was masked, -100 elsewhere.
      main_loss    scalar Tensor: the main network's loss — L_Disc (``discriminator_loss``) for
                   ELECTRA and ELECTRA-15%, the cross-entropy of an MLM ablation (Task 7.3).
      gen_weight   the generator's weight (``ElectraConfig.gen_weight``, 1).
      disc_weight  λ, the main loss's weight (``ElectraConfig.disc_weight``, 50; the model passes
                   1 for the MLM ablations, whose main loss is a cross-entropy like L_MLM).

    Return ``(loss, mlm_loss)``, two scalar Tensors::

        L_MLM = −(1/|m|) Σ_{t∈m} log softmax(mlm_logits_t)[x_t]        m = {t : mlm_labels_t ≠ -100}
        L     = gen_weight · L_MLM + disc_weight · main_loss

    ``F.cross_entropy(mlm_logits, mlm_labels)`` is L_MLM: it skips the -100 positions and averages
    over the others. Keep everything a Tensor (not ``.data``): L trains both networks.

    The graded tests check: L_MLM against a NumPy reference over the masked positions only (an
    average over every position fails); L with the default λ = 50 and with other weights (a
    missing or hard-coded weight fails, and gen_weight counts); the gradient of L reaches the
    logits at the masked positions only and the main loss with factor λ.
    """
    logits, main = as_tensor(mlm_logits), as_tensor(main_loss)  # given: checks
    labels = np.asarray(mlm_labels)
    if logits.ndim != 3 or labels.shape != logits.shape[:2] or main.size != 1:
        raise ShapeError(f"electra_loss: mlm_logits {logits.shape} must be (B, T, V), mlm_labels {labels.shape} "
                         f"(B, T) and main_loss {main.shape} a single value")
    # BEGIN SOLUTION
    mlm_loss = F.cross_entropy(logits, labels)                      # L_MLM: the -100 positions skipped
    return gen_weight * mlm_loss + disc_weight * main, mlm_loss
    # END SOLUTION


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
    # BEGIN SOLUTION
    generator.embeddings = discriminator.embeddings
    generator.lm_head.decoder.weight = discriminator.embeddings.word_embeddings.weight
    # END SOLUTION
