"""Graded tests of Task 12.4: DeBERTa's relative distance δ(i, j) and disentangled attention scores.

Every test compares with an explicit loop over (i, j) written straight from He et al. §3.1, on a
hand-sized example with more tokens than k, so that the clipping of δ matters.
"""
import math

import numpy as np
import pytest

from autograd import Tensor

MOD = "task12_beyond.deberta"


def _delta(i, j, k):
    """Eq. 3: 0 if i − j ≤ −k; 2k − 1 if i − j ≥ k; else i − j + k."""
    if i - j <= -k:
        return 0
    if i - j >= k:
        return 2 * k - 1
    return i - j + k


def _explicit(qc, kc, qr, kr, k):
    """The three terms and the scaled score for one head, by loops: (Tq, Tk) arrays."""
    Tq, d = qc.shape
    Tk = kc.shape[0]
    c2c, c2p, p2c = (np.zeros((Tq, Tk)) for _ in range(3))
    for i in range(Tq):
        for j in range(Tk):
            c2c[i, j] = qc[i] @ kc[j]
            c2p[i, j] = qc[i] @ kr[_delta(i, j, k)]
            p2c[i, j] = kc[j] @ qr[_delta(j, i, k)]
    return (c2c + c2p + p2c) / math.sqrt(3 * d), c2c, c2p, p2c


def _inputs(seed, T=7, d=4, k=2, lead=()):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=lead + (T, d)), rng.normal(size=lead + (T, d)),
            rng.normal(size=lead + (2 * k, d)), rng.normal(size=lead + (2 * k, d)))


@pytest.mark.task12_4
@pytest.mark.points(1)
def test_relative_distance_eq3(impl):
    relative_distance = impl(MOD).relative_distance
    for Tq, Tk, k in ((5, 5, 2), (3, 7, 1), (8, 4, 3), (6, 6, 8)):
        out = np.asarray(relative_distance(Tq, Tk, k))
        expected = np.array([[_delta(i, j, k) for j in range(Tk)] for i in range(Tq)])
        assert out.shape == (Tq, Tk), f"relative_distance({Tq}, {Tk}, {k}) should be ({Tq}, {Tk}), got {out.shape}"
        assert np.array_equal(out, expected), \
            f"relative_distance({Tq}, {Tk}, {k}) should be clip(i − j, −k, k − 1) + k:\n{expected}\ngot\n{out}"
        assert out.min() >= 0 and out.max() <= 2 * k - 1, \
            (f"relative_distance(k={k}) must lie in 0..2k − 1 = {2 * k - 1}, got {out.min()}..{out.max()}: "
             "clip i − j to [−k, k − 1], then add k")


@pytest.mark.task12_4
@pytest.mark.points(3)
def test_score_is_the_sum_of_three_terms_hand_sized(impl):
    """The acceptance example: T = 3, d = 2, k = 1 — small enough to check by hand."""
    deberta_scores = impl(MOD).deberta_scores
    qc = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    kc = np.array([[2.0, 1.0], [0.0, -1.0], [1.0, 3.0]])
    qr = np.array([[1.0, 2.0], [-1.0, 0.5]])     # 2k = 2 rows: δ = 0 (j ahead of i) and δ = 1 (i ≥ j)
    kr = np.array([[0.5, -2.0], [3.0, 1.0]])
    scores, c2c, c2p, p2c = deberta_scores(Tensor(qc), Tensor(kc), Tensor(qr), Tensor(kr), 1)
    ref = _explicit(qc, kc, qr, kr, 1)
    for name, got, want in zip(("scores", "c2c", "c2p", "p2c"), (scores, c2c, c2p, p2c), ref):
        assert got.shape == (3, 3), f"{name} should be (T, T) = (3, 3), got {got.shape}"
        assert np.allclose(got.data, want), f"{name} differs from the explicit loop"
    assert np.allclose(scores.data, (c2c.data + c2p.data + p2c.data) / math.sqrt(6)), \
        "scores should be (c2c + c2p + p2c) / √(3d) = / √6 for d = 2"
    # by hand: A[0, 2] = qc0·kc2 + qc0·kr[δ(0,2)=0] + kc2·qr[δ(2,0)=1] = 1 + 0.5 + 0.5
    assert np.isclose(scores.data[0, 2], 2.0 / math.sqrt(6)), \
        f"by hand A[0, 2] = 1 + 0.5 + 0.5 = 2, so scores[0, 2] = 2/√6 ≈ {2 / math.sqrt(6):.4f}, got {scores.data[0, 2]:.4f}"


@pytest.mark.task12_4
@pytest.mark.points(2)
def test_terms_match_explicit_loops_with_clipping(impl):
    deberta_scores = impl(MOD).deberta_scores
    for seed, T, d, k in ((0, 7, 4, 2), (1, 6, 3, 1), (2, 5, 4, 3)):
        qc, kc, qr, kr = _inputs(seed, T, d, k)
        got = deberta_scores(Tensor(qc), Tensor(kc), Tensor(qr), Tensor(kr), k)
        for name, g, want in zip(("scores", "c2c", "c2p", "p2c"), got, _explicit(qc, kc, qr, kr, k)):
            assert np.allclose(g.data, want), \
                f"{name} (T={T}, d={d}, k={k}) differs from the explicit loop over (i, j) with δ clipped to [0, 2k − 1]"


