"""Library tests of the T5 and BART corruptions (minilm.corruption.t5 / .bart): the pinned API,
statistics over many draws, the attention masks, edge cases and bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest

from autograd.errors import ConfigError, MiniLMError, ShapeError, TokenizerError
from minilm import blocks, corruption

V, EOS = 1000, 1
SENTINELS = corruption.t5_sentinel_ids(V, 100)
BOS, BEOS, MASK, DOT = 0, 2, 3, 5


def bart_doc(n_inner):
    return np.concatenate([[BOS], np.arange(10, 10 + n_inner), [BEOS]])


# -- T5 --------------------------------------------------------------------------------------------

def test_t5_slots_are_bound_to_task_9_1():
    for name in ("random_spans_noise_mask", "spans_to_sentinels", "random_spans_helper"):
        fn = getattr(corruption, name)
        assert fn.slot_module == "task09_seq2seq.span_corruption" and fn.slot_name == name


def test_span_corruption_is_the_noise_mask_then_the_sentinels():
    """span_corruption = Task 9.1's random_spans_noise_mask, then spans_to_sentinels: no copy."""
    from autograd import tasks
    ids = np.arange(10, 60)
    with tasks.trace() as seen:
        got = corruption.span_corruption(ids, sentinel_ids=SENTINELS, eos_id=EOS, rng=np.random.default_rng(9))
    assert {("task09_seq2seq.span_corruption", "random_spans_noise_mask"),
            ("task09_seq2seq.span_corruption", "spans_to_sentinels")} <= seen
    noise = corruption.random_spans_noise_mask(ids.size, rng=np.random.default_rng(9))
    want = corruption.spans_to_sentinels(ids, noise, sentinel_ids=SENTINELS, eos_id=EOS)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_sentinel_ids_count_down_from_the_top():
    assert corruption.t5_sentinel_ids(32100, 3).tolist() == [32099, 32098, 32097]
    assert corruption.t5_sentinel_ids(10, 0).tolist() == []
    with pytest.raises(MiniLMError):
        corruption.t5_sentinel_ids(10, 11)


def test_span_corruption_pinned_call_and_reconstruction():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 900, size=200)
    keep = ids.copy()
    inputs, targets = corruption.span_corruption(ids, sentinel_ids=SENTINELS, eos_id=EOS, rng=rng,
                                                 noise_density=0.15, mean_span_length=3.0)
    assert np.array_equal(ids, keep)  # not mutated
    assert inputs.ndim == targets.ndim == 1
    assert np.issubdtype(inputs.dtype, np.integer) and np.issubdtype(targets.dtype, np.integer)
    assert np.array_equal(corruption.reconstruct(inputs, targets, SENTINELS, EOS), ids)
    assert (inputs[-1], targets[-1]) == (EOS, EOS)


def test_span_corruption_statistics_over_10000_draws():
    rng = np.random.default_rng(1)
    noise = spans = total = 0
    for _ in range(10_000):
        length = int(rng.integers(10, 300))
        inputs, targets = corruption.span_corruption(np.arange(10, 10 + length),
                                                     sentinel_ids=SENTINELS, eos_id=EOS, rng=rng)
        k = int(np.isin(inputs, SENTINELS).sum())
        noise, spans, total = noise + len(targets) - k - 1, spans + k, total + length
    assert abs(noise / total - 0.15) < 0.004
    assert abs(noise / spans - 3.0) < 0.08


