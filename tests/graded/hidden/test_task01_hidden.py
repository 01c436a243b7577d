"""Held-back tests of module 1: batched matmul backward on shapes the visible tests do not use."""
import numpy as np
import pytest

from tests.helpers import numeric_grad

R = np.random.default_rng(20261)


@pytest.mark.hidden
@pytest.mark.task1_4
def test_matmul_backward_broadcast_both_sides(impl):
    """a (2, 1, 3, 4) @ b (5, 4, 2): each input broadcasts over a different batch axis."""
    matmul_backward = impl("task01_autograd.matmul").matmul_backward
    a, b = R.standard_normal((2, 1, 3, 4)), R.standard_normal((5, 4, 2))
    up = R.standard_normal((2, 5, 3, 2))
    ga, gb = matmul_backward(up, a, b)
    assert np.shape(ga) == a.shape and np.shape(gb) == b.shape, (
        f"a (2, 1, 3, 4) @ b (5, 4, 2) → out (2, 5, 3, 2): the gradients must have the inputs' shapes "
        f"{a.shape} and {b.shape}, got {np.shape(ga)} and {np.shape(gb)} — sum over the batch axes each "
        f"input was broadcast along (unbroadcast)")
    np.testing.assert_allclose(ga, numeric_grad(lambda x: x @ b, a, up), rtol=1e-6, atol=1e-8,
                               err_msg="dL/da for a (2, 1, 3, 4) @ b (5, 4, 2) is wrong: it is grad_output @ bᵀ "
                                       "(last two axes swapped), summed over the size-1 batch axis of a")
    np.testing.assert_allclose(gb, numeric_grad(lambda x: a @ x, b, up), rtol=1e-6, atol=1e-8,
                               err_msg="dL/db for a (2, 1, 3, 4) @ b (5, 4, 2) is wrong: it is aᵀ @ grad_output, "
                                       "summed over the leading batch axis b lacks")
