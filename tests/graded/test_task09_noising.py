"""Graded tests of Task 9.3: BART's noising (span lengths, whole-word masking / deletion / text
infilling, insertion, sentence permutation, document rotation).

Test documents are ``<s>=0``, distinct ids ``>= 10``, ``</s>=2``; ``<mask>=3``; so which original
tokens survive can be read off the output.
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from minilm.corruption import truncated_poisson_pmf

MOD = "task09_seq2seq.noising"
BOS, EOS, MASK, DOT, V = 0, 2, 3, 5, 1000


def doc(n_inner, start=10):
    return np.concatenate([[BOS], np.arange(start, start + n_inner), [EOS]])


def is_subsequence(small, big):
    it = iter(big.tolist())
    return all(tok in it for tok in small.tolist())


def chi2_limit(df):
    return df + 6 * math.sqrt(2 * df) + 10  # beyond the 99.99% point for any df here


# -- poisson_span_lengths --------------------------------------------------------------------------

@pytest.mark.task9_3
@pytest.mark.points(1)
def test_span_lengths_fill_the_budget(impl):
    lengths_fn = impl(MOD).poisson_span_lengths
    rng = np.random.default_rng(0)
    assert len(lengths_fn(0, rng=rng)) == 0, "poisson_span_lengths(0) should return no spans"
    for budget in (1, 2, 5, 17, 100, 999):
        for lam in (3.0, 0.5, 8.0):
            lengths = np.asarray(lengths_fn(budget, rng=rng, poisson_lambda=lam))
            assert np.issubdtype(lengths.dtype, np.integer) and lengths.min() >= 0, \
                (f"poisson_span_lengths({budget}, λ={lam}) should return non-negative integer lengths, got "
                 f"{lengths.dtype} min {lengths.min()}")
            assert lengths.sum() == budget and lengths[-1] >= 1, \
                (f"poisson_span_lengths({budget}, λ={lam}): the lengths must sum to the budget exactly (trim "
                 f"the last one) and the last must be ≥ 1; got sum {lengths.sum()}, last {lengths[-1]}")


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_span_lengths_follow_truncated_poisson(impl):
    """Chi-square goodness of fit of ~20,000 lengths (the trimmed last span of each draw left out)."""
    lengths_fn = impl(MOD).poisson_span_lengths
    rng = np.random.default_rng(1)
    for lam in (3.0, 1.0):
        lengths = []
        while len(lengths) < 20_000:
            lengths += list(np.asarray(lengths_fn(3000, rng=rng, poisson_lambda=lam))[:-1])
        lengths = np.array(lengths)
        pmf = truncated_poisson_pmf(lam)
        expected = lengths.size * pmf
        counts = np.bincount(lengths, minlength=pmf.size)
        assert counts.size == pmf.size, \
            f"λ={lam}: a span length {counts.size - 1} lies outside the truncated Poisson support 0..{pmf.size - 1}"  # no length outside the truncated support
        keep = expected >= 20
        obs = np.append(counts[keep], counts[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum())
        chi2 = ((obs - exp) ** 2 / exp).sum()
        assert chi2 < chi2_limit(len(obs) - 1), \
            (f"λ={lam}: the span lengths do not follow the truncated Poisson (chi2 = {chi2:.1f} over {len(obs) - 1} "
             f"degrees of freedom): draw each length from the Poisson pmf cut to 0..{pmf.size - 1} and renormalised")


# -- mask_word_spans: token masking, deletion, text infilling --------------------------------------

def _whole_word_mask(m):
    """The library's ``minilm.corruption.whole_word_mask`` on the slots of ``m``: the budget, the span
    lengths (poisson_span_lengths), the spans (mask_word_spans), the insertions (insert_tokens)."""
    def whole_word_mask(ids, *, rng, mask_id, ratio, replace_length=1, poisson_lambda=None, word_starts=None):
        ids = np.asarray(ids)
        starts = np.ones(ids.size, dtype=bool) if word_starts is None else np.array(word_starts, dtype=bool)
        starts[0] = starts[-1] = False
        num_to_mask = math.ceil(int(starts.sum()) * ratio)
        if num_to_mask == 0:
            return ids.copy()
        lengths = (np.ones(num_to_mask, dtype=np.int64) if poisson_lambda is None else
                   m.poisson_span_lengths(num_to_mask, rng=rng, poisson_lambda=poisson_lambda))
        out, num_inserts = m.mask_word_spans(ids, lengths, starts, rng=rng, mask_id=mask_id,
                                             replace_length=replace_length)
        return m.insert_tokens(out, num_inserts, rng=rng, mask_id=mask_id) if num_inserts else out
    return whole_word_mask


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_token_masking_masks_exactly_ceil_ratio_of_the_words(impl):
    wwm = _whole_word_mask(impl(MOD))
    rng = np.random.default_rng(2)
    for n_inner, ratio in [(40, 0.15), (40, 0.3), (7, 0.5), (1, 0.3), (0, 0.3), (25, 1.0)]:
        ids = doc(n_inner)
        out = np.asarray(wwm(ids, rng=rng, mask_id=MASK, ratio=ratio, replace_length=-1))
        assert out.shape == ids.shape, \
            f"replace_length=-1 (token masking) keeps the length: expected {ids.shape}, got {out.shape}"
        assert out[0] == BOS and out[-1] == EOS, "the first token <s> and the last </s> must stay in place"
        masked = out == MASK
        assert masked.sum() == math.ceil(n_inner * ratio), \
            (f"{n_inner} words, ratio={ratio}: exactly ceil({n_inner}·{ratio}) = {math.ceil(n_inner * ratio)} "
             f"must be masked, got {masked.sum()}")
        assert np.array_equal(out[~masked], ids[~masked]), "token masking changed a token that is not masked"


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_masking_and_deletion_take_whole_words(impl):
    wwm = _whole_word_mask(impl(MOD))
    rng = np.random.default_rng(3)
    for _ in range(200):
        ids = doc(30)
        starts = rng.random(32) < 0.5
        starts[1] = True
        word = np.cumsum(starts & (np.arange(32) > 0))  # word number of each position
        n_words = int(starts[1:-1].sum())
        out = np.asarray(wwm(ids, rng=rng, mask_id=MASK, ratio=0.3, replace_length=-1,
                             word_starts=starts))
        masked_words = set(word[out == MASK].tolist())
        assert len(masked_words) == math.ceil(n_words * 0.3), \
            (f"{n_words} words, ratio 0.3: ceil(0.3·{n_words}) = {math.ceil(n_words * 0.3)} whole words must "
             f"be masked, got {len(masked_words)} (count words by word_starts, not tokens)")
        for w in masked_words:  # every piece of a chosen word is masked
            assert (out[(word == w) & (np.arange(32) < 31)] == MASK).all(), \
                f"word {w} is only partly masked: every piece of a chosen word is masked (use word_starts)"
        out = np.asarray(wwm(ids, rng=rng, mask_id=MASK, ratio=0.3, replace_length=0,
                             word_starts=starts))
        assert out[0] == BOS and out[-1] == EOS and is_subsequence(out, ids), \
            "replace_length=0 (deletion) must keep <s>, </s> and the order of the surviving tokens"
        gone = ~np.isin(ids, out)
        assert len(set(word[gone].tolist())) == math.ceil(n_words * 0.3), \
            (f"deletion: ceil(0.3·{n_words}) = {math.ceil(n_words * 0.3)} whole words must be deleted, got "
             f"{len(set(word[gone].tolist()))}")
        for w in set(word[gone].tolist()):
            assert gone[(word == w) & (np.arange(32) < 31)].all(), \
                f"word {w} is only partly deleted: a chosen word goes as a whole"


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_text_infilling_one_mask_per_span(impl):
    """replace_length=1: a span of many tokens leaves ONE <mask>; about 1 mask per 3 tokens at λ=3."""
    wwm = _whole_word_mask(impl(MOD))
    rng = np.random.default_rng(4)
    masks = removed = 0
    for _ in range(300):
        ids = doc(100)
        out = np.asarray(wwm(ids, rng=rng, mask_id=MASK, ratio=0.3, replace_length=1,
                             poisson_lambda=3.0))
        assert out[0] == BOS and out[-1] == EOS, "the first token <s> and the last </s> must stay in place"
        assert is_subsequence(out[out != MASK], ids), \
            "text infilling: the tokens that are not <mask> must be the original ones, in order"
        assert len(out) < len(ids), \
            ("text infilling at λ=3 should shorten a 100-word text (a span of many tokens leaves one <mask>), "
             f"got {len(out)} from {len(ids)}")
        masks += int((out == MASK).sum())
        removed += int((~np.isin(ids, out)).sum())
    assert 0.2 < masks / removed < 0.5, \
        (f"text infilling at λ=3: about one <mask> per 3 removed tokens, got {masks / removed:.2f} per token "
         "(one <mask> per span with replace_length=1)")


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_text_infilling_masked_share(impl):
    """30% of the words are budgeted; overlapping spans cover a bit less (about 27%)."""
    wwm = _whole_word_mask(impl(MOD))
    rng = np.random.default_rng(5)
    shares = []
    for _ in range(1000):
        ids = doc(100)
        out = np.asarray(wwm(ids, rng=rng, mask_id=MASK, ratio=0.3, replace_length=1,
                             poisson_lambda=3.0))
        shares.append((~np.isin(ids[1:-1], out)).mean())
    assert 0.24 < np.mean(shares) <= 0.3, \
        f"ratio 0.3 with λ=3 should remove about 27% of the words (≤ 30%), got {np.mean(shares):.3f}"


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_zero_length_spans_insert_a_mask(impl):
    """λ=0.2: most spans have length 0 and each inserts a <mask>, so the text grows."""
    wwm = _whole_word_mask(impl(MOD))
    rng = np.random.default_rng(6)
    grew = 0
    for _ in range(200):
        ids = doc(50)
        out = np.asarray(wwm(ids, rng=rng, mask_id=MASK, ratio=0.3, replace_length=1,
                             poisson_lambda=0.2))
        assert out[0] == BOS and out[-1] == EOS, "the first token <s> and the last </s> must stay in place"
        assert is_subsequence(out[out != MASK], ids), \
            "the tokens that are not <mask> must be the original ones, in order"
        n_masks, n_removed = int((out == MASK).sum()), int((~np.isin(ids, out)).sum())
        assert n_masks > n_removed, \
            ("at λ=0.2 most spans have length 0 and each inserts a <mask>: expected more masks than removed "
             f"tokens, got {n_masks} and {n_removed}")
        grew += len(out) > len(ids)
    assert grew > 190, \
        ("at λ=0.2 the text should grow in nearly every draw (zero-length spans insert a <mask>), it grew "
         f"in {grew} of 200")
    # mask_word_spans itself: the zero-length spans come back as num_inserts, the others are infilled
    ids = doc(20)
    starts = np.ones(ids.size, dtype=bool)
    starts[0] = starts[-1] = False
    out, num_inserts = impl(MOD).mask_word_spans(ids, np.array([0, 2, 0, 1]), starts, rng=rng, mask_id=MASK)
    out = np.asarray(out)
    assert num_inserts == 2, \
        (f"span lengths [0, 2, 0, 1]: num_inserts should be the 2 zero-length spans (the caller inserts their "
         f"<mask>), got {num_inserts}")
    assert len(out) == len(ids) - 1 and 1 <= (out == MASK).sum() <= 2, \
        (f"span lengths [0, 2, 0, 1] with replace_length=1 on {len(ids)} tokens: the span of 2 words leaves one "
         f"<mask> and loses a token, the span of 1 leaves one <mask>; the zero-length spans are set aside (num_inserts), "
         f"neither masked nor inserted here: expected "
         f"{len(ids) - 1} tokens, got {out.tolist()}")


# -- insert_tokens ---------------------------------------------------------------------------------

@pytest.mark.task9_3
@pytest.mark.points(1)
def test_insert_tokens(impl):
    insert = impl(MOD).insert_tokens
    rng = np.random.default_rng(7)
    ids = doc(4)
    slots = Counter()
    for _ in range(4000):
        out = np.asarray(insert(ids, 1, rng=rng, mask_id=MASK))
        assert len(out) == 7 and out[0] == BOS and out[-1] == EOS, \
            f"insert_tokens(<s> 4 words </s>, 1) should give 7 tokens with <s> and </s> in place, got {out.tolist()}"
        assert np.array_equal(out[out != MASK], ids), \
            "insert_tokens must keep the original tokens, in order, around the inserted <mask>"
        slots[int(np.flatnonzero(out == MASK)[0])] += 1
    assert sorted(slots) == [1, 2, 3, 4, 5], \
        f"the inserted <mask> may go in any inner slot 1..5, seen {sorted(slots)}"  # any inner slot, equally likely
    assert all(abs(c - 800) < 4.5 * math.sqrt(4000 * 0.2 * 0.8) for c in slots.values()), \
        f"the 5 inner slots should be equally likely (≈ 800 each of 4000), got {dict(slots)}"
    # mask_random: ceil(10 * 0.25) = 3 random ids in [1, V), the other 7 are <mask> (here id 0)
    ids = np.array([1, 10, 11, 12, 13, 2])
    out = np.asarray(insert(ids, 10, rng=rng, mask_id=0, mask_random=0.25, vocab_size=V))
    assert len(out) == 16 and out[0] == 1 and out[-1] == 2, \
        f"insert_tokens(6 ids, 10) should give 16 tokens starting 1 and ending 2, got {len(out)}"
    assert (out == 0).sum() == 7, \
        f"mask_random=0.25 of 10 inserts: ceil(2.5) = 3 random ids and 7 <mask>, got {(out == 0).sum()} <mask>"
    assert is_subsequence(ids, out[out != 0]) and (out != 0).sum() == 9, \
        "the originals must stay in order and the 3 random ids lie in [1, V) (never <mask>)"


# -- sentence_permutation --------------------------------------------------------------------------

def sentences_doc(n_sent, length=3):
    """<s> then n_sent sentences of `length` words + a full stop, then </s>."""
    body = []
    for s in range(n_sent):
        body += list(range(10 + 10 * s, 10 + 10 * s + length)) + [DOT]
    return np.array([BOS] + body + [EOS])


def sentence_firsts(out):
    """First word of each sentence, in output order (each sentence's first id is unique)."""
    return [int(t) for i, t in enumerate(out[1:-1], start=1) if t != DOT and out[i - 1] in (BOS, DOT)]


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_permutation_keeps_tokens_and_whole_sentences(impl):
    permute = impl(MOD).sentence_permutation
    rng = np.random.default_rng(8)
    ids = sentences_doc(4)
    for _ in range(200):
        out = np.asarray(permute(ids, full_stop_id=DOT, rng=rng, p=1.0))
        assert out[0] == BOS and out[-1] == EOS, "the first token <s> and the last </s> must stay in place"
        assert sorted(out.tolist()) == sorted(ids.tolist()), \
            "sentence_permutation must keep every token (the same multiset)"
        for first in sentence_firsts(out):  # each sentence moves as one piece
            i = int(np.flatnonzero(out == first)[0])
            assert out[i:i + 4].tolist() == [first, first + 1, first + 2, DOT], \
                f"the sentence starting {first} was broken up: sentences move as whole pieces ending at their full stop"
    # a last sentence without a full stop still counts as a sentence
    ids = np.array([BOS, 10, 11, DOT, 20, 21, EOS])
    outs = {tuple(np.asarray(permute(ids, full_stop_id=DOT, rng=rng)).tolist()) for _ in range(100)}
    assert outs == {tuple(ids.tolist()), (BOS, 20, 21, 10, 11, DOT, EOS)}, \
        ("[<s> 10 11 . 20 21 </s>]: the last sentence has no full stop but still counts; the two orders "
         f"expected, got {sorted(outs)}")


@pytest.mark.task9_3
@pytest.mark.points(2)
def test_permutation_is_uniform_and_moves_ceil_np_sentences(impl):
    permute = impl(MOD).sentence_permutation
    rng = np.random.default_rng(9)
    ids = sentences_doc(3)
    n = 6000
    orders = Counter(tuple(sentence_firsts(np.asarray(permute(ids, full_stop_id=DOT, rng=rng))))
                     for _ in range(n))
    assert len(orders) == 6, f"3 sentences at p=1 should give all 6 orders, saw {len(orders)}"
    assert all(abs(c - n / 6) < 4.5 * math.sqrt(n * (1 / 6) * (5 / 6)) for c in orders.values()), \
        f"every order of 3 sentences should be equally likely (≈ {n // 6}), got {dict(orders)}"
    # p = 0.5 of 4 sentences: 2 chosen, swapped half of the time; never more than 2 moved
    ids = sentences_doc(4)
    moved = Counter()
    for _ in range(2000):
        firsts = sentence_firsts(np.asarray(permute(ids, full_stop_id=DOT, rng=rng, p=0.5)))
        moved[sum(a != b for a, b in zip(firsts, [10, 20, 30, 40]))] += 1
    assert set(moved) <= {0, 2}, \
        f"p=0.5 of 4 sentences permutes ceil(4·0.5) = 2 of them: 0 or 2 move, never {sorted(set(moved) - {0, 2})}"
    assert abs(moved[2] / 2000 - 0.5) < 0.05, \
        f"p=0.5: the 2 chosen sentences should swap half of the time, they did {moved[2] / 2000:.2f}"
    assert np.array_equal(permute(ids, full_stop_id=DOT, rng=rng, p=0.0), ids), \
        "sentence_permutation with p=0 must return the text unchanged"


# -- document_rotation -----------------------------------------------------------------------------

@pytest.mark.task9_3
@pytest.mark.points(2)
def test_rotation_keeps_bos_eos_and_rotates_uniformly(impl):
    rotate = impl(MOD).document_rotation
    rng = np.random.default_rng(10)
    ids = doc(4)  # inside 10 11 12 13: offsets 1..5, offsets 1 and 5 are the identity
    n = 5000
    starts = Counter()
    for _ in range(n):
        out = np.asarray(rotate(ids, rng=rng))
        assert out[0] == BOS and out[-1] == EOS and len(out) == len(ids), \
            "document_rotation must keep <s>, </s> and the length"
        inner, k = out[1:-1], int(out[1]) - 10
        assert np.array_equal(inner, np.roll(ids[1:-1], -k)), \
            f"the inside should be a rotation of the original words, got {inner.tolist()}"
        starts[k] += 1
    p = np.array([2, 1, 1, 1]) / 5
    for k in range(4):
        assert abs(starts[k] - n * p[k]) < 4.5 * math.sqrt(n * p[k] * (1 - p[k])), \
            (f"rotation start offset {k}: {starts[k]} of {n}, expected ≈ {n * p[k]:.0f} (a start token uniform "
             "over 1..len-1 of the inside)")
    assert np.array_equal(rotate(doc(0), rng=rng), doc(0)), \
        "document_rotation of a text with no inner words must return it unchanged"
