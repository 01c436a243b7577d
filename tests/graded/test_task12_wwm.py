"""Graded tests of Task 12.2: whole-word masking, ``word_groups`` and then ``choose_groups``.

The library's ``minilm.corruption.bert_whole_word_mask`` is ``sorted(choose_groups(word_groups(tokens),
len(tokens), ...))``; the tests below run that line on your two slots (``_whole_word_mask``) and check
what BERT's whole-word masking promises. ``tests/graded/test_task12_choose_groups.py`` checks
``choose_groups`` alone. The statistics run thousands of draws with a fixed seed; rates lie within
4.5 standard errors.
"""
import numpy as np
import pytest

MOD = "task12_beyond.wwm"

# 16 tokens: budget round(16·0.15) = round(2.4) = 2
SENT = ["[CLS]", "the", "un", "##aff", "##able", "cat", "sat", "in", "new", "york", "##er", "[SEP]",
        "it", "pur", "##red", "[SEP]"]
SENT_WORDS = [[1], [2, 3, 4], [5], [6], [7], [8], [9, 10], [12], [13, 14]]


@pytest.mark.task12_2
@pytest.mark.points(2)
def test_word_groups(impl):
    word_groups = impl(MOD).word_groups
    assert (got := word_groups(["[CLS]", "un", "##aff", "##able", "cat", "[SEP]"])) == [[1, 2, 3], [4]], \
        ('word_groups(["[CLS]", "un", "##aff", "##able", "cat", "[SEP]"]) should be [[1, 2, 3], [4]], got ' + repr(got)
         + (' — a word is a piece without ## plus the ## pieces after it; [CLS]/[SEP] belong to no word; '
            'indices are token positions'))
    assert (got := word_groups(SENT)) == SENT_WORDS, \
        ('word_groups(SENT) should be SENT_WORDS, got ' + repr(got)
         + (' — a word is a piece without ## plus the ## pieces after it; [CLS]/[SEP] belong to no word; '
            'indices are token positions'))
    assert (got := word_groups(["[CLS]", "a", "b", "c", "[SEP]"])) == [[1], [2], [3]], \
        ('word_groups(["[CLS]", "a", "b", "c", "[SEP]"]) should be [[1], [2], [3]], got ' + repr(got)
         + (' — a word is a piece without ## plus the ## pieces after it; [CLS]/[SEP] belong to no word; '
            'indices are token positions'))
    assert (got := word_groups(["[CLS]", "[SEP]"])) == [], \
        ('word_groups(["[CLS]", "[SEP]"]) should be [], got ' + repr(got)
         + (' — a word is a piece without ## plus the ## pieces after it; [CLS]/[SEP] belong to no word; '
            'indices are token positions'))
    assert (got := word_groups([])) == [], \
        ('word_groups([]) should be [], got ' + repr(got)
         + (' — a word is a piece without ## plus the ## pieces after it; [CLS]/[SEP] belong to no word; '
            'indices are token positions'))
    assert (got := word_groups(["x", "##y", "##z"])) == [[0, 1, 2]], \
        ('word_groups(["x", "##y", "##z"]) should be [[0, 1, 2]], got ' + repr(got)
         + (' — a word is a piece without ## plus the ## pieces after it; [CLS]/[SEP] belong to no word; '
            'indices are token positions'))


def _whole_word_mask(m):
    """The library's bert_whole_word_mask, on the slots of ``m``: words, then the budgeted walk."""
    def whole_word_mask(tokens, *, rng, **kw):
        return sorted(m.choose_groups(m.word_groups(tokens), len(tokens), rng=rng, **kw))
    return whole_word_mask


def _draws(whole_word_mask, tokens, n, seed, **kw):
    rng = np.random.default_rng(seed)
    return [list(whole_word_mask(tokens, rng=rng, **kw)) for _ in range(n)]


