"""Library tests of XLNet's inputs (minilm.corruption.xlnet): shapes, invariants, edge cases."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd.errors import ConfigError, MiniLMError, ShapeError, TokenizerError
from minilm import corruption

SEP, CLS, PAD = 3, 4, 0


def ranks(order):
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def test_slots_are_bound_to_task_8_1():
    for name in ("sample_factorization_order", "partial_prediction_targets", "permutation_mask",
                 "sample_plm_spans"):
        fn = getattr(corruption, name)
        assert fn.slot_module == "task08_xlnet.permutation" and fn.slot_name == name


def test_xlnet_inputs_single_row():
    rng = np.random.default_rng(0)
    ids = np.array([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, SEP, 21, 22, SEP, CLS])
    keep = ids.copy()
    out = corruption.xlnet_inputs(ids, rng=rng, K=3, functional_ids=(SEP, CLS))
    T = ids.size
    assert np.array_equal(ids, keep)  # not mutated
    assert np.array_equal(out["input_ids"], ids) and out["input_ids"] is not ids
    is_target = out["labels"] != -100
    assert is_target.sum() == round(13 / 3)  # 13 candidates: SEP, SEP, CLS are not
    assert not is_target[np.isin(ids, (SEP, CLS))].any()
    assert np.array_equal(out["inp_q"], is_target.astype(np.float32))
    assert out["perm_mask"].shape == out["content_mask"].shape == (T, T)
    P = out["target_mapping"].shape[0]
    assert out["target_mapping"].shape == (P, T) and P == is_target.sum()
    # one-hot rows, in increasing position, whose labels are the tokens they select
    assert np.array_equal(out["target_mapping"].argmax(1), np.flatnonzero(is_target))
    assert np.array_equal(out["target_mapping"].sum(1), np.ones(P))
    assert np.array_equal(out["target_mapping"] @ ids, out["target_labels"])
    assert np.array_equal(out["target_mask"], np.ones(P, dtype=np.float32))
    # the targets are the tail of the order
    r = ranks(out["order"])
    cand = ~np.isin(ids, (SEP, CLS))
    assert r[is_target].min() > r[cand & ~is_target].max()


def test_xlnet_inputs_batch_pads_target_rows():
    rng = np.random.default_rng(1)
    ids = np.array([[10, 11, 12, 13, 14, 15, 16, 17],
                    [10, 11, 12, PAD, PAD, PAD, PAD, PAD]])
    out = corruption.xlnet_inputs(ids, rng=rng, K=2, special_ids=(PAD,))
    assert out["perm_mask"].shape == (2, 8, 8) and out["labels"].shape == (2, 8)
    assert out["target_mapping"].shape == (2, 4, 8)
    assert np.array_equal(out["target_mask"], [[1, 1, 1, 1], [1, 1, 0, 0]])
    assert np.array_equal(out["target_labels"][1, 2:], [-100, -100])
    assert not out["target_mapping"][1, 2:].any()
    assert (out["labels"][1, 3:] == -100).all()  # padding is never predicted
    out = corruption.xlnet_inputs(ids, rng=rng, K=2, special_ids=(PAD,), num_predict=6)
    assert out["target_mapping"].shape == (2, 6, 8)
    with pytest.raises(ConfigError):
        corruption.xlnet_inputs(ids, rng=rng, K=2, special_ids=(PAD,), num_predict=3)


def test_partial_prediction_rate_is_one_over_K():
    rng = np.random.default_rng(2)
    for K in (6, 4, 2):
        out = corruption.xlnet_inputs(np.arange(10, 10 + 512), rng=rng, K=K)
        assert (out["labels"] != -100).sum() == max(1, round(512 / K))
    out = corruption.xlnet_inputs(np.arange(10, 10 + 512), rng=rng)
    assert (out["labels"] != -100).sum() == 85  # XLNet's num_predict for seq_len 512


@settings(deadline=None, max_examples=60)
@given(T=st.integers(1, 14), K=st.sampled_from([1, 2, 3, 6]), seed=st.integers(0, 2**31),
       n_func=st.integers(0, 3))
def test_xlnet_inputs_invariants(T, K, seed, n_func):
    rng = np.random.default_rng(seed)
    ids = rng.integers(10, 50, size=T)
    ids[rng.permutation(T)[:min(n_func, T)]] = SEP
    out = corruption.xlnet_inputs(ids, rng=rng, K=K, functional_ids=(SEP,))
    pm, cm, r = out["perm_mask"], out["content_mask"], ranks(out["order"])
    tgt = out["labels"] != -100
    fun = ids == SEP
    ctx = ~tgt & ~fun
    assert not pm[:, ctx].any()  # every position sees the plain context
    assert pm[np.ix_(ctx, tgt)].all()  # plain context never depends on a target
    for i in np.flatnonzero(tgt):  # no target sees itself or a later target
        assert pm[i, i]
        assert np.array_equal(pm[i, tgt], r[tgt] >= r[i])
    assert not np.diag(cm).any()  # the content stream sees itself
    assert np.array_equal(cm, pm & ~np.eye(T, dtype=bool))


def test_local_permutation_option():
    rng = np.random.default_rng(3)
    out = corruption.xlnet_inputs(np.arange(10, 22), rng=rng, perm_size=6)
    order = out["order"]
    assert set(order[:6]) == set(range(6)) and set(order[6:]) == set(range(6, 12))


def test_plm_collator_inputs():
    rng = np.random.default_rng(4)
    ids = np.concatenate([[CLS], np.arange(10, 10 + 58), [SEP]])  # T = 60
    keep = ids.copy()
    out = corruption.plm_collator_inputs(ids, rng=rng, mask_id=1, special_ids=(CLS, SEP))
    assert np.array_equal(ids, keep)
    tgt = out["labels"] != -100
    assert tgt.any() and not tgt[[0, -1]].any()
    assert np.array_equal(out["input_ids"][tgt], np.ones(tgt.sum()))
    assert np.array_equal(out["input_ids"][~tgt], ids[~tgt])
    assert np.array_equal(out["labels"][tgt], ids[tgt])
    assert np.array_equal(out["target_mapping"], np.eye(60))
    pm = out["perm_mask"]
    assert np.array_equal(np.diag(pm), tgt)
    assert not pm[:, ~tgt].any()
    # the two halves are ordered one after the other: the first half never sees the second's targets
    assert pm[:30][:, 30:][:, tgt[30:]].all()
    batch = corruption.plm_collator_inputs(np.stack([ids, ids]), rng=rng, mask_id=1)
    assert batch["perm_mask"].shape == (2, 60, 60)
    with pytest.raises(ShapeError):
        corruption.plm_collator_inputs(ids[:-1], rng=rng, mask_id=1)  # odd length


def test_bad_input_is_refused():
    rng = np.random.default_rng(5)
    with pytest.raises(ShapeError):
        corruption.xlnet_inputs(np.array([], dtype=np.int64), rng=rng)
    with pytest.raises(TokenizerError):
        corruption.xlnet_inputs(np.array([5, -1, 6]), rng=rng)
    with pytest.raises(ShapeError):
        corruption.xlnet_inputs(np.zeros((2, 2, 2), dtype=np.int64), rng=rng)
    with pytest.raises(ConfigError):
        corruption.xlnet_inputs(np.arange(5, 12), rng=rng, K=0.5)
    with pytest.raises(ShapeError):
        corruption.xlnet_inputs(np.arange(5, 12), rng=rng, perm_size=3)  # 7 not a multiple of 3
    with pytest.raises(MiniLMError):
        corruption.permutation_mask(np.array([0, 0, 1]), np.zeros(3, dtype=bool))
    with pytest.raises(ConfigError):
        corruption.permutation_mask(np.arange(3), np.array([True, False, False]),
                                    is_functional=np.array([True, False, False]))
    with pytest.raises(ShapeError):
        corruption.permutation_mask(np.arange(3), np.array([1, 0, 0]))  # not bool


def test_length_one_and_two():
    rng = np.random.default_rng(6)
    out = corruption.xlnet_inputs(np.array([7]), rng=rng)
    assert out["labels"].tolist() == [7] and out["perm_mask"].tolist() == [[True]]
    assert out["content_mask"].tolist() == [[False]]
    out = corruption.xlnet_inputs(np.array([7, 8]), rng=rng)
    assert (out["labels"] != -100).sum() == 1
    assert (out["perm_mask"][:, out["labels"] == -100] == 0).all()


def test_same_seed_same_inputs():
    ids = np.arange(10, 40)
    a = corruption.xlnet_inputs(ids, rng=np.random.default_rng(7))
    b = corruption.xlnet_inputs(ids, rng=np.random.default_rng(7))
    assert all(np.array_equal(a[k], b[k]) for k in a)
