"""Task 10.2: matching the teacher *inside* — hidden states and attention — and initialising the
student from the teacher's layers.

The logits are only the teacher's last word. The distillation recipes also match what it computes
on the way:

* **DistilBERT** (Sanh et al. 2019; HF ``distiller.py``) aligns the directions of the last hidden
  states, position by position, over the real (non-pad) tokens only:

      L_cos = mean over non-pad positions of (1 − cos(h_s, h_t))

* **TinyBERT** (Jiao et al. 2020, §3.1) matches hidden states through a *learned* projection W_h
  (the student may be narrower, C_s < C_t), and the attention scores per head:

      L_hidn = MSE(H_s · W_h, H_t)        H_s (B, T, C_s), W_h (C_s, C_t), H_t (B, T, C_t)
      L_attn = MSE(A_s, A_t)              A (B, H, T, T), averaged over the real (query, key) pairs

* **Initialisation** (DistilBERT, ``extract_distilbert.py``): the student starts as a copy of the
  teacher's embeddings and of a subset of its layers — "one layer out of two"; for BERT-base's 12
  layers the 6 kept are [0, 2, 4, 7, 9, 11].

Letters: B batch, T time, C channels (C_s student, C_t teacher), H heads, L layers.
"""
from __future__ import annotations

import numpy as np

import autograd.functional as F
from autograd import Tensor
from autograd.errors import ConfigError, ShapeError
from autograd.function import as_tensor


def _mask_array(op: str, attention_mask, B: int, T: int) -> np.ndarray:
    """``attention_mask`` as a (B, T) float array of 0/1 (None = every position is real)."""
    if attention_mask is None:
        return np.ones((B, T))
    m = np.asarray(getattr(attention_mask, "data", attention_mask))
    if m.shape != (B, T):
        raise ShapeError(f"{op}: attention_mask of shape {m.shape}, expected {(B, T)} (1 = real token)")
    if not m.any():
        raise ShapeError(f"{op}: attention_mask has no real position; nothing to compare")
    return m.astype(bool).astype(np.float64)


def cosine_hidden_loss(h_s, h_t, attention_mask):
    """Task 10.2: DistilBERT's cosine loss, mean(1 − cos(h_s, h_t)) over the non-pad positions.

    h_s: Tensor (B, T, C), the student's hidden states; h_t: (B, T, C), the teacher's (a target:
    detach it); attention_mask: (B, T) with 1 on real tokens and 0 on padding, or None (no padding).
    Returns a scalar Tensor:

        L = Σ_{b,t} m_bt · (1 − cos(h_s[b,t], h_t[b,t])) / Σ_{b,t} m_bt

    ``F.cosine_similarity(x1, x2, axis=-1)`` gives the (B, T) cosines. Padded positions hold
    whatever the encoder wrote there; they must not count, neither in the sum nor in the count.
    Use ``_mask_array`` (above) to get m as a (B, T) array.

    The graded tests check the value with and without padding (padded positions changed at will
    must not move the loss) and the gradient.
    """
    h_s = as_tensor(h_s)
    h_t = as_tensor(h_t, (h_s,))
    if h_s.ndim != 3 or h_s.shape != h_t.shape:
        raise ShapeError(f"cosine_hidden_loss: student {h_s.shape} and teacher {h_t.shape} hidden states, "
                         "expected the same (B, T, C) shape (DistilBERT needs equal widths)")
    B, T, _ = h_s.shape
    m = _mask_array("cosine_hidden_loss", attention_mask, B, T)    # (B, T)
    # BEGIN SOLUTION
    cos = F.cosine_similarity(h_s, Tensor(h_t.data), axis=-1)       # (B, T)
    per_position = (1.0 - cos) * m.astype(h_s.dtype)                # padding contributes 0
    return per_position.sum() / float(m.sum())
    # END SOLUTION


def hidden_mse_loss(h_s, h_t, W_h):
    """Task 10.2: TinyBERT's hidden-state loss, MSE(H_s · W_h, H_t).

    h_s: Tensor (B, T, C_s); h_t: (B, T, C_t), a target (detach it); W_h: Tensor (C_s, C_t), the
    learned projection that lifts the student's width to the teacher's (trained with the student,
    so gradients must reach it). Returns the scalar mean over all B·T·C_t squared differences:

        L = (1 / (B·T·C_t)) Σ (H_s W_h − H_t)²

    ``F.mse_loss(input, target)`` is the mean of squared differences. Mind the orientation: W_h is
    (C_s, C_t), so it multiplies on the right; do not leave it out even when C_s = C_t.
    The graded tests use a non-symmetric square W_h (a transposed or missing projection gives a
    different number), a narrow student (C_s < C_t), and check the gradient reaches W_h.
    """
    h_s, W_h = as_tensor(h_s), as_tensor(W_h)
    h_t = as_tensor(h_t, (h_s,))
    if h_s.ndim != 3 or h_t.ndim != 3 or h_s.shape[:2] != h_t.shape[:2]:
        raise ShapeError(f"hidden_mse_loss: student {h_s.shape} and teacher {h_t.shape}, expected "
                         "(B, T, C_s) and (B, T, C_t)")
    if W_h.shape != (h_s.shape[-1], h_t.shape[-1]):
        raise ShapeError(f"hidden_mse_loss: W_h of shape {W_h.shape}, expected (C_s, C_t) = "
                         f"{(h_s.shape[-1], h_t.shape[-1])}")
    # BEGIN SOLUTION
    projected = h_s @ W_h                                           # (B, T, C_s) @ (C_s, C_t) -> (B, T, C_t)
    return F.mse_loss(projected, Tensor(h_t.data))
    # END SOLUTION


