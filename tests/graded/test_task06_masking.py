"""Graded tests of Task 6.1 (masking half): ``roberta_mask``, ``dynamic_mask_rng``, ``MaskedDataset``.

Rates are measured over >= 10,000 draws with a fixed seed, within 4 standard errors.
"""
import functools

import numpy as np
import pytest

MOD = "task06_roberta.masking"

BOS, PAD, EOS, UNK, MASK = 0, 1, 2, 3, 4   # fairseq's dictionary: <s> <pad> </s> <unk>, then <mask>
NSPECIAL = 5
V = 50


def _assert_rate(hits, n, p, what, k=4.0):
    rate = hits / n
    se = np.sqrt(p * (1 - p) / n)
    assert abs(rate - p) <= k * se, f"{what}: rate {rate:.4f} over {n} draws, expected {p:.4f} ± {k * se:.4f}"


def _chi2(counts, probs):
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def _masker(m, **kw):
    return functools.partial(m.roberta_mask, mask_id=MASK, vocab_size=V, nspecial=NSPECIAL, pad_id=PAD, **kw)


@pytest.mark.task6_1
@pytest.mark.points(2)
@pytest.mark.parametrize("sz", [13, 30])
def test_num_mask_is_stochastically_rounded(impl, sz):
    """num_mask = int(0.15·sz + U): always floor or ceil of 0.15·sz, and exactly 0.15·sz on average
    (13 -> 1.95, where int gives 1 and round 2; 30 -> 4.5, where round and int both give 4)."""
    mask = _masker(impl(MOD))
    rng = np.random.default_rng(10)
    ids = rng.integers(NSPECIAL, V, size=sz)
    counts = np.array([(mask(ids, rng=rng)[1] != PAD).sum() for _ in range(10_000)])
    x = 0.15 * sz
    lo, hi = int(np.floor(x)), int(np.ceil(x))
    assert set(np.unique(counts).tolist()) <= {lo, hi}, f"counts {np.unique(counts)} for 0.15·{sz} = {x}"
    _assert_rate(int((counts == hi).sum()), counts.size, x - lo, f"share of ceil(0.15·{sz})")


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_every_position_can_be_masked_including_bos(impl):
    """fairseq masks over ALL positions (no special-token exclusion): <s> at position 0 too."""
    mask = _masker(impl(MOD))
    rng = np.random.default_rng(11)
    ids = np.concatenate([[BOS], rng.integers(NSPECIAL, V, size=19)])   # sz = 20, 0.15·20 = 3
    masked = np.array([mask(ids, rng=rng)[1] != PAD for _ in range(10_000)])  # (10000, 20)
    assert np.all(masked.sum(axis=1) == 3), "with 0.15·20 = 3 exactly, 3 distinct positions each time"
    for t in range(ids.size):
        _assert_rate(int(masked[:, t].sum()), masked.shape[0], 0.15, f"masking rate of position {t}", k=4.5)


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_80_10_10_split(impl):
    mask = _masker(impl(MOD), prob=1.0)
    ORIG = 20
    rng = np.random.default_rng(12)
    ids = np.full(200, ORIG)
    inputs = np.concatenate([mask(ids, rng=rng)[0] for _ in range(100)])   # 20,000 masked positions
    n, k = inputs.size, V - NSPECIAL
    _assert_rate(int((inputs == MASK).sum()), n, 0.8, "<mask> share")
    _assert_rate(int((inputs == ORIG).sum()), n, 0.1 + 0.1 / k, "unchanged share")
    _assert_rate(int(((inputs != MASK) & (inputs != ORIG)).sum()), n, 0.1 * (1 - 1 / k), "random share")


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_random_tokens_come_from_the_non_special_vocabulary(impl):
    mask = _masker(impl(MOD), prob=1.0, leave_unmasked_prob=0.0, random_token_prob=0.5)
    ORIG = 20
    rng = np.random.default_rng(13)
    ids = np.full(500, ORIG)
    inputs = np.concatenate([mask(ids, rng=rng)[0] for _ in range(40)])    # ~10,000 random draws
    rand = inputs[inputs != MASK]
    assert rand.min() >= NSPECIAL, f"a random token {rand.min()} is special (< nspecial={NSPECIAL})"
    assert rand.max() < V, f"a random token {rand.max()} is outside the vocabulary (must be < vocab_size={V})"
    counts = np.bincount(rand, minlength=V)[NSPECIAL:].astype(float)       # uniform over [5, 50)
    df = counts.size - 1
    stat = _chi2(counts, np.full(counts.size, 1 / counts.size))
    assert stat < df + 6 * np.sqrt(2 * df), f"random tokens not uniform over [{NSPECIAL}, {V}): chi2 {stat:.1f}"
    _assert_rate(rand.size, inputs.size, 0.5, "random share with random_token_prob=0.5")


