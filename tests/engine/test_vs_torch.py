"""The engine against PyTorch: random expression graphs, optimiser steps and illegal inputs.

Hypothesis draws a program — a first leaf shape and up to seven ops from ``torch_twin.OPS``
(broadcasting binaries, reuse of a node, integer and boolean indexing, gather, masked_fill,
batched matmul, reductions, movement, the functional losses, ...) — and runs it in the engine and
in PyTorch. Checked for every node: the value and the dtype; for every leaf: the gradient of
Σ ⟨node, Gₙ⟩ with a random Gₙ per node (a random upstream gradient everywhere, so no gradient can
vanish into a plain ``.sum()``). float64 on both kernel backends; float32 must stay float32.

Skipped without PyTorch (the default ``pytest`` needs none); ``.ci/run`` installs it
(``pip install torch==2.13.0``). Derandomized: every run draws the same examples.
Intended differences from PyTorch are in docs/engine.md and are not drawn here.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import autograd.functional as F  # noqa: E402
from autograd import IndexOutOfRangeError, MiniLMError, ShapeError, Tensor, optim  # noqa: E402
from autograd.kernels import use_backend  # noqa: E402

from . import torch_twin as tw  # noqa: E402

torch.set_num_threads(1)


def _settings(n):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _numpy(x):
    return None if x is None else (x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x))


def _close(what, got, want, dtype, program):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    rtol = 1e-6 if dtype == np.float64 else 2e-3
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    if got.shape != want.shape:
        pytest.fail(f"{what}: shape {got.shape}, PyTorch {want.shape}\nprogram:\n{program}")
    bad = ~np.isclose(got, want, rtol=rtol, atol=rtol * scale, equal_nan=True)
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        pytest.fail(f"{what}: {bad.sum()} of {bad.size} entries differ, e.g. at {i}: engine "
                    f"{float(got[i])!r}, PyTorch {float(want[i])!r}\nprogram:\n{program}")


def run_program(data, dtype):
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label="seed")
    shape = tuple(data.draw(st.lists(st.integers(1, 4), max_size=3), label="first leaf"))
    ops = data.draw(st.lists(st.sampled_from(sorted(tw.OPS)), min_size=1, max_size=7), label="ops")
    g = tw.Graph(np.random.default_rng(seed), dtype)
    g.leaf(shape)
    for name in ops:
        tw.OPS[name](g)
    program = g.program()
    for node in g.pool:  # forward: value and dtype of every node
        want_dtype = tw.TORCH_DTYPE.get(node.e.dtype)
        if want_dtype != node.t.dtype:
            pytest.fail(f"{node.code}: engine dtype {node.e.dtype}, PyTorch {node.t.dtype}\nprogram:\n{program}")
        _close(node.code, node.e.data, _numpy(node.t), dtype, program)
    upstream = [g.rng.standard_normal(n.e.shape).astype(dtype) for n in g.pool]
    loss_e = sum((n.e * u).sum() for n, u in zip(g.pool, upstream))
    loss_t = sum((n.t * torch.tensor(u)).sum() for n, u in zip(g.pool, upstream))
    loss_e.backward()
    loss_t.backward()
    for leaf in g.leaves:  # backward: every leaf's gradient, in the leaf's dtype
        ge, gt = leaf.e.grad, _numpy(leaf.t.grad)
        ge = np.zeros(leaf.e.shape, dtype) if ge is None else ge
        gt = np.zeros(leaf.e.shape, dtype) if gt is None else gt
        if ge.dtype != dtype:
            pytest.fail(f"gradient of {leaf.code}: dtype {ge.dtype}, expected {np.dtype(dtype)}\nprogram:\n{program}")
        _close(f"gradient of {leaf.code}", ge, gt, dtype, program)


@pytest.mark.parametrize("backend,examples", [("numba", 400), ("numpy", 150)])
def test_random_graphs_float64_values_and_gradients_match_torch(backend, examples):
    @_settings(examples)
    @given(data=st.data())
    def check(data):
        with use_backend(backend):
            run_program(data, np.float64)
    check()


@_settings(200)
@given(data=st.data())
def test_random_graphs_float32_stay_float32_and_match_torch(data):
    run_program(data, np.float32)


# ---- optimisers -------------------------------------------------------------------------------------
@_settings(120)
@given(kind=st.sampled_from(["sgd", "adam", "adamw"]), lr=st.sampled_from([1e-3, 0.05, 0.3]),
       momentum=st.sampled_from([0.0, 0.9]), wd=st.sampled_from([0.0, 0.01, 0.1]),
       beta2=st.sampled_from([0.9, 0.999]), steps=st.integers(1, 4), dtype=st.sampled_from([np.float64, np.float32]),
       shapes=st.lists(st.lists(st.integers(1, 3), max_size=2), min_size=1, max_size=3), seed=st.integers(0, 999))
def test_optimiser_steps_match_torch_optim(kind, lr, momentum, wd, beta2, steps, dtype, shapes, seed):
    rng = np.random.default_rng(seed)
    start = [rng.standard_normal(tuple(s)).astype(dtype) for s in shapes]  # [] is a 0-d parameter
    ours = [Tensor(x.copy(), requires_grad=True) for x in start]
    theirs = [torch.tensor(x, requires_grad=True) for x in start]
    if kind == "sgd":
        opt_e = optim.SGD(ours, lr=lr, momentum=momentum, weight_decay=wd)
        opt_t = torch.optim.SGD(theirs, lr=lr, momentum=momentum, weight_decay=wd)
    else:
        cls_e, cls_t = (optim.Adam, torch.optim.Adam) if kind == "adam" else (optim.AdamW, torch.optim.AdamW)
        opt_e = cls_e(ours, lr=lr, betas=(0.9, beta2), eps=1e-8, weight_decay=wd)
        opt_t = cls_t(theirs, lr=lr, betas=(0.9, beta2), eps=1e-8, weight_decay=wd)
    for step in range(steps):
        for pe, pt in zip(ours, theirs):
            grad = rng.standard_normal(pe.shape).astype(dtype)
            pe.grad, pt.grad = grad, torch.tensor(grad)
        opt_e.step()
        opt_t.step()
        for i, (pe, pt) in enumerate(zip(ours, theirs)):
            assert pe.dtype == dtype, f"{kind}: parameter {i} became {pe.dtype}"
            _close(f"{kind}(lr={lr}, momentum={momentum}, weight_decay={wd}) step {step + 1}, parameter {i} "
                   f"of shape {pe.shape}", pe.data, pt.detach().numpy(), dtype, "")


# ---- illegal inputs: PyTorch refuses them, and the engine raises its named error ----------------------
def _torch_refuses(fn):
    try:
        fn()
    except (RuntimeError, IndexError, ValueError, TypeError):
        return True
    return False


def _engine_outcome(fn, error):
    """The engine's value, or None after raising ``error`` (any other exception fails the test)."""
    try:
        return fn()
    except error:
        return None


