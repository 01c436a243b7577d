"""Library behaviour of the masking corruptions (BERT, RoBERTa, ELECTRA, whole-word masking):
the public names in ``minilm.corruption``, argument checks, edge cases and a few invariants.
The graded statistics of each task slot live in tests/graded/."""
import functools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from autograd.errors import ConfigError, MiniLMError, ShapeError, TokenizerError
from minilm import corruption

PAD, CLS, SEP, MASK = 0, 1, 2, 3
SPECIAL = (PAD, CLS, SEP, MASK)


def _kw(**extra):
    return dict(mask_id=MASK, vocab_size=50, special_ids=SPECIAL, **extra)


# ---------------------------------------------------------------- corruption.mask_tokens (pinned API)

def test_mask_tokens_is_the_pinned_slot():
    assert corruption.mask_tokens.slot_module == "task05_bert.masking"
    inputs, labels = corruption.mask_tokens([1, 10, 11, 12, 2], rng=np.random.default_rng(0), **_kw(prob=1.0))
    assert labels.tolist() == [-100, 10, 11, 12, -100]
    assert inputs[0] == CLS and inputs[-1] == SEP


@pytest.mark.parametrize("bad", [50, -1, 1000])
def test_mask_tokens_rejects_ids_outside_the_vocabulary(bad):
    with pytest.raises(TokenizerError, match=str(bad)):
        corruption.mask_tokens(np.array([[1, 5, bad, 2]]), rng=np.random.default_rng(0), **_kw())
    corruption.mask_tokens(np.array([[1, 5, 49, 2]]), rng=np.random.default_rng(0), **_kw())  # valid


@pytest.mark.parametrize("prob", [-0.1, 1.5, float("nan")])
def test_mask_tokens_rejects_a_bad_probability(prob):
    with pytest.raises(ConfigError, match="prob"):
        corruption.mask_tokens([1, 5, 2], rng=np.random.default_rng(0), **_kw(prob=prob))


def test_mask_tokens_rejects_float_ids():
    with pytest.raises(TokenizerError, match="integer"):
        corruption.mask_tokens(np.array([1.0, 5.0]), rng=np.random.default_rng(0), **_kw())


def test_mask_tokens_edge_cases():
    rng = np.random.default_rng(0)
    inputs, labels = corruption.mask_tokens([], rng=rng, **_kw())
    assert inputs.shape == labels.shape == (0,)
    specials = np.array([[CLS, SEP, PAD, PAD], [CLS, MASK, SEP, PAD]])
    inputs, labels = corruption.mask_tokens(specials, rng=rng, **_kw(prob=1.0))
    assert np.array_equal(inputs, specials) and np.all(labels == -100)
    ids = np.arange(4, 50)
    inputs, labels = corruption.mask_tokens(ids, rng=rng, **_kw(prob=0.0))
    assert np.array_equal(inputs, ids) and np.all(labels == -100)


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), B=st.integers(1, 4), T=st.integers(0, 12),
       prob=st.floats(0.0, 1.0))
def test_mask_tokens_invariants(seed, B, T, prob):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 50, size=(B, T))
    keep = ids.copy()
    inputs, labels = corruption.mask_tokens(ids, rng=rng, **_kw(prob=prob))
    assert np.array_equal(ids, keep)
    special = np.isin(ids, SPECIAL)
    predicted = labels != -100
    assert not predicted[special].any()
    assert np.array_equal(labels[predicted], ids[predicted])
    assert np.array_equal(inputs[~predicted], ids[~predicted])
    assert inputs.min(initial=0) >= 0 and inputs.max(initial=0) < 50


# ---------------------------------------------------------------- BERT's create_masked_lm_predictions

def _pred(ids, seed=0, **kw):
    return corruption.bert_masked_lm_predictions(ids, cls_id=CLS, sep_id=SEP, mask_id=MASK, vocab_size=50,
                                                 rng=np.random.default_rng(seed), **kw)


@pytest.mark.parametrize("T,expected", [(4, 1), (10, 2), (20, 3), (30, 4), (50, 8), (70, 10), (200, 20)])
def test_bert_predictions_fixed_count_round_half_to_even(T, expected):
    """min(20, max(1, round(T·0.15))): 10 -> round(1.5) = 2, 30 -> round(4.5) = 4, 50 -> round(7.5) = 8."""
    assert expected == min(20, max(1, round(T * 0.15)))
    ids = np.concatenate([[CLS], np.arange(T - 2) % 40 + 4, [SEP]])
    for seed in range(5):
        p = _pred(ids, seed)
        k = int(p.weights.sum())
        assert k == expected
        assert p.positions.shape == p.label_ids.shape == p.weights.shape == (20,)
        real = p.positions[:k]
        assert np.all(np.diff(real) > 0), "positions sorted, distinct"
        assert not np.isin(real, [0, T - 1]).any(), "[CLS]/[SEP] are never predicted"
        assert np.array_equal(p.label_ids[:k], ids[real])
        assert np.all(p.positions[k:] == 0) and np.all(p.label_ids[k:] == 0) and np.all(p.weights[k:] == 0)
        assert p.weights.dtype == np.float32
        changed = np.flatnonzero(p.input_ids != ids)
        assert np.isin(changed, real).all()


