"""``minilm bench`` at toy sizes (every part runs, the JSON has its keys) — never a timing assertion —
and the engine's fast paths that the benchmark relies on, each against its composed twin.

Speed is measured by ``minilm bench``, not here: these tests check only that the code runs and
that every fast path computes what its readable twin computes.
"""
import json
import math

import numpy as np
import pytest

import autograd.functional as F
from autograd import Tensor, fused, gradcheck, kernels, nn
from autograd.errors import ConfigError, ShapeError
from autograd.kernels import attention as attention_kernels
from autograd.kernels import fastmath, runtime
from autograd.kernels.matmul import matmul_blocked
from minilm import cli
from minilm.bench import BenchConfig, report, run, workloads

R = np.random.default_rng(3)


def randn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


# ---- the benchmark at toy sizes ------------------------------------------------------------------------
def test_quick_bench_runs_every_in_process_part():
    result = run(BenchConfig.quick(), log=lambda msg: None)
    gpt = result["gpt_mini"]
    assert gpt["ms_per_step"] > 0 and gpt["tokens_per_s"] > 0 and gpt["tokens_per_step"] == workloads.TINY.tokens
    assert result["bert_mini"].get("ms_per_step", 0) > 0 or "error" in result["bert_mini"]
    kern = result["kernels"]
    assert {r["shape"] for r in kern["matmul"]} == {"16x16x16", "32x32x32", "4 x 8x4x8"}
    for name in ("scaled_masked_softmax", "layer_norm", "gelu", "softmax_cross_entropy", "embedding_backward"):
        assert kern[name]["numba_ms"] > 0 and kern[name]["numpy_ms"] > 0 and kern[name]["default"] in ("numba", "numpy")
    names = [t["name"] for t in result["targets"]]
    assert names == [t[0] for t in report.TARGETS]
    assert all(t["met"] is None for t in result["targets"] if t["value"] is None)
    table = report.format_table(result)
    assert "gpt_mini" in table and "Targets" in table and "machine:" in table