shape_st = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@_settings(300)
@given(case=st.sampled_from(["broadcast", "matmul", "index", "reduce", "permute", "transpose", "gather",
                             "targets", "reshape", "layer_norm"]),
       a=shape_st, b=shape_st, i=st.integers(-6, 6), j=st.integers(-6, 6), seed=st.integers(0, 999))
def test_illegal_inputs_raise_the_named_error(case, a, b, i, j, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(a), rng.standard_normal(b)
    tx, ty = torch.tensor(x), torch.tensor(y)
    error = ShapeError
    if case == "broadcast":
        ours, theirs = (lambda: (Tensor(x) * Tensor(y)).data), (lambda: tx * ty)
    elif case == "matmul":
        x, y = rng.standard_normal(a + (i % 3 + 1,)), rng.standard_normal(b + (j % 3 + 1,))
        ours, theirs = (lambda: (Tensor(x) @ Tensor(y)).data), (lambda: torch.tensor(x) @ torch.tensor(y))
    elif case == "index":
        error = IndexOutOfRangeError
        ours, theirs = (lambda: Tensor(x)[i].data), (lambda: tx[i])
    elif case == "reduce":
        axes = (i, j) if seed % 2 else i
        ours, theirs = (lambda: Tensor(x).sum(axis=axes).data), (lambda: tx.sum(dim=axes))
    elif case == "permute":
        perm = tuple(rng.integers(-4, 4, size=len(a)))
        ours, theirs = (lambda: Tensor(x).permute(*perm).data), (lambda: tx.permute(*perm))
    elif case == "transpose":
        x = rng.standard_normal(a + (2,))  # never 2-D transpose(i, j): that one differs on purpose
        ours, theirs = (lambda: Tensor(x).transpose(i, j).data), (lambda: torch.tensor(x).transpose(i, j))
    elif case == "gather":
        index = rng.integers(-1, 5, size=b[:len(a)] + a[len(b):])
        ours, theirs = (lambda: Tensor(x).gather(i, index).data), (lambda: torch.gather(tx, i, torch.tensor(index)))
    elif case == "targets":
        b = a[:-1] if seed % 2 else b  # half the time the right shape, with ids maybe out of range
        logits, target = rng.standard_normal(a), rng.integers(-1, 5, size=b)
        ours = lambda: F.cross_entropy(Tensor(logits), target).data  # noqa: E731
        theirs = lambda: torch.nn.functional.cross_entropy(  # noqa: E731
            torch.tensor(logits).reshape(-1, a[-1]) if len(a) > 1 else torch.tensor(logits),
            torch.tensor(target).reshape(-1) if len(b) > 1 or len(a) > 1 else torch.tensor(target))
        if len(a) > 1 and b != a[:-1]:  # PyTorch's flattened view would accept some wrong shapes
            theirs = lambda: (_ for _ in ()).throw(ValueError("shape"))  # noqa: E731
    elif case == "reshape":
        new = b + (-1,) if seed % 3 == 0 else b
        ours, theirs = (lambda: Tensor(x).reshape(*new).data), (lambda: tx.reshape(*new))
    else:  # layer_norm over trailing axes b
        ours = lambda: F.layer_norm(Tensor(x), normalized_shape=b).data  # noqa: E731
        theirs = lambda: torch.nn.functional.layer_norm(tx, b)  # noqa: E731
    refused = _torch_refuses(theirs)
    got = _engine_outcome(ours, error)
    if refused:
        assert got is None, f"{case}: PyTorch refuses {a}, {b}, i={i}, j={j}; the engine returned {got!r}"
    else:
        assert got is not None, f"{case}: PyTorch accepts {a}, {b}, i={i}, j={j}; the engine raised"
        np.testing.assert_allclose(got, theirs().numpy(), rtol=1e-7, err_msg=case)
    if case == "index" and got is None:
        with pytest.raises(IndexError):  # Python's protocol error too, so iteration stops
            Tensor(x)[i]
        with pytest.raises(MiniLMError):
            Tensor(x)[i]
