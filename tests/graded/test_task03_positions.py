"""Graded tests of Task 3.3: sinusoidal positions, T5's relative position buckets (the check
values of mesh_tensorflow's ``_relative_position_bucket``, both directions), and the token + position + segment embedding sum."""
import math
import warnings

import numpy as np
import pytest

from autograd import Tensor

MOD = "task03_transformer.positions"

# mesh_tensorflow/transformer/transformer_layers.py's buckets, as key − query → bucket (32 buckets, max_distance 128)
BIDIRECTIONAL = {-1: 1, -8: 8, -16: 10, -64: 14, -128: 15, -500: 15, 0: 0,
                 1: 17, 8: 24, 16: 26, 64: 30, 100: 31, 128: 31, 1000: 31}
UNIDIRECTIONAL = {-15: 15, -16: 16, -32: 21, -64: 26, -128: 31, -1000: 31, 0: 0, 1: 0, 7: 0, 300: 0}


@pytest.mark.task3_3
@pytest.mark.points(2)
def test_sinusoidal_positions_follow_vaswani(impl):
    sinusoidal_positions = impl(MOD).sinusoidal_positions
    T, C = 50, 16
    pe = np.asarray(sinusoidal_positions(T, C))
    assert pe.shape == (T, C), f"sinusoidal_positions({T}, {C}) should be ({T}, {C}), got {pe.shape}"
    np.testing.assert_allclose(pe[0], [0, 1] * (C // 2), atol=1e-12,
                               err_msg="PE[0] is sin(0)=0 in even columns and cos(0)=1 in odd ones")
    want = np.empty((T, C))
    for pos in range(T):
        for i in range(C // 2):
            angle = pos / 10000 ** (2 * i / C)
            want[pos, 2 * i] = math.sin(angle)
            want[pos, 2 * i + 1] = math.cos(angle)
    np.testing.assert_allclose(pe, want, rtol=1e-6, atol=1e-7,
        err_msg=("PE[pos, 2i] = sin(pos / 10000^(2i/C)), PE[pos, 2i+1] = cos(same angle): values differ "
                 "(is the exponent 2i/C, and sin/cos interleaved?)"))
    np.testing.assert_allclose(np.linalg.norm(pe, axis=1), math.sqrt(C / 2), rtol=1e-9,
        err_msg=("each row of PE has C/2 (sin, cos) pairs, so its norm must be √(C/2) = √8: a pair uses "
                 "different angles?"))


@pytest.mark.task3_3
@pytest.mark.points(2)
@pytest.mark.parametrize("bidirectional, table", [(True, BIDIRECTIONAL), (False, UNIDIRECTIONAL)],
                         ids=["bidirectional", "unidirectional"])
def test_relative_position_bucket_check_values(impl, bidirectional, table):
    bucket = impl(MOD).relative_position_bucket
    rel = np.array(list(table))
    got = np.asarray(bucket(rel, bidirectional, num_buckets=32, max_distance=128))
    want = np.array(list(table.values()))
    wrong = {int(r): (int(g), int(w)) for r, g, w in zip(rel, got, want) if g != w}
    assert not wrong, f"key − query: (got, expected) = {wrong}"


@pytest.mark.task3_3
@pytest.mark.points(1)
def test_relative_position_bucket_matrix_defaults_and_no_log_of_zero(impl):
    bucket = impl(MOD).relative_position_bucket
    T = 40
    rel = np.arange(T)[None, :] - np.arange(T)[:, None]          # (Tq, Tk): key − query
    with warnings.catch_warnings():
        warnings.simplefilter("error")                             # log(0) warns: take log(max(n, 1))
        enc = np.asarray(bucket(rel, True))
        dec = np.asarray(bucket(rel, False))
    assert enc.shape == dec.shape == (T, T), \
        f"relative_position_bucket on a ({T}, {T}) matrix should keep the shape, got {enc.shape} and {dec.shape}"
    assert np.issubdtype(enc.dtype, np.integer) and np.issubdtype(dec.dtype, np.integer), \
        f"buckets must be integers (usable as indices), got {enc.dtype} and {dec.dtype}"
    assert enc.min() >= 0 and enc.max() < 32 and dec.min() >= 0 and dec.max() < 32, \
        f"buckets must lie in 0..31 (32 buckets), got encoder {enc.min()}..{enc.max()}, decoder {dec.min()}..{dec.max()}"
    assert np.all(np.diag(enc) == 0) and np.all(np.diag(dec) == 0), \
        "distance 0 (a query and its own key) must be bucket 0 in both directions"
    assert np.all(dec[np.triu_indices(T, 1)] == 0), "decoder: every future key is bucket 0"
    assert np.all(enc[np.triu_indices(T, 1)] >= 16), "encoder: future keys use the upper 16 buckets"
    assert np.all(enc[np.tril_indices(T, -1)] < 16), "encoder: past keys use the lower 16 buckets"


@pytest.mark.task3_3
@pytest.mark.points(2)
def test_embed_inputs_adds_token_position_and_segment(impl):
    embed_inputs = impl(MOD).embed_inputs
    rng = np.random.default_rng(0)
    V, P, S, C = 7, 6, 2, 4
    wte = Tensor(rng.standard_normal((V, C)), requires_grad=True)
    wpe = Tensor(rng.standard_normal((P, C)), requires_grad=True)
    wse = Tensor(rng.standard_normal((S, C)), requires_grad=True)
    ids = np.array([[3, 3, 0, 5], [6, 1, 1, 2]])                  # ids differ from their positions
    seg = np.array([[0, 0, 1, 1], [0, 1, 1, 1]])
    x = embed_inputs(ids, wte, wpe)
    want = wte.data[ids] + wpe.data[np.arange(4)]
    np.testing.assert_allclose(x.data, want, rtol=1e-12, err_msg="x[b, t] = wte[ids[b, t]] + wpe[t]")
    x = embed_inputs(ids, wte, wpe, segment_ids=seg, segment_weight=wse)
    np.testing.assert_allclose(x.data, want + wse.data[seg], rtol=1e-12,
                               err_msg="segment embedding: + wse[segment_ids[b, t]]")
    g = rng.standard_normal(x.shape)
    x.backward(g)
    want_gte = np.zeros((V, C))
    np.add.at(want_gte, ids, g)                                     # id 3 and id 1 appear twice
    np.testing.assert_allclose(wte.grad, want_gte, rtol=1e-12,
        err_msg=("wte.grad: ids 3 and 1 appear twice, so their rows must sum both upstream gradients (use "
                 "Tensor indexing, not .data)"))
    want_gpe = np.zeros((P, C))
    want_gpe[:4] = g.sum(axis=0)
    np.testing.assert_allclose(wpe.grad, want_gpe, rtol=1e-12,
        err_msg=("wpe.grad: rows 0..3 get the upstream gradient summed over the batch, rows 4..5 (unused "
                 "positions) get 0"))
    want_gse = np.zeros((S, C))
    np.add.at(want_gse, seg, g)
    np.testing.assert_allclose(wse.grad, want_gse, rtol=1e-12,
        err_msg="wse.grad: each segment row gets the sum of the gradients of the tokens in that segment")