@pytest.mark.task12_2
@pytest.mark.points(3)
def test_words_are_masked_whole_or_not_at_all(impl):
    whole_word_mask = _whole_word_mask(impl(MOD))
    tokens = ["[CLS]"] + ["w", "##a", "##b", "x", "##c", "y", "z", "##d", "##e", "##f", "v"] * 3 + ["[SEP]"]
    groups, cur = [], None
    for i, t in enumerate(tokens):                                    # the expected words
        if t in ("[CLS]", "[SEP]"):
            continue
        if t.startswith("##"):
            cur.append(i)
        else:
            cur = [i]
            groups.append(cur)
    draws = _draws(whole_word_mask, tokens, 4000, 30, prob=0.3)      # budget round(38·0.3) = 11
    seen = np.zeros(len(tokens), dtype=int)
    for chosen in draws:
        assert len(set(chosen)) == len(chosen), "a position was chosen twice"
        s = set(chosen)
        assert 0 not in s and len(tokens) - 1 not in s, "[CLS] or [SEP] was chosen"
        for g in groups:
            k = len(s.intersection(g))
            assert k in (0, len(g)), f"word at {g} partly masked: chosen {sorted(s.intersection(g))}"
        seen[chosen] += 1
    assert np.all(seen[1:-1] > 0), "some words are never chosen"


@pytest.mark.task12_2
@pytest.mark.points(2)
def test_budget_is_respected_and_filled_by_short_words(impl):
    whole_word_mask = _whole_word_mask(impl(MOD))
    # single-piece words only: exactly the budget every time
    # budget = min(max_predictions, max(1, round(len(tokens)·prob))), [CLS]/[SEP] counted, Python round
    for length, prob, budget in ((40, 0.15, 6), (40, 0.3, 12), (46, 0.15, 7), (10, 0.15, 2), (50, 0.15, 8)):
        plain = ["[CLS]"] + [f"w{i}" for i in range(length - 2)] + ["[SEP]"]
        counts = {len(c) for c in _draws(whole_word_mask, plain, 200, 31, prob=prob)}
        assert counts == {budget}, f"{length} tokens, prob={prob}: counts {sorted(counts)}, budget {budget}"
    plain = ["[CLS]"] + [f"w{i}" for i in range(38)] + ["[SEP]"]     # 40 tokens
    counts = {len(c) for c in _draws(whole_word_mask, plain, 300, 32, prob=0.3, max_predictions=5)}
    assert counts == {5}, "max_predictions caps the budget"
    tiny = ["[CLS]", "a", "b", "[SEP]"]                               # round(0.6) = 1
    assert {len(c) for c in _draws(whole_word_mask, tiny, 200, 33)} == {1}, \
        "[CLS] a b [SEP] with prob 0.15: the budget is max(1, round(4·0.15)) = 1 position"
    # long words: never above the budget
    long_words = ["[CLS]"] + ["a", "##b", "##c", "d", "##e"] * 8 + ["[SEP]"]   # 42 tokens -> 6
    counts = [len(c) for c in _draws(whole_word_mask, long_words, 2000, 34)]
    assert max(counts) <= 6, f"budget 6 exceeded: {max(counts)} positions"
    assert min(counts) >= 5, \
        (f"budget 6 with words of 3 and 2 pieces: every draw should fill at least 5 positions, one drew {min(counts)} "
         "— skip a word that does not fit and try the next (short) one")


@pytest.mark.task12_2
@pytest.mark.points(1)
def test_a_word_that_does_not_fit_is_skipped_not_a_stop(impl):
    """SENT has budget 2 and one 3-piece word: when it comes up it is skipped and two short words
    still fill the budget (a `break` there would under-fill)."""
    whole_word_mask = _whole_word_mask(impl(MOD))
    draws = _draws(whole_word_mask, SENT, 2000, 35)
    assert {len(c) for c in draws} == {2}, f"counts {sorted({len(c) for c in draws})}, expected always 2"
    assert not any(2 in c or 3 in c or 4 in c for c in draws), "the 3-piece word overflows the budget"


@pytest.mark.task12_2
@pytest.mark.points(1)
def test_groups_are_shuffled_anew_on_every_call(impl):
    whole_word_mask = _whole_word_mask(impl(MOD))
    plain = ["[CLS]"] + [f"w{i}" for i in range(20)] + ["[SEP]"]     # 22 tokens -> budget 3
    draws = _draws(whole_word_mask, plain, 4000, 36)
    seen = np.zeros(len(plain))
    for chosen in draws:
        seen[chosen] += 1
    rates, p = seen[1:-1] / len(draws), 3 / 20
    se = np.sqrt(p * (1 - p) / len(draws))
    assert np.all(np.abs(rates - p) < 4.5 * se), f"word rates {np.round(rates, 3)}, expected {p} each"
    assert len({tuple(c) for c in draws}) > 500, "the same words are chosen call after call"
