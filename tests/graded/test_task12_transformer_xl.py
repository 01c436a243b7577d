"""Graded tests of Task 12.3: Transformer-XL's memory (``update_memory``) and relative scores
(``relative_scores``), Dai et al. 2019 §3.2–3.3."""
import numpy as np
import pytest

from autograd import Tensor, gradcheck

MOD = "task12_beyond.transformer_xl"


def _tensor(rng, *shape, grad=False):
    return Tensor(rng.normal(size=shape), requires_grad=grad)


# ---- update_memory ---------------------------------------------------------------------------
@pytest.mark.task12_3
@pytest.mark.points(2)
def test_memory_keeps_the_last_mem_len_steps(impl):
    update_memory = impl(MOD).update_memory
    rng = np.random.default_rng(0)
    prev, hidden = _tensor(rng, 2, 5, 3), _tensor(rng, 2, 4, 3)
    full = np.concatenate([prev.data, hidden.data], axis=1)             # (2, 9, 3)
    for mem_len in (1, 3, 4, 6, 9):
        out = update_memory(prev, hidden, mem_len)
        assert out.shape == (2, mem_len, 3), \
            (f"update_memory(prev (2, 5, 3), hidden (2, 4, 3), mem_len={mem_len}) should be (2, {mem_len}, "
             f"3), got {out.shape}")
        np.testing.assert_array_equal(out.data, full[:, -mem_len:],
            err_msg=(f"mem_len={mem_len}: the memory should be the last {mem_len} steps of [prev, hidden] "
                     "(previous first, the most recent kept)"))       # previous first, most recent kept
    out = update_memory(prev, hidden, 20)                                 # longer than M + T: keep all
    np.testing.assert_array_equal(out.data, full,
        err_msg="mem_len=20 > M + T = 9: keep all 9 steps of [prev, hidden]")
    first = update_memory(None, hidden, 3)                                # the first segment
    np.testing.assert_array_equal(first.data, hidden.data[:, -3:],
        err_msg="the first segment (prev=None): the memory is the last mem_len steps of hidden")
    np.testing.assert_array_equal(prev.data, full[:, :5],
        err_msg="update_memory modified prev in place")                 # inputs untouched


@pytest.mark.task12_3
@pytest.mark.points(1)
def test_memory_of_length_zero_is_empty(impl):
    update_memory = impl(MOD).update_memory
    rng = np.random.default_rng(1)
    prev, hidden = _tensor(rng, 2, 5, 3), _tensor(rng, 2, 4, 3)
    assert update_memory(prev, hidden, 0).shape == (2, 0, 3), \
        "mem_len=0 must give an empty (2, 0, 3) memory — x[:, -0:] keeps everything"              # x[:, -0:] would keep everything
    assert update_memory(None, hidden, 0).shape == (2, 0, 3), \
        "mem_len=0 with prev=None must give an empty (2, 0, 3) memory"


@pytest.mark.task12_3
@pytest.mark.points(3)
def test_no_gradient_flows_into_the_memory(impl):
    update_memory = impl(MOD).update_memory
    rng = np.random.default_rng(2)
    w_prev = _tensor(rng, 3, 3, grad=True)                 # "the previous segment's parameters"
    x = Tensor(rng.normal(size=(2, 4, 3)))
    hidden = (x @ w_prev).tanh()                           # in the graph: (2, 4, 3)
    mem = update_memory(None, hidden, 3)
    assert not mem.requires_grad, "the memory must be detached (stop-gradient, SG in §3.2)"
    w_now = _tensor(rng, 3, 3, grad=True)                  # the current segment's parameters
    loss = ((mem @ w_now) * Tensor(rng.normal(size=(2, 3, 3)))).sum()
    loss.backward()
    assert w_now.grad is not None and np.abs(w_now.grad).sum() > 0, \
        "the current segment's parameters must still get a gradient through the (detached) memory values"   # the current path trains
    assert w_prev.grad is None or not np.any(w_prev.grad), "gradient leaked into the previous segment"
    mem2 = update_memory(mem, hidden, 5)                    # a second update: still detached
    assert not mem2.requires_grad, "a second update_memory must still return a detached memory (requires_grad False)"


# ---- relative_scores ---------------------------------------------------------------------------
def _inputs(rng, B=2, H=3, T=4, M=5, d=6, grad=False):
    K = M + T
    return (_tensor(rng, B, H, T, d, grad=grad), _tensor(rng, B, H, K, d, grad=grad),
            _tensor(rng, H, K, d, grad=grad), _tensor(rng, H, d, grad=grad), _tensor(rng, H, d, grad=grad))


def _loop(q, k, r, u, v):
    """A[i, j] = (q_i + u)·k_j + (q_i + v)·r[M + i − j] on the causal pairs; NaN elsewhere."""
    q, k, r, u, v = (t.data for t in (q, k, r, u, v))
    B, H, T, _ = q.shape
    K = k.shape[2]
    M = K - T  # memory length
    out = np.full((B, H, T, K), np.nan)
    for i in range(T):
        for j in range(M + i + 1):
            out[:, :, i, j] = (((q[:, :, i] + u) * k[:, :, j]).sum(-1)
                               + ((q[:, :, i] + v) * r[:, M + i - j]).sum(-1))
    return out