def test_span_corruption_edge_cases():
    rng = np.random.default_rng(2)
    call = lambda ids, **kw: corruption.span_corruption(  # noqa: E731
        ids, sentinel_ids=SENTINELS, eos_id=EOS, rng=rng, **kw)
    inputs, targets = call(np.array([7]))
    assert inputs.tolist() == [7, EOS] and targets.tolist() == [999, EOS]
    inputs, targets = call(np.array([7, 8]))
    assert inputs.tolist() == [7, 999, EOS] and targets.tolist() == [999, 8, EOS]
    inputs, targets = call(np.arange(10, 30), noise_density=0.0)  # nothing noised
    assert inputs.tolist() == list(range(10, 30)) + [EOS] and targets.tolist() == [999, EOS]
    inputs, targets = call([10, 11, 12, 13])  # a list is fine
    assert inputs[-1] == EOS
    with pytest.raises(ShapeError):
        call(np.array([], dtype=np.int64))
    with pytest.raises(ShapeError):
        call(np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(TokenizerError):
        call(np.array([5, -3, 6]))
    with pytest.raises(TokenizerError):
        call(np.array([5, 999, 6]))  # a sentinel inside the text
    with pytest.raises(TokenizerError):
        call(np.array([5.0, 6.0]))
    with pytest.raises(ConfigError):
        call(np.arange(10, 30), noise_density=1.5)
    with pytest.raises(ConfigError):
        call(np.arange(10, 30), mean_span_length=0)


def test_noise_mask_extremes_and_errors():
    rng = np.random.default_rng(3)
    mask = corruption.random_spans_noise_mask(10, rng=rng, noise_density=1.0)
    assert mask.sum() == 9 and not mask[0]
    mask = corruption.random_spans_noise_mask(20, rng=rng, noise_density=0.9,
                                              mean_noise_span_length=0.5)
    assert mask.sum() == 18 and not mask[0] and mask[-1]  # spans clipped to the 2 clean tokens
    with pytest.raises(ShapeError):
        corruption.random_spans_noise_mask(0, rng=rng)


def test_random_spans_helper_values():
    helper = corruption.random_spans_helper
    assert helper(512) == (568, 114) and helper(256) == (284, 58) and helper(128) == (141, 29)
    assert helper(28) == (30, 6)  # round(4.5) == 4
    # T5's density-0.5 rule keeps the targets no longer than the inputs
    tokens, targets = helper(512, 0.5, 3.0)
    assert targets <= 512
    for inputs_length in range(8, 400, 7):  # the chosen raw length yields exactly that input size
        t, tl = helper(inputs_length)
        n = round(t * 0.15)
        k = round(n / 3)
        assert t - n + k + 1 <= inputs_length and tl == n + k + 1


def test_span_corruption_matches_random_spans_helper():
    rng = np.random.default_rng(4)
    for inputs_length in (64, 128, 256):
        t, tl = corruption.random_spans_helper(inputs_length)
        inputs, targets = corruption.span_corruption(np.arange(10, 10 + t), sentinel_ids=SENTINELS,
                                                     eos_id=EOS, rng=rng)
        assert (len(inputs), len(targets)) == (inputs_length, tl)


def test_prefix_lm_split():
    rng = np.random.default_rng(5)
    ids = np.arange(10, 16)
    counts = np.zeros(6, dtype=int)
    for _ in range(5000):
        prefix, rest = corruption.prefix_lm_split(ids, rng=rng)
        assert np.array_equal(np.concatenate([prefix, rest]), ids)
        counts[len(prefix)] += 1
    assert counts[0] == 0 and counts[1:].min() > 850  # uniform over 1..5 (1000 each)
    prefix, rest = corruption.prefix_lm_split([3, 4], rng=rng)
    assert prefix.tolist() == [3] and rest.tolist() == [4]
    with pytest.raises(ShapeError):
        corruption.prefix_lm_split([3], rng=rng)


def test_attention_masks():
    T = 5
    assert np.array_equal(corruption.full_mask(T), np.ones((T, T), dtype=bool))
    assert np.array_equal(corruption.causal_mask(T), np.tril(np.ones((T, T), dtype=bool)))
    for P in range(T + 1):
        M = corruption.prefix_lm_mask(T, P)
        i, j = np.indices((T, T))
        assert np.array_equal(M, (j <= i) | (j < P))
    assert np.array_equal(corruption.prefix_lm_mask(T, 0), corruption.causal_mask(T))
    assert np.array_equal(corruption.prefix_lm_mask(T, 1), corruption.causal_mask(T))
    assert np.array_equal(corruption.prefix_lm_mask(T, T), corruption.full_mask(T))
    # one implementation: T5's causal and prefix masks are minilm.blocks' (same object, same errors)
    assert corruption.causal_mask is blocks.causal_mask
    assert corruption.prefix_lm_mask is blocks.prefix_lm_mask
    with pytest.raises(ConfigError, match="P=4 is longer than the sequence T=3"):
        corruption.prefix_lm_mask(3, 4)
    with pytest.raises(ConfigError):
        corruption.causal_mask(-1)


def test_reconstruct_refuses_malformed_pairs():
    with pytest.raises(MiniLMError):
        corruption.reconstruct([10, 999, 1], [999, 11], SENTINELS, EOS)  # no EOS on targets
    with pytest.raises(MiniLMError):
        corruption.reconstruct([10, 998, 1], [999, 11, 1], SENTINELS, EOS)  # unknown sentinel


# -- BART ------------------------------------------------------------------------------------------

def test_bart_slots_are_bound_to_task_9_3():
    for name in ("poisson_span_lengths", "mask_word_spans", "insert_tokens",
                 "sentence_permutation", "document_rotation"):
        fn = getattr(corruption, name)
        assert fn.slot_module == "task09_seq2seq.noising" and fn.slot_name == name


def test_whole_word_mask_runs_the_task_9_3_slots_in_fairseqs_order():
    """whole_word_mask = poisson_span_lengths, mask_word_spans, insert_tokens on one rng: no copy."""
    from autograd import tasks
    ids = bart_doc(50)
    kw = dict(mask_id=MASK, ratio=0.3, replace_length=1, poisson_lambda=0.5)
    with tasks.trace() as seen:
        got = corruption.whole_word_mask(ids, rng=np.random.default_rng(8), **kw)
    assert {("task09_seq2seq.noising", name) for name in
            ("poisson_span_lengths", "mask_word_spans", "insert_tokens")} <= seen
    rng = np.random.default_rng(8)
    starts = np.ones(ids.size, dtype=bool)
    starts[0] = starts[-1] = False
    lengths = corruption.poisson_span_lengths(math.ceil(50 * 0.3), rng=rng, poisson_lambda=0.5)
    out, num_inserts = corruption.mask_word_spans(ids, lengths, starts, rng=rng, mask_id=MASK)
    assert num_inserts == int((lengths == 0).sum()) > 0
    assert np.array_equal(got, corruption.insert_tokens(out, num_inserts, rng=rng, mask_id=MASK))


def test_truncated_poisson_pmf():
    pmf = corruption.truncated_poisson_pmf(3.0)
    assert pmf.size == 18 and math.isclose(pmf.sum(), 1.0)
    raw = [math.exp(-3) * 3 ** k / math.factorial(k) for k in range(18)]
    assert raw[-1] < 1e-7 <= raw[-2]
    assert np.allclose(pmf, np.array(raw) / sum(raw))


def test_text_infilling_pinned_call():
    rng = np.random.default_rng(6)
    ids = bart_doc(60)
    keep = ids.copy()
    out = corruption.text_infilling(ids, mask_id=MASK, rng=rng, ratio=0.3, poisson_lambda=3.0)
    assert np.array_equal(ids, keep)
    assert out[0] == BOS and out[-1] == BEOS and (out == MASK).any()
    assert len(out) < len(ids)


def test_deletion_removes_exactly_the_masked_tokens():
    for seed in range(50):
        ids = bart_doc(40)
        masked = corruption.token_masking(ids, mask_id=MASK, rng=np.random.default_rng(seed),
                                          ratio=0.3)
        deleted = corruption.token_deletion(ids, rng=np.random.default_rng(seed), ratio=0.3)
        assert np.array_equal(deleted, ids[masked != MASK])
        assert (masked == MASK).sum() == math.ceil(40 * 0.3)


def test_masked_share_equals_ratio_for_token_masking():
    rng = np.random.default_rng(7)
    shares = [(corruption.token_masking(bart_doc(98), mask_id=MASK, rng=rng, ratio=0.15) == MASK
               ).mean() for _ in range(1000)]
    assert np.allclose(shares, math.ceil(98 * 0.15) / 100)


def test_bart_noise_defaults_and_order():
    rng = np.random.default_rng(8)
    body = []
    for s in range(5):
        body += [10 + 10 * s, 11 + 10 * s, 12 + 10 * s, DOT]
    ids = np.array([BOS] + body + [BEOS])
    keep = ids.copy()
    out = corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT)
    assert np.array_equal(ids, keep)
    assert out[0] == BOS and out[-1] == BEOS and (out == MASK).any()
    # permutation and rotation alone only rearrange the tokens
    for _ in range(300):
        out = corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                                    mask_ratio=0.0, rotate=1.0)
        assert sorted(out.tolist()) == sorted(ids.tolist())
        assert out[0] == BOS and out[-1] == BEOS
    out = corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                                mask_ratio=0.0, permute_sentences=0.0, insert=0.1)
    assert len(out) == len(ids) + math.ceil(len(ids) * 0.1)
    assert np.array_equal(out[out != MASK], ids)
    out = corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                                mask_ratio=0.0, permute_sentences=0.0)
    assert np.array_equal(out, ids) and out is not ids
    # the authors' recipe (fairseq #1899): mask-random, Poisson 3.5
    out = corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                                mask_random=0.1, poisson_lambda=3.5)
    assert out.min() >= 0 and out.max() < V


