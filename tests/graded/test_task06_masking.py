"""Graded tests of Task 6.1 (masking half): ``apply_mask_plan``, ``dynamic_mask_rng``, ``MaskedDataset``.

``mask_plan`` has its own file (test_task06_mask_plan.py); here plans are made by the tests, so that
``apply_mask_plan`` is checked on its own, as the library's ``roberta_mask`` calls it.

Rates are measured over >= 10,000 draws with a fixed seed, within 4 standard errors.
"""
import numpy as np
import pytest

MOD = "task06_roberta.masking"

BOS, PAD, EOS, UNK, MASK = 0, 1, 2, 3, 4   # fairseq's dictionary: <s> <pad> </s> <unk>, then <mask>
NSPECIAL = 5
V = 50


def _chi2(counts, probs):
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def _plan(T, rng, p_mask=0.5, p_random=0.2, p_keep=0.2):
    """A plan of the kind mask_plan makes: each position masked w.p. p_mask; a masked one is random
    w.p. p_random, left unchanged w.p. p_keep, else <mask>. Returns (masked, to_mask, to_random)."""
    masked = rng.random(T) < p_mask
    u = rng.random(T)
    to_random = masked & (u < p_random)
    to_mask = masked & (u >= p_random + p_keep)
    return masked, to_mask, to_random


def _apply(m, ids, plan, rng):
    return m.apply_mask_plan(ids, plan, mask_id=MASK, vocab_size=V, nspecial=NSPECIAL, rng=rng, pad_id=PAD)


def _masker(ids, *, rng):
    """Stands in for the library's roberta_mask in the MaskedDataset tests: a fresh random mask from
    ``rng`` on every call, so that the dataset's choice of Generator is all that is tested."""
    masked = rng.random(len(ids)) < 0.15
    return np.where(masked, MASK, ids), np.where(masked, ids, PAD)


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_apply_targets_at_every_masked_position(impl):
    m = impl(MOD)
    rng = np.random.default_rng(14)
    ids = rng.integers(NSPECIAL, V, size=400)
    keep = ids.copy()
    masked, to_mask, to_random = plan = _plan(ids.size, rng)
    inputs, targets = _apply(m, ids, plan, rng)
    assert np.array_equal(ids, keep), "apply_mask_plan wrote into the caller's array: work on a copy"
    assert inputs.shape == targets.shape == ids.shape, \
        f"inputs and targets must have the shape of ids {ids.shape}, got {inputs.shape} and {targets.shape}"
    kept = masked & ~to_mask & ~to_random
    for where, what in ((to_mask, "<mask>"), (to_random, "random"), (kept, "left unchanged")):
        assert np.all(targets[where] == ids[where]), \
            (f"at a masked position that became {what} the target must be the original token: the model "
             "predicts every masked position (targets come from `masked`, not from `to_mask`)")
    assert np.all(targets[~masked] == PAD), "at a position that is not masked the target must be pad_id"


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_apply_mask_id_exactly_at_to_mask_and_the_rest_unchanged(impl):
    m = impl(MOD)
    rng = np.random.default_rng(15)
    for _ in range(20):
        ids = rng.integers(NSPECIAL, V, size=60)
        masked, to_mask, to_random = plan = _plan(ids.size, rng)
        inputs, _ = _apply(m, ids, plan, rng)
        assert np.all(inputs[to_mask] == MASK), "a position of to_mask must become mask_id"
        assert np.all(inputs[~to_mask & ~to_random] == ids[~to_mask & ~to_random]), \
            ("a position outside to_mask and to_random changed: unmasked positions, and masked ones left "
             "unchanged (masked & ~to_mask & ~to_random), keep their token")
        assert not np.any(inputs[to_random] == MASK), \
            (f"a to_random position became mask_id ({MASK}): random ids come from [nspecial, vocab_size) = "
             f"[{NSPECIAL}, {V}), which holds no special token")


