"""Graded tests of Task 2.3: the tiled parallel numba matmul
(slot ``matmul_kernel`` in exercises/task02_kernels/matmul.py, reached through ``matmul_numba``)."""
import numpy as np
import pytest

MOD = "task02_kernels.matmul"
R = np.random.default_rng(23)


def randn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def check(mod, a, b):
    out = mod.matmul_numba(a, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert out.shape == want.shape and out.dtype == np.result_type(a, b), \
        (f"matmul_numba {a.shape} @ {b.shape}: expected shape {want.shape} and dtype {np.result_type(a, b)}, "
         f"got {out.shape} {out.dtype}")
    tol = dict(rtol=1e-12, atol=1e-12) if out.dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, want, **tol,
        err_msg=(f"matmul_numba {a.shape} @ {b.shape} ({out.dtype}) differs from a @ b: check the tile edges "
                 "(min(i0 + TILE, M)) and the k loop"))


@pytest.mark.task2_3
@pytest.mark.points(2)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_small_and_non_square(impl, dtype):
    mod = impl(MOD)
    check(mod, randn(1, 1, dtype=dtype), randn(1, 1, dtype=dtype))
    check(mod, randn(7, 13, dtype=dtype), randn(13, 5, dtype=dtype))
    check(mod, randn(2, 9, dtype=dtype), randn(9, 11, dtype=dtype))


@pytest.mark.task2_3
@pytest.mark.points(3)
def test_sizes_that_are_not_multiples_of_the_tile(impl):
    mod = impl(MOD)
    T = mod.TILE
    check(mod, randn(T + 5, 2 * T + 6), randn(2 * T + 6, T + 1))  # M, K, N all cut a tile short
    check(mod, randn(T, T), randn(T, T))  # exactly one tile
    check(mod, randn(2 * T + 1, 3), randn(3, 2 * T - 1))


@pytest.mark.task2_3
@pytest.mark.points(2)
def test_batched_and_broadcast(impl):
    mod = impl(MOD)
    check(mod, randn(3, 7, 13), randn(3, 13, 5))  # batch 3: every entry its own b
    check(mod, randn(3, 7, 13), randn(13, 5))  # one b for all
    check(mod, randn(2, 1, 4, 6), randn(3, 6, 2))  # broadcast batch dims
    check(mod, randn(4, 0), randn(0, 3))  # K = 0: all zeros


@pytest.mark.task2_3
@pytest.mark.points(2)
def test_kernel_writes_every_entry_of_an_uninitialised_out(impl):
    mod = impl(MOD)
    a, b = randn(2, 37, 19), randn(2, 19, 45)
    out = np.full((2, 37, 45), np.nan)  # np.empty may hold anything: the kernel must not add into it
    mod._matmul_kernel(out, a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12,
        err_msg=("_matmul_kernel must write every entry of an uninitialised out (start each sum from 0, "
                 "do not add to out)"))