def test_bert_predictions_all_special_or_empty_predict_nothing():
    for ids in ([CLS, SEP], [CLS, SEP, SEP], []):
        p = _pred(ids)
        assert p.weights.sum() == 0 and np.all(p.positions == 0)
        assert np.array_equal(p.input_ids, np.asarray(ids, dtype=np.int64))
        assert np.all(corruption.predictions_to_labels(p) == -100)


def test_bert_predictions_80_10_10_and_labels():
    ids = np.concatenate([[CLS], np.full(130, 20), [SEP]])          # 132 tokens -> 20 predictions
    mask = same = other = 0
    for seed in range(600):                                           # 12,000 predictions
        p = _pred(ids, seed)
        got = p.input_ids[p.positions]
        mask += int((got == MASK).sum())
        same += int((got == 20).sum())
        other += int(((got != MASK) & (got != 20)).sum())
        labels = corruption.predictions_to_labels(p)
        assert np.array_equal(np.flatnonzero(labels != -100), p.positions)
    n = mask + same + other
    for hits, pr in ((mask, 0.8 + 0.1 / 50), (same, 0.1 + 0.1 / 50), (other, 0.1 * (1 - 2 / 50))):
        assert abs(hits / n - pr) < 4 * np.sqrt(pr * (1 - pr) / n)


def test_bert_predictions_with_word_groups():
    tokens = ["[CLS]"] + ["new", "york", "##er", "un", "##aff", "##able", "x"] * 4 + ["[SEP]"]
    ids = np.arange(len(tokens)) + 4
    groups = corruption.word_groups(tokens)
    for seed in range(50):
        p = _pred(ids, seed, groups=groups)
        chosen = set(p.positions[p.weights > 0].tolist())
        assert len(chosen) <= 4                                       # round(30·0.15) = round(4.5) = 4
        for g in groups:
            assert len(chosen.intersection(g)) in (0, len(g))


def test_bert_predictions_errors():
    with pytest.raises(TokenizerError, match="50"):
        _pred([CLS, 50, SEP])
    with pytest.raises(ShapeError):
        _pred(np.zeros((2, 3), dtype=int))
    with pytest.raises(ConfigError):
        _pred([CLS, 5, SEP], prob=2.0)
    with pytest.raises(ConfigError):
        _pred([CLS, 5, SEP], max_predictions=-1)
    with pytest.raises(ShapeError):
        _pred([CLS, 5, SEP], groups=[[1], [7]])


# ---------------------------------------------------------------- whole-word masking

def test_mask_tokens_wwm_masks_whole_words_and_skips_specials():
    tokens = ["[CLS]", "un", "##aff", "##able", "cat", "sat", "[SEP]", "[PAD]", "[PAD]"]
    ids = np.array([CLS, 10, 11, 12, 13, 14, SEP, PAD, PAD])
    rng = np.random.default_rng(0)
    for _ in range(200):
        inputs, labels = corruption.mask_tokens_wwm(ids, tokens, mask_id=MASK, vocab_size=50, rng=rng,
                                                    prob=0.5, special_ids=SPECIAL)
        chosen = set(np.flatnonzero(labels != -100).tolist())
        assert len(chosen.intersection({1, 2, 3})) in (0, 3)
        assert not chosen.intersection({0, 6, 7, 8})
        assert np.array_equal(labels[sorted(chosen)], ids[sorted(chosen)])
        assert np.array_equal(inputs[labels == -100], ids[labels == -100])
    batch = np.stack([ids, ids])
    inputs, labels = corruption.mask_tokens_wwm(batch, [tokens, tokens], mask_id=MASK, vocab_size=50, rng=rng)
    assert inputs.shape == labels.shape == batch.shape
    with pytest.raises(ShapeError):
        corruption.mask_tokens_wwm(ids, tokens[:-1], mask_id=MASK, vocab_size=50, rng=rng)
    with pytest.raises(ShapeError):
        corruption.mask_tokens_wwm(batch, [tokens], mask_id=MASK, vocab_size=50, rng=rng)