@pytest.mark.task12_4
@pytest.mark.points(2)
def test_scale_is_one_over_sqrt_3d(impl):
    deberta_scores = impl(MOD).deberta_scores
    qc, kc, qr, kr = _inputs(3, T=5, d=8, k=2)
    scores, c2c, c2p, p2c = deberta_scores(Tensor(qc), Tensor(kc), Tensor(qr), Tensor(kr), 2)
    total = c2c.data + c2p.data + p2c.data
    assert not np.allclose(scores.data, total / math.sqrt(8)), "1/√d is BERT's scale: three terms need 1/√(3d)"
    assert np.allclose(scores.data, total / math.sqrt(24)), \
        "scores should be (c2c + c2p + p2c) / √(3d) = / √24 for d = 8"


@pytest.mark.task12_4
@pytest.mark.points(2)
def test_position_to_content_uses_delta_j_i(impl):
    deberta_scores = impl(MOD).deberta_scores
    qc, kc, qr, kr = _inputs(4, T=6, d=3, k=2)
    _, _, c2p, p2c = deberta_scores(Tensor(qc), Tensor(kc), Tensor(qr), Tensor(kr), 2)
    wrong = np.array([[kc[j] @ qr[_delta(i, j, 2)] for j in range(6)] for i in range(6)])
    assert not np.allclose(p2c.data, wrong), "p2c[i, j] uses δ(j, i), not δ(i, j)"
    right = np.array([[kc[j] @ qr[_delta(j, i, 2)] for j in range(6)] for i in range(6)])
    assert np.allclose(p2c.data, right), "p2c[i, j] should be K_c[j] · Q_r[δ(j, i)]"
    # c2p must use the relative *keys* and p2c the relative *queries*
    assert np.allclose(c2p.data, [[qc[i] @ kr[_delta(i, j, 2)] for j in range(6)] for i in range(6)]), \
        "c2p[i, j] should be Q_c[i] · K_r[δ(i, j)]: c2p uses the relative keys, p2c the relative queries"


@pytest.mark.task12_4
@pytest.mark.points(2)
def test_distances_beyond_k_share_the_border_embedding(impl):
    deberta_scores = impl(MOD).deberta_scores
    T, d, k = 8, 3, 2
    qc, kc, qr, kr = _inputs(5, T, d, k)
    _, _, c2p, p2c = deberta_scores(Tensor(qc), Tensor(kc), Tensor(qr), Tensor(kr), k)
    for i in range(T):
        for j in range(T):
            row = 0 if i - j <= -k else (2 * k - 1 if i - j >= k else None)
            if row is not None:
                assert np.isclose(c2p.data[i, j], qc[i] @ kr[row]), f"c2p[{i}, {j}]: δ clipped to {row}"
    # changing only the border rows 0 and 2k − 1 changes exactly the pairs that use them:
    # i − j ≤ −k (row 0) and i − j ≥ k − 1 (row 2k − 1: the rows cover i − j = −k … k − 1)
    kr2 = kr.copy()
    kr2[[0, 2 * k - 1]] += 1.0
    _, _, c2p2, _ = deberta_scores(Tensor(qc), Tensor(kc), Tensor(qr), Tensor(kr2), k)
    rel = np.arange(T)[:, None] - np.arange(T)[None, :]
    far = (rel <= -k) | (rel >= k - 1)
    changed = ~np.isclose(c2p2.data, c2p.data)
    assert np.array_equal(changed, far), \
        ("changing the border rows 0 and 2k − 1 of K_r should change exactly the pairs with i − j ≤ −k or "
         "i − j ≥ k − 1: clip δ at the borders")


@pytest.mark.task12_4
@pytest.mark.points(2)
def test_batched_heads(impl):
    deberta_scores = impl(MOD).deberta_scores
    B, H, T, d, k = 2, 3, 5, 4, 2
    qc, kc, _, _ = _inputs(6, T, d, k, lead=(B, H))
    rng = np.random.default_rng(7)
    qr, kr = rng.normal(size=(H, 2 * k, d)), rng.normal(size=(H, 2 * k, d))   # one table per head
    scores = deberta_scores(Tensor(qc), Tensor(kc), Tensor(qr), Tensor(kr), k)[0]
    assert scores.shape == (B, H, T, T), \
        f"deberta_scores on (B, H, T, d) = {(B, H, T, d)} should give (B, H, T, T), got {scores.shape}"
    for b in range(B):
        for h in range(H):
            assert np.allclose(scores.data[b, h], _explicit(qc[b, h], kc[b, h], qr[h], kr[h], k)[0]), \
                (f"batch {b}, head {h}: scores differ from the explicit loop: each head uses its own relative "
                 "tables qr[h], kr[h]")


@pytest.mark.task12_4
@pytest.mark.points(2)
def test_gradients_against_finite_differences(impl):
    deberta_scores = impl(MOD).deberta_scores
    T, d, k = 5, 3, 2
    arrays = list(_inputs(8, T, d, k))
    G = np.random.default_rng(9).normal(size=(T, T))               # a random upstream gradient
    tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    (deberta_scores(*tensors, k)[0] * Tensor(G)).sum().backward()

    def f(xs):
        return float((_explicit(*xs, k)[0] * G).sum())
    eps = 1e-6
    for n, a in enumerate(arrays):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[n][idx] += eps
            minus[n][idx] -= eps
            num[idx] = (f(plus) - f(minus)) / (2 * eps)
        assert tensors[n].grad is not None, f"no gradient reached input {n}"
        assert np.allclose(tensors[n].grad, num, atol=1e-5), f"gradient of input {n}"
