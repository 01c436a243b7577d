"""Graded tests of Task 7.1: ``electra_mask``, ``sample_from_logits``, ``replaced_token_labels``.

Rates and distributions are measured over >= 10,000 draws with a fixed seed: rates within 4 standard
errors, distributions with a chi-square statistic below df + 6·sqrt(2·df) (a p-value far below 1e-4).
"""
import numpy as np
import pytest

MOD = "task07_electra.sampling"

PAD, CLS, SEP, MASK = 0, 1, 2, 3
SPECIAL = (CLS, SEP)


def _assert_rate(hits, n, p, what, k=4.0):
    rate = hits / n
    se = np.sqrt(p * (1 - p) / n)
    assert abs(rate - p) <= k * se, f"{what}: rate {rate:.4f} over {n} draws, expected {p:.4f} ± {k * se:.4f}"


def _chi2_ok(counts, probs, what):
    counts = np.asarray(counts, dtype=float)
    expected = probs * counts.sum()
    stat = float(((counts - expected) ** 2 / expected).sum())
    df = len(probs) - 1
    assert stat < df + 6 * np.sqrt(2 * df), (
        f"{what}: chi2 = {stat:.1f} (df {df}); frequencies {np.round(counts / counts.sum(), 3)}, "
        f"expected {np.round(probs, 3)}")


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def _rows(B, body, pad, rng, V=100):
    """(B, 1 + body + 1 + pad) ids: [CLS] body [SEP] padding; the body never holds a special id."""
    ids = np.full((B, body + 2 + pad), PAD, dtype=np.int64)
    ids[:, 0] = CLS
    ids[:, 1:body + 1] = rng.integers(4, V, size=(B, body))
    ids[:, body + 1] = SEP
    return ids


# ---------------------------------------------------------------- electra_mask

@pytest.mark.task7_1
@pytest.mark.points(2)
def test_specials_padding_and_mask_tokens_never_chosen(impl):
    electra_mask = impl(MOD).electra_mask
    rng = np.random.default_rng(20)
    ids = _rows(2000, 12, 6, rng)
    ids[:, 3] = MASK                                                  # already [MASK]: not a candidate
    keep = ids.copy()
    inputs, masked, labels = electra_mask(ids, mask_id=MASK, special_ids=SPECIAL, pad_id=PAD, rng=rng,
                                          mask_prob=0.5)
    assert np.array_equal(ids, keep), "electra_mask wrote into the caller's array"
    assert masked.dtype == bool and masked.shape == ids.shape, \
        f"masked must be a bool array of the ids' shape {ids.shape}, got {masked.dtype} {masked.shape}"
    never = np.isin(ids, (PAD, CLS, SEP, MASK))
    assert not masked[never].any(), "a special, padding or [MASK] position was chosen"
    assert np.array_equal(inputs[never], ids[never]), "a special, padding or [MASK] token changed in the inputs"
    assert masked.sum() > 10_000, \
        f"mask_prob=0.5 on 2000 rows should mask well over 10,000 positions, masked {masked.sum()}"


@pytest.mark.task7_1
@pytest.mark.points(2)
def test_count_is_n_draws_with_replacement_from_non_pad_length(impl):
    """40 non-pad tokens (38 candidates) -> n = round(40·0.15) = 6 draws with replacement, so on
    average 38·(1 − (37/38)^6) ≈ 5.62 distinct positions; never more than 6. The 20 pads do not count."""
    electra_mask = impl(MOD).electra_mask
    rng = np.random.default_rng(21)
    ids = _rows(3000, 38, 20, rng)                                    # T = 60
    _, masked, _ = electra_mask(ids, mask_id=MASK, special_ids=SPECIAL, pad_id=PAD, rng=rng)
    counts = masked.sum(axis=1)
    assert counts.max() <= 6 and counts.min() >= 1, \
        ("40 non-pad tokens give n = round(40·0.15) = 6 draws with replacement: 1..6 masked per row, got "
         f"{counts.min()}..{counts.max()} (count pads out of the length)")
    C, n = 38, 6
    expected = C * (1 - (1 - 1 / C) ** n)
    se = counts.std() / np.sqrt(counts.size)
    assert abs(counts.mean() - expected) < 4 * se + 1e-9, \
        f"mean masked count {counts.mean():.3f}, expected {expected:.3f} (n draws with replacement)"
    rates = masked[:, 1:39].mean(axis=0)                              # every candidate alike
    p = expected / C
    assert np.all(np.abs(rates - p) < 4.5 * np.sqrt(p * (1 - p) / counts.size)), "positions not uniform"
    _, masked2, _ = electra_mask(ids[:500], mask_id=MASK, special_ids=SPECIAL, pad_id=PAD, rng=rng,
                                 max_predictions=2)
    assert masked2.sum(axis=1).max() <= 2, "max_predictions is not respected"
    assert masked2.sum(axis=1).min() >= 1, "with max_predictions=2 every row must still mask at least one position"


@pytest.mark.task7_1
@pytest.mark.points(3)
def test_85_percent_mask_15_percent_original_and_no_random_token(impl):
    electra_mask = impl(MOD).electra_mask
    rng = np.random.default_rng(22)
    ids = _rows(6000, 198, 0, rng)
    inputs, masked, labels = electra_mask(ids, mask_id=MASK, special_ids=SPECIAL, pad_id=PAD, rng=rng,
                                          max_predictions=4)
    chosen_in, chosen_orig = inputs[masked], ids[masked]
    assert chosen_in.size > 20_000, \
        f"6000 rows with max_predictions=4 should mask over 20,000 positions, masked {chosen_in.size}"
    assert np.all((chosen_in == MASK) | (chosen_in == chosen_orig)), \
        "a masked position holds a token that is neither [MASK] nor the original (ELECTRA has no random 10%)"
    _assert_rate(int((chosen_in == MASK).sum()), chosen_in.size, 0.85, "[MASK] share of the masked positions")
    assert np.array_equal(inputs[~masked], ids[~masked]), "an unmasked position changed"


