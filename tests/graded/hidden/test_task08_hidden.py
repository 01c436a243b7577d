"""Held-back tests of module 8: the permutation mask checked entry by entry on a fixed order."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task8_1
def test_permutation_mask_fixed_order(impl):
    permutation_mask = impl("task08_xlnet.permutation").permutation_mask
    order = np.array([4, 1, 5, 0, 2, 3])                 # position 4 comes first, then 1, ...
    is_target = np.array([False, True, False, True, True, False])
    perm, content = (np.asarray(m) for m in permutation_mask(order, is_target))
    rank = np.empty(6, int)
    rank[order] = np.arange(6)
    rank_ctx = np.where(is_target, rank, -1)
    self_rank = np.where(is_target, rank_ctx, rank_ctx + 1)
    want = (self_rank[:, None] <= rank_ctx[None, :]) & is_target[None, :]
    assert perm.shape == (6, 6), f"permutation_mask for T = 6 must return (6, 6) masks, got {perm.shape}"
    if np.array_equal(perm, want.T):
        pytest.fail("permutation_mask is transposed: row i is the position that looks, column j the one looked at")
    np.testing.assert_array_equal(perm, want, err_msg=(
        f"permutation_mask(order={order.tolist()}, targets at 1, 3, 4): a target may see the context and the targets "
        f"before it in the order, never itself or a later target; the context sees no target"))
    np.testing.assert_array_equal(content, want & ~np.eye(6, dtype=bool),
                                  err_msg="content_mask must be perm_mask with the diagonal False (a token sees itself)")