def test_cli_json_prints_one_object_with_ms_per_step(capsys):
    assert cli.main(["bench", "--quick", "--json", "--only", "gpt"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out)  # exactly one JSON object on stdout
    assert result["gpt_mini"]["ms_per_step"] > 0
    assert result["command"] == "minilm bench --quick --json --only gpt"
    assert "kernels" not in result


def test_cli_rejects_unknown_parts(capsys):
    assert cli.main(["bench", "--quick", "--only", "gpt,warp-drive"]) == 1
    assert "warp-drive" in capsys.readouterr().err


@pytest.mark.slow  # importing torch takes 5-15 s
def test_vs_torch_twin_starts_from_our_weights():
    pytest.importorskip("torch")
    result = run(BenchConfig.quick(parts=("gpt",), vs_torch=True), log=lambda msg: None)
    gpt = result["gpt_mini"]
    assert gpt["torch_ms_per_step"] > 0 and gpt["ratio"] == pytest.approx(gpt["ms_per_step"] / gpt["torch_ms_per_step"])
    assert gpt["first_loss"] == pytest.approx(gpt["torch_first_loss"], rel=1e-5)  # the same function


def test_probe_reports_start_up_and_memory():
    from minilm.bench.probe import run_probe
    r = run_probe("minilm", sizes=workloads.TINY, steps=2)
    assert "error" not in r, r.get("error")
    assert r["seconds_to_first_step"] > 0 and r["peak_mb"] >= r["baseline_mb"] > 0


# ---- the fast paths, each against its twin ---------------------------------------------------------------
def test_fused_linear_matches_composed_twin():
    lin = nn.Linear(5, 3, rng=R, dtype=np.float64)
    x = Tensor(randn(2, 4, 5), requires_grad=True)
    g = randn(2, 4, 3)
    y = lin(x)
    assert y._ctx.function is fused.Linear
    y.backward(g)
    fused_grads = [x.grad, lin.weight.grad, lin.bias.grad]
    x.grad = lin.weight.grad = lin.bias.grad = None
    twin = x @ lin.weight.T + lin.bias
    twin.backward(g)
    np.testing.assert_allclose(y.data, twin.data, rtol=1e-12)
    for a, b in zip(fused_grads, [x.grad, lin.weight.grad, lin.bias.grad]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert gradcheck(lambda a, w, b: fused.Linear.apply(a, w, b), x, lin.weight, lin.bias)


def test_fused_linear_keeps_dtype_rules_and_checks_shapes():
    x, w = randn(3, 4, dtype=np.float32), randn(2, 4, dtype=np.float32)
    wide = fused.Linear.apply(Tensor(x), Tensor(w), Tensor(randn(2)))  # a float64 bias widens y
    assert wide.dtype == np.float64
    assert fused.Linear.apply(Tensor(x), Tensor(w), Tensor(randn(2, dtype=np.float32))).dtype == np.float32
    with pytest.raises(ShapeError, match="linear"):
        fused.Linear.apply(Tensor(x), Tensor(w), Tensor(randn(3)))
    no_bias = nn.Linear(4, 2, bias=False, rng=R)
    assert no_bias(Tensor(x)).shape == (3, 2)


def test_matmul_folds_leading_axes_forward_and_backward():
    a, b = Tensor(randn(2, 3, 4), requires_grad=True), Tensor(randn(4, 5), requires_grad=True)
    g = randn(2, 3, 5)
    (a @ b).backward(g)
    np.testing.assert_allclose(a.grad, g @ b.data.T, rtol=1e-12)
    np.testing.assert_allclose(b.grad, np.einsum("btk,btn->kn", a.data, g), rtol=1e-12)
    # a 2-D left operand against a batch is not folded: its gradient sums over the batch
    a2, b3 = Tensor(randn(3, 4), requires_grad=True), Tensor(randn(2, 4, 5), requires_grad=True)
    g3 = randn(2, 3, 5)
    (a2 @ b3).backward(g3)
    np.testing.assert_allclose(a2.grad, (g3 @ b3.data.transpose(0, 2, 1)).sum(0), rtol=1e-12)
    np.testing.assert_allclose(b3.grad, a2.data.T @ g3, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_engine_attention_kernel_matches_the_reference(dtype):
    s = randn(2, 3, 5, 7, dtype=dtype) * 4
    mask = R.random((2, 1, 5, 7)) < 0.6
    mask[0, 0, 1] = False  # a fully masked row
    p = attention_kernels.scaled_masked_softmax_forward_numba(s, mask, 0.3)
    ref = attention_kernels.scaled_masked_softmax_forward_numpy(s.astype(np.float64), mask, 0.3)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-15)
    assert p.dtype == dtype
    np.testing.assert_allclose(p, ref, **tol)
    assert (p[0, :, 1] == 0).all() and (p[~np.broadcast_to(mask, s.shape)] == 0).all()
    g = randn(2, 3, 5, 7, dtype=dtype)
    np.testing.assert_allclose(attention_kernels.scaled_masked_softmax_backward_numba(g, p, 0.3),
                               attention_kernels.scaled_masked_softmax_backward_numpy(g, p, 0.3), **tol)


def test_student_kernels_runs_the_task_kernel_for_attention(monkeypatch):
    calls = []
    monkeypatch.setattr(kernels.STUDENT_KERNELS, "scaled_masked_softmax_forward",
                        lambda *a: calls.append("task") or attention_kernels.scaled_masked_softmax_forward_numpy(*a))
    s = randn(2, 4, 4)
    with kernels.use_backend("numba", student_kernels=True):
        kernels.scaled_masked_softmax_forward(s, None, 1.0)
    with kernels.use_backend("numba"):
        kernels.scaled_masked_softmax_forward(s, None, 1.0)
    assert calls == ["task"]


def test_exp_approx_is_within_float32_rounding():
    z = np.linspace(-87.0, 87.0, 2001)
    got = np.array([fastmath.exp_approx(v) for v in z])
    np.testing.assert_allclose(got, np.exp(z), rtol=1e-8)
    assert math.isnan(fastmath.exp_approx(float("nan")))
    assert 0 < fastmath.exp_approx(-1e4) < 1e-37 and fastmath.exp_approx(1e4) < 1e39


def test_row_helpers_match_numpy():
    a, b = randn(3, 37), randn(3, 37)
    for r in range(3):
        assert fastmath.row_sum(a, r) == pytest.approx(a[r].sum(), rel=1e-12)
        assert fastmath.row_dot(a, b, r) == pytest.approx(a[r] @ b[r], rel=1e-12)
        assert fastmath.row_max(a, r) == a[r].max()
        assert fastmath.row_sum_sq_dev(a, r, 0.5) == pytest.approx(((a[r] - 0.5) ** 2).sum(), rel=1e-12)


@pytest.mark.parametrize("shapes", [((1, 1), (1, 1)), ((37, 70), (70, 33)), ((3, 7, 13), (13, 5)),
                                    ((2, 1, 4, 6), (3, 6, 9)), ((4, 0), (0, 3)), ((0, 5), (5, 2))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_matmul_matches_numpy(shapes, dtype):
    a, b = randn(*shapes[0], dtype=dtype), randn(*shapes[1], dtype=dtype)
    out = matmul_blocked(a, b)
    assert out.dtype == dtype and out.shape == np.matmul(a, b).shape
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, np.matmul(a.astype(np.float64), b.astype(np.float64)), **tol)


def test_where_and_mul_by_a_constant_still_give_the_right_gradients():
    x = Tensor(randn(3, 4), requires_grad=True)
    mask = R.random((3, 4)) < 0.5
    y = (x * 0.5).masked_fill(mask, -3.0) / 2.0
    g = randn(3, 4)
    y.backward(g)
    np.testing.assert_allclose(x.grad, np.where(mask, 0.0, g * 0.25), rtol=1e-12)


def test_set_num_threads_sets_both_pools_and_checks_its_argument():
    before = runtime.get_num_threads()
    try:
        runtime.set_num_threads(1)
        now = runtime.get_num_threads()
        assert now["numba"] == 1 and now["blas"] in (1, None)
    finally:
        runtime.set_num_threads(before["numba"])
    with pytest.raises(ConfigError, match="set_num_threads"):
        runtime.set_num_threads(0)


def test_fast_kernels_on_float32_match_composed_twins_in_a_model_step():
    """One float32 GPT step on the fast paths and one on NumPy: the same losses and gradients."""
    losses = []
    for backend in ("numba", "numpy"):
        with kernels.use_backend(backend):
            work = workloads.gpt_mini(workloads.TINY, seed=1)
            losses.append([work.step() for _ in range(3)])
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-4)
    logits = F.softmax(Tensor(randn(2, 5, dtype=np.float32)))
    assert logits.dtype == np.float32