@pytest.mark.task7_1
@pytest.mark.points(1)
def test_labels_and_one_dimensional_input(impl):
    electra_mask = impl(MOD).electra_mask
    rng = np.random.default_rng(23)
    ids = _rows(200, 30, 5, rng)
    _, masked, labels = electra_mask(ids, mask_id=MASK, special_ids=SPECIAL, pad_id=PAD, rng=rng)
    assert np.array_equal(labels[masked], ids[masked]), "labels must be the original id at every masked position"
    assert np.all(labels[~masked] == -100), "labels must be -100 where nothing is masked"
    one = ids[0].copy()
    inputs1, masked1, labels1 = electra_mask(one, mask_id=MASK, special_ids=SPECIAL, pad_id=PAD, rng=rng)
    assert inputs1.shape == masked1.shape == labels1.shape == one.shape, \
        (f"a 1-D (30,) input must give 1-D inputs, masked and labels, got {np.shape(inputs1)}, {np.shape(masked1)}, "
         f"{np.shape(labels1)}")
    assert 1 <= masked1.sum() <= 5 and np.array_equal(one, ids[0]), \
        ("a 1-D row of 30 tokens should mask 1..5 positions (round(30·0.15) draws) and leave the input untouched; "
         f"masked {masked1.sum()}")


# ---------------------------------------------------------------- sample_from_logits

LOGITS = np.array([2.0, 1.0, 0.0, -1.0, -2.5])


@pytest.mark.task7_1
@pytest.mark.points(3)
def test_samples_follow_softmax_not_argmax(impl):
    sample = impl(MOD).sample_from_logits
    rng = np.random.default_rng(24)
    logits = np.tile(LOGITS, (20_000, 1))
    s = sample(logits, rng=rng)
    assert s.shape == (20_000,) and np.issubdtype(s.dtype, np.integer), \
        f"sample_from_logits on (20000, 5) logits should return (20000,) integer ids, got {s.shape} {s.dtype}"
    _chi2_ok(np.bincount(s, minlength=5), _softmax(LOGITS), "samples vs softmax(logits)")


@pytest.mark.task7_1
@pytest.mark.points(2)
@pytest.mark.parametrize("temperature", [0.5, 3.0])
def test_temperature_divides_the_logits(impl, temperature):
    sample = impl(MOD).sample_from_logits
    rng = np.random.default_rng(25)
    logits = np.tile(LOGITS, (20_000, 1))
    s = sample(logits, rng=rng, temperature=temperature)
    _chi2_ok(np.bincount(s, minlength=5), _softmax(LOGITS / temperature),
             f"samples vs softmax(logits / {temperature})")


@pytest.mark.task7_1
@pytest.mark.points(1)
def test_disallow_ids_and_batch_shape(impl):
    sample = impl(MOD).sample_from_logits
    rng = np.random.default_rng(26)
    logits = np.tile(LOGITS, (400, 50, 1))                            # (B, T, V)
    keep = logits.copy()
    true = rng.integers(0, 5, size=(400, 50))
    s = sample(logits, rng=rng, disallow_ids=true)
    assert np.array_equal(logits, keep), "sample_from_logits changed the logits"
    assert s.shape == (400, 50), \
        f"sample_from_logits on (400, 50, 5) logits should return (400, 50) ids, got {s.shape}"
    assert not np.any(s == true), "a disallowed (true) token was sampled"
    rows = true == 0                                                  # the others follow the renormalised softmax
    _chi2_ok(np.bincount(s[rows], minlength=5)[1:], _softmax(LOGITS[1:]), "samples with token 0 disallowed")


# ---------------------------------------------------------------- replaced_token_labels

@pytest.mark.task7_1
@pytest.mark.points(2)
def test_a_sample_equal_to_the_original_is_labelled_original(impl):
    labels_of = impl(MOD).replaced_token_labels
    original = np.array([[1, 10, 11, 12, 13, 2], [1, 20, 21, 22, 2, 0]])
    masked = np.array([[0, 1, 1, 0, 1, 0], [0, 1, 0, 1, 0, 0]], dtype=bool)
    corrupted = np.array([[1, 10, 30, 12, 31, 2], [1, 25, 21, 22, 2, 0]])
    #                          same  repl      repl           repl   same
    want = np.array([[0, 0, 1, 0, 1, 0], [0, 1, 0, 0, 0, 0]])
    got = labels_of(original, corrupted, masked)
    assert np.issubdtype(np.asarray(got).dtype, np.integer), "labels must be an integer array"
    assert np.array_equal(got, want), f"got {got.tolist()}, want {want.tolist()}"
    assert np.array_equal(labels_of(original[0], corrupted[0], masked[0]), want[0]), \
        "replaced_token_labels on one 1-D row should give that row's labels"
    # all masked, every sample right: nothing was replaced
    assert not np.any(labels_of(original, original.copy(), np.ones_like(masked))), \
        "when every masked sample equals the original nothing was replaced: every label must be 0"