@pytest.mark.task6_1
@pytest.mark.points(1)
def test_targets_are_original_where_masked_and_pad_elsewhere(impl):
    m = impl(MOD)
    rng = np.random.default_rng(14)
    ids = rng.integers(NSPECIAL, V, size=400)
    keep = ids.copy()
    inputs, targets = m.roberta_mask(ids, mask_id=MASK, vocab_size=V, nspecial=NSPECIAL, rng=rng,
                                     prob=0.3, pad_id=PAD)
    assert np.array_equal(ids, keep), "roberta_mask wrote into the caller's array"
    masked = targets != PAD
    assert masked.sum() in (120, 121), \
        ("prob=0.3 of 400 tokens must choose exactly int(0.3·400 + u) = 120 or 121 positions (fairseq), "
         f"got {masked.sum()}")
    assert np.all(targets[masked] == ids[masked]), "at a chosen position the target must be the original token"
    assert set(np.unique(targets[~masked]).tolist()) == {PAD}, \
        "at a position that is not chosen the target must be pad_id"
    assert np.all(inputs[~masked] == ids[~masked]), "an unmasked position changed"
    assert inputs.shape == targets.shape == ids.shape, \
        f"inputs and targets must have the shape of ids {ids.shape}, got {inputs.shape} and {targets.shape}"


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_dynamic_mask_rng_is_reproducible_and_distinct(impl):
    m = impl(MOD)
    g = m.dynamic_mask_rng(7, 3, 5)
    assert isinstance(g, np.random.Generator), \
        f"dynamic_mask_rng(seed, epoch, index) must return a numpy Generator, got {type(g).__name__}"
    draw = lambda s, e, i: m.dynamic_mask_rng(s, e, i).random(8)
    assert np.array_equal(draw(7, 3, 5), draw(7, 3, 5)), "same (seed, epoch, index), different draws"
    keys = [(7, 3, 5), (7, 4, 5), (7, 3, 6), (8, 3, 5), (7, 5, 3), (0, 1, 2), (0, 2, 1), (1, 0, 2), (0, 0, 3)]
    draws = {k: draw(*k).tobytes() for k in keys}
    assert len(set(draws.values())) == len(keys), \
        "two different (seed, epoch, index) give the same Generator (is one of them ignored, or summed?)"


@pytest.mark.task6_1
@pytest.mark.points(3)
def test_dynamic_dataset_masks_anew_each_epoch_and_reproducibly(impl):
    m = impl(MOD)
    seqs = [np.arange(NSPECIAL, NSPECIAL + 40)] * 3                    # identical sequences
    ds = m.MaskedDataset(seqs, _masker(m), seed=3, dynamic=True, static_copies=10)
    masks = [ds.get(0, e)[1] != PAD for e in range(30)]
    assert len({x.tobytes() for x in masks}) >= 28, "dynamic masks repeat across epochs"
    for e in range(20):
        assert not np.array_equal(masks[e], masks[e + 10]), f"epoch {e + 10} reuses epoch {e}'s mask"
    for e in (0, 7):
        a, b = ds.get(0, e), ds.get(0, e)
        assert all(np.array_equal(x, y) for x, y in zip(a, b)), "the same (seed, epoch, index) changed"
    twin = m.MaskedDataset(seqs, _masker(m), seed=3, dynamic=True)
    assert all(np.array_equal(x, y) for x, y in zip(ds.get(2, 4), twin.get(2, 4))), \
        "a second dataset with the same seed masks differently"
    other = m.MaskedDataset(seqs, _masker(m), seed=4, dynamic=True)
    assert not np.array_equal(ds.get(2, 4)[1], other.get(2, 4)[1]), "the seed is ignored"
    same_epoch = [ds.get(i, 1)[1] for i in range(3)]
    assert len({x.tobytes() for x in same_epoch}) == 3, "identical sequences got one mask: index ignored"


@pytest.mark.task6_1
@pytest.mark.points(2)
@pytest.mark.parametrize("copies", [10, 3])
def test_static_dataset_repeats_its_premade_masks(impl, copies):
    m = impl(MOD)
    seqs = [np.arange(NSPECIAL, NSPECIAL + 40)] * 2
    ds = m.MaskedDataset(seqs, _masker(m), seed=3, dynamic=False, static_copies=copies)
    for i in range(2):
        first = [ds.get(i, e) for e in range(copies)]
        assert len({x[1].tobytes() for x in first}) >= copies - 1, "the static copies are (nearly) all alike"
        for e in range(copies, 3 * copies):
            got = ds.get(i, e)
            want = first[e % copies]
            assert all(np.array_equal(x, y) for x, y in zip(got, want)), \
                f"epoch {e} should reuse static copy {e % copies}"
    assert not np.array_equal(ds.get(0, 0)[1], ds.get(1, 0)[1]), "both sequences got one mask"
    got = ds.get(0, 0)
    got[0][:] = -1                                                    # a caller scribbles on it
    assert np.all(ds.get(0, copies)[0] >= 0), "writing into a returned array changed the stored copy"
