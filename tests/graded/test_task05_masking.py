"""Graded tests of Task 5.2: BERT's masked-LM corruption ``mask_tokens`` (HF collator semantics).

Rates are measured over >= 10,000 positions with a fixed seed and must lie within 4 standard errors
of the expected value; the expected values below include the small corrections for a random id that
happens to equal ``[MASK]`` or the original token.
"""
import numpy as np
import pytest

MOD = "task05_bert.masking"

PAD, CLS, SEP, MASK = 0, 1, 2, 3
SPECIAL = (PAD, CLS, SEP, MASK)


def _batch(rng, B=400, T=40, V=1000):
    """(B, T) ids: [CLS] body [SEP] padding, with random body lengths; the body is non-special."""
    ids = np.full((B, T), PAD, dtype=np.int64)
    for b in range(B):
        n = rng.integers(T // 2, T - 1)                      # body length
        ids[b, 0] = CLS
        ids[b, 1:n + 1] = rng.integers(len(SPECIAL), V, size=n)
        ids[b, n + 1] = SEP
    return ids


def _assert_rate(hits, n, p, what, k=4.0):
    rate = hits / n
    se = np.sqrt(p * (1 - p) / n)
    assert abs(rate - p) <= k * se, f"{what}: rate {rate:.4f} over {n} draws, expected {p:.4f} ± {k * se:.4f}"


def _chi2(counts, probs):
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.task5_2
@pytest.mark.points(1)
def test_shapes_dtypes_and_input_untouched(impl):
    mask_tokens = impl(MOD).mask_tokens
    rng = np.random.default_rng(0)
    ids2 = _batch(rng, B=8, T=16, V=100)
    keep = ids2.copy()
    inputs, labels = mask_tokens(ids2, mask_id=MASK, vocab_size=100, special_ids=SPECIAL, rng=rng, prob=0.5)
    assert inputs.shape == labels.shape == ids2.shape, \
        f"mask_tokens on (8, 16) ids should return inputs and labels of (8, 16), got {inputs.shape} and {labels.shape}"
    assert np.issubdtype(inputs.dtype, np.integer) and np.issubdtype(labels.dtype, np.integer), \
        f"inputs and labels must be integer ids, got {inputs.dtype} and {labels.dtype}"
    assert np.array_equal(ids2, keep), "mask_tokens wrote into the caller's array"
    assert inputs is not ids2 and not np.shares_memory(inputs, ids2), \
        "mask_tokens returned (a view of) the caller's array as inputs: copy ids before writing [MASK] into it"
    ids1 = ids2[0].copy()
    inputs1, labels1 = mask_tokens(ids1, mask_id=MASK, vocab_size=100, special_ids=SPECIAL, rng=rng, prob=0.5)
    assert inputs1.shape == labels1.shape == ids1.shape == (16,), \
        f"mask_tokens on one (16,) row should return (16,) inputs and labels, got {inputs1.shape} and {labels1.shape}"
    assert np.array_equal(ids1, keep[0]), "mask_tokens wrote into the caller's (16,) array"


@pytest.mark.task5_2
@pytest.mark.points(2)
def test_special_tokens_and_padding_never_chosen(impl):
    mask_tokens = impl(MOD).mask_tokens
    rng = np.random.default_rng(1)
    ids = _batch(rng, B=300, T=40)
    inputs, labels = mask_tokens(ids, mask_id=MASK, vocab_size=1000, special_ids=SPECIAL, rng=rng, prob=0.9)
    special = np.isin(ids, SPECIAL)
    assert special.sum() > 1000, "test set-up: the batch should hold many special ids"
    assert np.all(labels[special] == -100), "a special token (or padding) was chosen for prediction"
    assert np.array_equal(inputs[special], ids[special]), "a special token (or padding) was changed"
    # and the non-special positions really were chosen at rate 0.9
    _assert_rate(int((labels[~special] != -100).sum()), int((~special).sum()), 0.9, "selection")


@pytest.mark.task5_2
@pytest.mark.points(2)
@pytest.mark.parametrize("prob", [0.15, 0.4])
def test_selection_rate_is_prob_at_every_position(impl, prob):
    mask_tokens = impl(MOD).mask_tokens
    rng = np.random.default_rng(2)
    ids = rng.integers(len(SPECIAL), 1000, size=(1000, 20))          # 20,000 non-special positions
    _, labels = mask_tokens(ids, mask_id=MASK, vocab_size=1000, special_ids=SPECIAL, rng=rng, prob=prob)
    chosen = labels != -100
    _assert_rate(int(chosen.sum()), chosen.size, prob, f"selection at prob={prob}")
    for t in range(ids.shape[1]):  # every position alike: no "first k positions"
        _assert_rate(int(chosen[:, t].sum()), ids.shape[0], prob, f"selection at position {t}", k=4.5)


@pytest.mark.task5_2
@pytest.mark.points(1)
def test_count_is_binomial_and_new_on_every_call(impl):
    """The collator decides each position by its own coin: the count varies like Binomial(T, p),
    and a second call with the same Generator chooses other positions."""
    mask_tokens = impl(MOD).mask_tokens
    rng = np.random.default_rng(3)
    ids = np.arange(4, 44)                                            # T = 40, no specials
    chosen = np.array([mask_tokens(ids, mask_id=MASK, vocab_size=100, special_ids=SPECIAL, rng=rng)[1] != -100
                       for _ in range(3000)])                          # (3000, 40)
    counts = chosen.sum(axis=1)
    assert abs(counts.mean() - 40 * 0.15) < 4 * np.sqrt(40 * 0.15 * 0.85 / 3000), \
        (f"with prob=0.15 on 40 tokens the mean number chosen should be 6, got {counts.mean():.2f}: decide "
         "each position with its own Bernoulli(0.15) coin")
    ratio = counts.var() / (40 * 0.15 * 0.85)
    assert 0.8 < ratio < 1.2, f"count variance {counts.var():.2f} is not binomial ({40 * .15 * .85:.2f})"
    assert len({row.tobytes() for row in chosen}) > 2900, "the same positions are chosen call after call"


@pytest.mark.task5_2
@pytest.mark.points(3)
def test_80_10_10_split(impl):
    mask_tokens = impl(MOD).mask_tokens
    V = 1000
    rng = np.random.default_rng(4)
    ids = rng.integers(len(SPECIAL), V, size=(500, 50))               # 25,000 non-special positions
    inputs, labels = mask_tokens(ids, mask_id=MASK, vocab_size=V, special_ids=SPECIAL, rng=rng, prob=1.0)
    assert np.all(labels == ids), "with prob=1 every non-special position is predicted"
    n = ids.size
    # a random id equals [MASK] with prob 1/V and the original with prob 1/V
    p_mask = 0.8 + 0.1 / V
    p_same = 0.1 + 0.1 / V
    p_other = 0.1 * (1 - 2 / V)
    _assert_rate(int((inputs == MASK).sum()), n, p_mask, "[MASK] share")
    _assert_rate(int((inputs == ids).sum()), n, p_same, "unchanged share")
    _assert_rate(int(((inputs != MASK) & (inputs != ids)).sum()), n, p_other, "random-token share")


@pytest.mark.task5_2
@pytest.mark.points(2)
def test_random_ids_are_uniform_over_the_whole_vocabulary(impl):
    """HF (and BERT) draw the random token from all of [0, V), special ids included."""
    mask_tokens = impl(MOD).mask_tokens
    V, ORIG = 20, 10
    rng = np.random.default_rng(5)
    ids = np.full((1000, 100), ORIG)                                   # 100,000 chosen positions
    inputs, _ = mask_tokens(ids, mask_id=MASK, vocab_size=V, special_ids=SPECIAL, rng=rng, prob=1.0)
    rand = inputs[(inputs != MASK) & (inputs != ORIG)]                 # the visible random draws
    assert rand.size > 5000, \
        (f"with prob=1.0 about 10% of 100,000 tokens (≈ 10,000) should be random ids, only {rand.size} were: "
         "the 10% random share is 0.5 of the 20% left after [MASK]")
    assert rand.min() >= 0 and rand.max() < V, \
        f"a random id {rand.min()}..{rand.max()} is outside the vocabulary [0, {V})"
    others = [v for v in range(V) if v not in (MASK, ORIG)]           # 18 equally likely ids
    counts = np.array([(rand == v).sum() for v in others], dtype=float)
    assert counts.min() > 0, f"some ids are never drawn: {[v for v, c in zip(others, counts) if c == 0]}"
    df = len(others) - 1
    stat = _chi2(counts, np.full(len(others), 1 / len(others)))
    assert stat < df + 6 * np.sqrt(2 * df), f"random ids are not uniform over [0, {V}): chi2 = {stat:.1f}"


@pytest.mark.task5_2
@pytest.mark.points(2)
def test_labels_are_original_where_predicted_and_minus_100_elsewhere(impl):
    mask_tokens = impl(MOD).mask_tokens
    rng = np.random.default_rng(6)
    ids = _batch(rng, B=300, T=40)
    inputs, labels = mask_tokens(ids, mask_id=MASK, vocab_size=1000, special_ids=SPECIAL, rng=rng, prob=0.3)
    predicted = labels != -100
    assert np.all(labels[predicted] == ids[predicted]), "a label is not the original id"
    assert set(np.unique(labels[~predicted]).tolist()) == {-100}, "where nothing is predicted the label must be -100"
    assert not np.any((labels == 0) & (ids != 0)), "labels use 0 where nothing is predicted; use -100"
    assert np.all(inputs[~predicted] == ids[~predicted]), "a position that is not predicted was changed"
    nonspecial = ~np.isin(ids, SPECIAL)
    _assert_rate(int(predicted.sum()), int(nonspecial.sum()), 0.3, "selection")


@pytest.mark.task5_2
@pytest.mark.points(1)
def test_randomness_comes_from_rng_only(impl):
    mask_tokens = impl(MOD).mask_tokens
    ids = _batch(np.random.default_rng(7), B=50, T=40)
    kw = dict(mask_id=MASK, vocab_size=1000, special_ids=SPECIAL, prob=0.3)
    a = mask_tokens(ids, rng=np.random.default_rng(42), **kw)
    b = mask_tokens(ids, rng=np.random.default_rng(42), **kw)
    c = mask_tokens(ids, rng=np.random.default_rng(43), **kw)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), "same Generator state, other result"
    assert not np.array_equal(a[1], c[1]), "another seed gave the same selection"