def _causal(T, K):
    return np.arange(K)[None, :] <= (K - T) + np.arange(T)[:, None]      # (T, K)


@pytest.mark.task12_3
@pytest.mark.points(3)
@pytest.mark.parametrize("T,M", [(4, 5), (3, 0), (1, 6), (6, 2)])
def test_relative_scores_match_the_four_terms(impl, T, M):
    relative_scores = impl(MOD).relative_scores
    args = _inputs(np.random.default_rng(3 + T + M), T=T, M=M)
    out = relative_scores(*args)
    assert out.shape == (2, 3, T, M + T), \
        f"relative_scores with T={T}, M={M} should be (B, H, T, M + T) = {(2, 3, T, M + T)}, got {out.shape}"
    keep = _causal(T, M + T)
    np.testing.assert_allclose(out.data[..., keep], _loop(*args)[..., keep], rtol=1e-10, atol=1e-10,
        err_msg=(f"T={T}, M={M}: scores on the causal pairs should be (q_i + u)·k_j + (q_i + v)·r[M + i − "
                 "j] (the four terms of Dai et al. 2019, §3.3)"))
    assert np.isfinite(out.data).all(), \
        "relative_scores returned NaN/inf (the non-causal pairs must be finite too, e.g. from the shift)"


@pytest.mark.task12_3
@pytest.mark.points(2)
def test_global_biases_u_and_v(impl):
    """q = 0 leaves only (c) + (d): uᵀk_j + vᵀr_{M+i−j}; each bias on its own term."""
    relative_scores = impl(MOD).relative_scores
    rng = np.random.default_rng(4)
    q, k, r, u, v = _inputs(rng)
    zero = Tensor(np.zeros(q.shape))
    keep = _causal(4, 9)
    out = relative_scores(zero, k, r, u, v).data
    np.testing.assert_allclose(out[..., keep], _loop(zero, k, r, u, v)[..., keep], atol=1e-10,
        err_msg=("with q = 0 the scores should be uᵀk_j + vᵀr[M + i − j]: add u to q for the content term "
                 "and v for the position term"))
    only_u = relative_scores(zero, k, r, u, Tensor(np.zeros(v.shape))).data
    expect_u = np.einsum("hd,bhkd->bhk", u.data, k.data)[:, :, None, :]    # (c): the same for every query
    np.testing.assert_allclose(np.broadcast_to(expect_u, only_u.shape)[..., keep], only_u[..., keep], atol=1e-10,
        err_msg="with q = 0 and v = 0 only uᵀk_j remains, the same for every query: u belongs to the content term only")
    only_v = relative_scores(zero, k, r, Tensor(np.zeros(u.shape)), v).data
    assert np.abs(only_v[..., keep]).max() > 1e-3, "the (d) term vᵀ W_{k,R} R_{i−j} is missing"


@pytest.mark.task12_3
@pytest.mark.points(2)
def test_distance_direction(impl):
    """r[m] is for distance m = how far back the key is: key j = M + i − m. A one-hot r at a single
    distance lights exactly the keys at that distance behind each query."""
    relative_scores = impl(MOD).relative_scores
    B, H, T, M, d = 1, 1, 4, 3, 2
    K = M + T
    q = Tensor(np.ones((B, H, T, d)))
    zeros_k, zeros_b = Tensor(np.zeros((B, H, K, d))), Tensor(np.zeros((H, d)))
    keep = _causal(T, K)
    for m in (0, 1, 2, 5):
        r = np.zeros((H, K, d))
        r[0, m, 0] = 1.0
        out = relative_scores(q, zeros_k, Tensor(r), zeros_b, zeros_b).data[0, 0]  # (T, K)
        expect = np.zeros((T, K))
        for i in range(T):
            if M + i - m >= 0:
                expect[i, M + i - m] = 1.0
        np.testing.assert_allclose(out[keep], expect[keep], atol=1e-12, err_msg=f"distance {m}")


@pytest.mark.task12_3
@pytest.mark.points(2)
def test_relative_scores_gradients(impl):
    relative_scores = impl(MOD).relative_scores
    args = _inputs(np.random.default_rng(5), B=1, H=2, T=3, M=2, d=2, grad=True)
    keep = Tensor(np.broadcast_to(_causal(3, 5), (1, 2, 3, 5)).astype(np.float64))
    assert gradcheck(lambda *a: relative_scores(*a) * keep, *args, rng=np.random.default_rng(0)) is True, \
        "the gradients of relative_scores (q, k, r, u, v) differ from finite differences"
    out = relative_scores(*args)
    (out * keep * Tensor(np.random.default_rng(6).normal(size=out.shape))).sum().backward()
    for name, t in zip("qkruv", args):
        assert t.grad is not None and np.abs(t.grad).sum() > 0, f"no gradient reaches {name}"