def attention_mse_loss(A_s, A_t, mask):
    """Task 10.2: TinyBERT's attention loss, MSE(A_s, A_t) over the real (query, key) pairs.

    A_s: Tensor (B, H, T, T), the student's attention scores of one layer; A_t: (B, H, T, T), the
    teacher's (a target: detach it); mask: (B, T), 1 on real tokens, 0 on padding, or None.
    A pair (i, j) counts when both query i and key j are real: M_bij = m_bi · m_bj. Returns

        L = Σ_{b,h,i,j} M_bij (A_s − A_t)²_bhij / (H · Σ_{b,i,j} M_bij)

    (TinyBERT's code zeroes the masked entries, ≤ −100, before an MSE; leaving them out of the
    average is the same idea without counting the zeros.) Student and teacher need the same H.
    The graded tests change padded rows and columns at will (the loss must not move) and check
    the value and gradient.
    """
    A_s = as_tensor(A_s)
    A_t = as_tensor(A_t, (A_s,))
    if A_s.ndim != 4 or A_s.shape != A_t.shape or A_s.shape[-1] != A_s.shape[-2]:
        raise ShapeError(f"attention_mse_loss: student {A_s.shape} and teacher {A_t.shape} attention, "
                         "expected the same (B, H, T, T) shape (equal head counts)")
    B, H, T, _ = A_s.shape
    m = _mask_array("attention_mse_loss", mask, B, T)               # (B, T)
    # BEGIN SOLUTION
    pairs = m[:, None, :, None] * m[:, None, None, :]               # (B, 1, T, T): query and key real
    diff = A_s - Tensor(A_t.data)
    sq = diff * diff * pairs.astype(A_s.dtype)                      # (B, H, T, T)
    return sq.sum() / float(H * pairs.sum())
    # END SOLUTION


def init_student_from_teacher(student, teacher, layer_map):
    """Task 10.2: copy the teacher's embeddings and the layers ``layer_map`` into the student.

    student, teacher: ``BertModel``s (``minilm/models/bert.py``) of the same width: modules
    ``embeddings`` and ``encoder.layer`` (a list of Blocks). layer_map: teacher layer indices
    (0-based), one per student layer: student layer i becomes a copy of teacher layer
    ``layer_map[i]`` — DistilBERT keeps "one layer out of two", [0, 2, 4, 7, 9, 11] of 12.
    Returns the student (changed in place, like ``load_state_dict``); the teacher is unchanged and
    shares no arrays with the student afterwards.

    Copy with ``module.load_state_dict(other.state_dict())`` (state_dict returns copies):
    ``student.embeddings`` ← ``teacher.embeddings``, and for each i,
    ``student.encoder.layer[i]`` ← ``teacher.encoder.layer[layer_map[i]]``. The pooler is not
    copied (DistilBERT removes it). The graded tests give every teacher layer different weights
    and check each student layer against the teacher layer it should come from.
    """
    n_t, n_s = len(teacher.encoder.layer), len(student.encoder.layer)
    layer_map = [int(i) for i in layer_map]
    if len(layer_map) != n_s:
        raise ConfigError(f"init_student_from_teacher: layer_map has {len(layer_map)} entries, expected one "
                          f"per student layer ({n_s})")
    if any(i < 0 or i >= n_t for i in layer_map):
        raise ConfigError(f"init_student_from_teacher: layer_map {layer_map} names a layer outside the "
                          f"teacher's 0..{n_t - 1}")
    if student.config.n_embd != teacher.config.n_embd:
        raise ConfigError(f"init_student_from_teacher: student width {student.config.n_embd} != teacher "
                          f"width {teacher.config.n_embd}; copying layers needs equal widths")
    # BEGIN SOLUTION
    student.embeddings.load_state_dict(teacher.embeddings.state_dict())
    for i, j in enumerate(layer_map):
        student.encoder.layer[i].load_state_dict(teacher.encoder.layer[j].state_dict())
    return student
    # END SOLUTION