@pytest.mark.task6_1
@pytest.mark.points(2)
def test_apply_random_tokens_come_from_the_non_special_vocabulary(impl):
    m = impl(MOD)
    rng = np.random.default_rng(13)
    ORIG = 20
    ids = np.full(500, ORIG)
    everything = np.ones(ids.size, dtype=bool)
    plan = (everything, ~everything, everything)                       # every position random
    rand = np.concatenate([_apply(m, ids, plan, rng)[0] for _ in range(20)])   # 10,000 random draws
    assert rand.min() >= NSPECIAL, f"a random token {rand.min()} is special (< nspecial={NSPECIAL})"
    assert rand.max() < V, f"a random token {rand.max()} is outside the vocabulary (must be < vocab_size={V})"
    counts = np.bincount(rand, minlength=V)[NSPECIAL:].astype(float)       # uniform over [5, 50)
    df = counts.size - 1
    stat = _chi2(counts, np.full(counts.size, 1 / counts.size))
    assert stat < df + 6 * np.sqrt(2 * df), \
        (f"random tokens not uniform over [{NSPECIAL}, {V}): chi2 {stat:.1f} with {df} degrees of freedom "
         "(is the upper end vocab_size - 1, or a token left out?)")


@pytest.mark.task6_1
@pytest.mark.points(1)
def test_apply_draws_the_random_tokens_in_one_call(impl):
    """One ``rng.integers(nspecial, vocab_size, size=to_random.sum())`` and nothing else, so that the
    kit's numbers are the same on your code as on the reference."""
    m = impl(MOD)
    ids = np.arange(NSPECIAL, NSPECIAL + 30)
    plan = _plan(ids.size, np.random.default_rng(16))
    inputs, _ = _apply(m, ids, plan, np.random.default_rng(17))
    twin = np.random.default_rng(17)
    want = twin.integers(NSPECIAL, V, size=int(plan[2].sum()))
    assert np.array_equal(inputs[plan[2]], want), \
        (f"the random tokens {inputs[plan[2]].tolist()} are not rng.integers({NSPECIAL}, {V}, "
         f"size={int(plan[2].sum())}) = {want.tolist()}: draw them in ONE call, for the to_random positions only")


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
    ds = m.MaskedDataset(seqs, _masker, seed=3, dynamic=True, static_copies=10)
    masks = [ds.get(0, e)[1] != PAD for e in range(30)]
    assert len({x.tobytes() for x in masks}) >= 28, "dynamic masks repeat across epochs"
    for e in range(20):
        assert not np.array_equal(masks[e], masks[e + 10]), f"epoch {e + 10} reuses epoch {e}'s mask"
    for e in (0, 7):
        a, b = ds.get(0, e), ds.get(0, e)
        assert all(np.array_equal(x, y) for x, y in zip(a, b)), "the same (seed, epoch, index) changed"
    twin = m.MaskedDataset(seqs, _masker, seed=3, dynamic=True)
    assert all(np.array_equal(x, y) for x, y in zip(ds.get(2, 4), twin.get(2, 4))), \
        "a second dataset with the same seed masks differently"
    other = m.MaskedDataset(seqs, _masker, seed=4, dynamic=True)
    assert not np.array_equal(ds.get(2, 4)[1], other.get(2, 4)[1]), "the seed is ignored"
    same_epoch = [ds.get(i, 1)[1] for i in range(3)]
    assert len({x.tobytes() for x in same_epoch}) == 3, "identical sequences got one mask: index ignored"


@pytest.mark.task6_1
@pytest.mark.points(2)
@pytest.mark.parametrize("copies", [10, 3])
def test_static_dataset_repeats_its_premade_masks(impl, copies):
    m = impl(MOD)
    seqs = [np.arange(NSPECIAL, NSPECIAL + 40)] * 2
    ds = m.MaskedDataset(seqs, _masker, seed=3, dynamic=False, static_copies=copies)
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