def test_whole_word_mask_edge_cases_and_errors():
    rng = np.random.default_rng(0)
    assert corruption.bert_whole_word_mask([], rng=rng) == []
    assert corruption.bert_whole_word_mask(["[CLS]", "[SEP]"], rng=rng) == []
    with pytest.raises(ConfigError):
        corruption.bert_whole_word_mask(["a"], rng=rng, prob=1.5)
    with pytest.raises(ConfigError):
        corruption.bert_whole_word_mask(["a"], rng=rng, max_predictions=-2)


def test_bert_whole_word_mask_runs_the_task_12_2_slots():
    """The words are Task 12.2's word_groups, the choice its choose_groups: no copy in the library."""
    from autograd import tasks
    tokens = ["[CLS]", "un", "##aff", "##able", "cat", "sat", "[SEP]"]
    with tasks.trace() as seen:
        chosen = corruption.bert_whole_word_mask(tokens, rng=np.random.default_rng(0), prob=0.5)
    assert {("task12_beyond.wwm", "word_groups"), ("task12_beyond.wwm", "choose_groups")} <= seen
    assert chosen == sorted(chosen) and chosen, f"sorted positions expected, got {chosen}"


# ---------------------------------------------------------------- RoBERTa

def _roberta(ids, rng, **kw):
    return corruption.roberta_mask(ids, mask_id=4, vocab_size=50, nspecial=5, rng=rng, **kw)


def test_roberta_mask_edge_cases_and_labels():
    rng = np.random.default_rng(0)
    inputs, targets = _roberta([], rng)
    assert inputs.shape == targets.shape == (0,)
    ids = np.arange(5, 45)
    inputs, targets = _roberta(ids, rng, prob=0.0)
    assert np.array_equal(inputs, ids) and np.all(targets == 1)
    inputs, targets = _roberta(ids, rng, prob=1.0, leave_unmasked_prob=0.0, random_token_prob=0.0)
    assert np.all(inputs == 4) and np.array_equal(targets, ids)
    labels = corruption.targets_to_labels(np.array([1, 7, 1, 9]), pad_id=1)
    assert labels.tolist() == [-100, 7, -100, 9]


def test_roberta_mask_is_the_plan_then_its_application():
    """roberta_mask = Task 6.1's mask_plan over the T positions, then apply_mask_plan, on one rng in
    that order; and over many draws the share of masked tokens is prob (fairseq's rate)."""
    from autograd import tasks
    ids = np.arange(5, 45)
    with tasks.trace() as seen:
        got = _roberta(ids, np.random.default_rng(3), prob=0.3)
    assert {("task06_roberta.masking", "mask_plan"), ("task06_roberta.masking", "apply_mask_plan")} <= seen
    rng = np.random.default_rng(3)
    plan = corruption.mask_plan(ids.size, rng=rng, prob=0.3)
    want = corruption.apply_mask_plan(ids, plan, mask_id=4, vocab_size=50, nspecial=5, rng=rng)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    rng = np.random.default_rng(4)
    share = np.mean([(_roberta(ids, rng)[1] != 1).mean() for _ in range(2000)])
    assert abs(share - 0.15) < 0.005, f"masked share {share:.4f}, expected prob = 0.15"


def test_roberta_mask_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(TokenizerError, match="50"):
        _roberta([5, 50], rng)
    with pytest.raises(TokenizerError, match="-3"):
        _roberta([5, -3], rng)
    with pytest.raises(ShapeError):
        _roberta(np.ones((2, 3), dtype=int) * 5, rng)
    with pytest.raises(ConfigError):
        _roberta([5, 6], rng, prob=1.2)
    with pytest.raises(ConfigError):
        _roberta([5, 6], rng, leave_unmasked_prob=0.6, random_token_prob=0.6)
    with pytest.raises(ConfigError):
        corruption.roberta_mask([4], mask_id=4, vocab_size=5, nspecial=5, rng=rng)


def test_masked_dataset_and_dynamic_rng_through_the_library():
    masker = functools.partial(corruption.roberta_mask, mask_id=4, vocab_size=50, nspecial=5)
    seqs = [np.arange(5, 45), np.arange(5, 25)]
    dyn = corruption.MaskedDataset(seqs, masker, seed=0)
    assert len(dyn) == 2
    a, b = dyn.get(1, 3), dyn.get(1, 3)
    assert np.array_equal(a[0], b[0]) and a[0].shape == (20,)
    assert any(not np.array_equal(dyn.get(0, 0)[1], dyn.get(0, e)[1]) for e in range(1, 4))
    sta = corruption.MaskedDataset(seqs, masker, seed=0, dynamic=False, static_copies=2)
    assert np.array_equal(sta.get(0, 1)[1], sta.get(0, 5)[1])
    with pytest.raises(MiniLMError):
        dyn.get(2, 0)
    with pytest.raises(ConfigError):
        dyn.get(0, -1)
    with pytest.raises(ConfigError):
        corruption.MaskedDataset(seqs, masker, seed=0, static_copies=0)
    with pytest.raises(ConfigError):
        corruption.dynamic_mask_rng(-1, 0, 0)
    g1, g2 = corruption.dynamic_mask_rng(1, 2, 3), corruption.dynamic_mask_rng(1, 2, 3)
    assert g1.integers(0, 10**9) == g2.integers(0, 10**9)