def test_bart_noise_word_start_table():
    rng = np.random.default_rng(9)
    table = np.ones(V, dtype=bool)
    table[11::2] = False  # odd ids >= 11 continue the word before them
    ids = bart_doc(40)
    for _ in range(100):
        out = corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                                    permute_sentences=0.0, replace_length=-1, poisson_lambda=None,
                                    word_start_table=table)
        masked = out == MASK
        # a masked word is masked whole: piece 2k+11 is masked iff its start 2k+10 is
        assert np.array_equal(masked[1:-1:2], masked[2:-1:2])
    with pytest.raises(ShapeError):
        corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT,
                              word_start_table=np.ones(5, dtype=bool))


def test_bart_refuses_bad_input():
    rng = np.random.default_rng(10)
    kw = dict(rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT)
    with pytest.raises(TokenizerError):
        corruption.bart_noise(np.array([0, 5, V, 2]), **kw)  # id outside the vocabulary
    with pytest.raises(TokenizerError):
        corruption.bart_noise(np.array([0, -5, 2]), **kw)
    with pytest.raises(TokenizerError):
        corruption.bart_noise(bart_doc(5), rng=rng, mask_id=V, vocab_size=V, full_stop_id=DOT)
    with pytest.raises(ConfigError):
        corruption.bart_noise(bart_doc(5), **kw, mask_ratio=1.5)
    with pytest.raises(ConfigError):
        corruption.bart_noise(bart_doc(5), **kw, replace_length=2)
    with pytest.raises(ConfigError):  # random replacements need the vocabulary size
        corruption.whole_word_mask(bart_doc(5), rng=rng, mask_id=MASK, ratio=0.5, mask_random=0.5)
    with pytest.raises(ConfigError):
        corruption.text_infilling(bart_doc(5), mask_id=MASK, rng=rng, poisson_lambda=0.0)
    with pytest.raises(ShapeError):
        corruption.whole_word_mask(bart_doc(5), rng=rng, mask_id=MASK, ratio=0.5,
                                   word_starts=np.ones(3, dtype=bool))
    for fn in (lambda x: corruption.text_infilling(x, mask_id=MASK, rng=rng),
               lambda x: corruption.token_masking(x, mask_id=MASK, rng=rng),
               lambda x: corruption.token_deletion(x, rng=rng),
               lambda x: corruption.sentence_permutation(x, full_stop_id=DOT, rng=rng),
               lambda x: corruption.document_rotation(x, rng=rng),
               lambda x: corruption.insertion_noise(x, rng=rng, mask_id=MASK, ratio=0.5),
               lambda x: corruption.bart_noise(x, **kw)):
        with pytest.raises(ShapeError):  # <s> and </s> at least
            fn(np.array([0]))
        with pytest.raises(ShapeError):
            fn(np.array([], dtype=np.int64))
        two = np.array([0, 2])
        out = fn(two)  # nothing inside: nothing to noise (insertion aside)
        assert out[0] == 0 and out[-1] == 2 and out is not two


def test_bart_functions_never_mutate_their_input():
    rng = np.random.default_rng(11)
    starts = np.ones(32, dtype=bool)
    ids = bart_doc(30)
    ids[[8, 16, 24]] = DOT
    keep, keep_starts = ids.copy(), starts.copy()
    corruption.whole_word_mask(ids, rng=rng, mask_id=MASK, ratio=0.5, replace_length=1,
                               poisson_lambda=3.0, word_starts=starts)
    corruption.insert_tokens(ids, 4, rng=rng, mask_id=MASK)
    corruption.sentence_permutation(ids, full_stop_id=DOT, rng=rng)
    corruption.document_rotation(ids, rng=rng)
    corruption.bart_noise(ids, rng=rng, mask_id=MASK, vocab_size=V, full_stop_id=DOT, rotate=1.0,
                          insert=0.2)
    assert np.array_equal(ids, keep) and np.array_equal(starts, keep_starts)


def test_ratio_zero_changes_nothing():
    rng = np.random.default_rng(12)
    ids = bart_doc(20)
    for out in (corruption.text_infilling(ids, mask_id=MASK, rng=rng, ratio=0.0),
                corruption.token_masking(ids, mask_id=MASK, rng=rng, ratio=0.0),
                corruption.insertion_noise(ids, rng=rng, mask_id=MASK, ratio=0.0),
                corruption.sentence_permutation(ids, full_stop_id=DOT, rng=rng, p=0.0)):
        assert np.array_equal(out, ids)