# ---------------------------------------------------------------- ELECTRA

def test_electra_pipeline_mask_sample_corrupt_label():
    rng = np.random.default_rng(0)
    ids = np.concatenate([np.full((64, 1), CLS), rng.integers(4, 30, size=(64, 30)), np.full((64, 1), SEP),
                          np.full((64, 4), PAD)], axis=1)             # (B, T) = (64, 36)
    inputs, masked, labels = corruption.electra_mask(ids, mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD,
                                                     rng=rng)
    logits = rng.normal(size=ids.shape + (30,))                        # a stand-in generator, (B, T, V)
    logits[..., :] += 3.0 * (np.arange(30) == ids[..., None])          # that often guesses right
    samples = corruption.sample_from_logits(logits, rng=rng)
    corrupted = corruption.electra_corrupt(ids, masked, samples)
    assert np.array_equal(corrupted[~masked], ids[~masked])
    assert np.array_equal(corrupted[masked], samples[masked])
    assert np.array_equal(corruption.electra_corrupt(ids, masked, samples[masked]), corrupted)
    rtd = corruption.replaced_token_labels(ids, corrupted, masked)
    assert np.array_equal(rtd.astype(bool), masked & (corrupted != ids))
    assert 0 < rtd.sum() < masked.sum(), "some samples equal the original and are labelled 0"
    assert np.array_equal(labels[masked], ids[masked])


def test_electra_edge_cases_and_errors():
    rng = np.random.default_rng(0)
    kw = dict(mask_id=MASK, special_ids=(CLS, SEP), pad_id=PAD, rng=rng)
    ids = np.array([[CLS, SEP, PAD], [CLS, MASK, SEP]])
    inputs, masked, labels = corruption.electra_mask(ids, **kw)
    assert not masked.any() and np.array_equal(inputs, ids) and np.all(labels == -100)
    inputs, masked, labels = corruption.electra_mask(np.zeros(0, dtype=int), **kw)
    assert inputs.shape == masked.shape == labels.shape == (0,)
    with pytest.raises(TokenizerError):
        corruption.electra_mask([CLS, -4, SEP], **kw)
    with pytest.raises(ConfigError):
        corruption.electra_mask([CLS, 5, SEP], mask_prob=1.5, **kw)
    with pytest.raises(ConfigError):
        corruption.electra_mask([CLS, 5, SEP], max_predictions=0, **kw)
    with pytest.raises(ShapeError):
        corruption.electra_mask(np.ones((2, 2, 2), dtype=int) * 5, **kw)
    with pytest.raises(ConfigError):
        corruption.sample_from_logits(np.zeros((2, 5)), rng=rng, temperature=0.0)
    with pytest.raises(ShapeError):
        corruption.sample_from_logits(np.zeros((2, 5)), rng=rng, disallow_ids=np.zeros(3, dtype=int))
    with pytest.raises(ShapeError):
        corruption.replaced_token_labels(np.zeros(3), np.zeros(3), np.zeros(2, dtype=bool))
    with pytest.raises(ShapeError):
        corruption.electra_corrupt(np.zeros(4, dtype=int), np.ones(4, dtype=bool), np.zeros(3, dtype=int))


def test_bert_recipe_whole_word_mask_never_splits_a_word():
    """minilm train bert --whole-word-mask: every masked ## piece has its whole word masked."""
    from minilm.recipes.bert import BertRecipe, BertRecipeConfig
    from minilm.recipes.config import override
    cfg = override(BertRecipeConfig(), seed=0, corpus=None, docs=30, max_seq_length=24, n_layer=1, n_head=2,
                   n_embd=16, batch_size=16, vocab_size=120, dropout=0.0, dupe_factor=1, whole_word_mask=True)
    recipe = BertRecipe(cfg)
    tok = recipe.tokenizer
    for step in range(5):
        batch = recipe.batch(np.random.default_rng(step))
        chosen = batch["mlm_labels"] != -100
        assert chosen.any()
        for row, labels, inputs in zip(chosen, batch["mlm_labels"], batch["input_ids"]):
            for t in range(1, len(row)):
                # truncate_seq_pair may cut a word, leaving a ## piece right after [CLS]/[SEP]: its own group
                if not row[t] or inputs[t - 1] in (tok.cls_id, tok.sep_id):
                    continue
                if tok.id_to_token(int(labels[t])).startswith("##"):
                    assert row[t - 1], "a continuation piece was masked without the piece before it"
