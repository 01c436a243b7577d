"""Held-back tests of module 9: the prefix-LM mask compared entry by entry at an uneven prefix."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task9_2
def test_prefix_lm_mask_entries(impl):
    prefix_lm_mask = impl("task09_seq2seq.architectures").prefix_lm_mask
    T, P = 7, 3
    got = np.asarray(prefix_lm_mask(T, P))
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    want = (j <= i) | (j < P)
    assert got.shape == (T, T), f"prefix_lm_mask(7, 3) must be (7, 7), got {got.shape}"
    if np.array_equal(got, j <= i):
        pytest.fail("prefix_lm_mask(7, 3) is the plain causal mask: the first 3 positions must be visible to all, "
                    "including earlier prefix positions (the prefix is read in both directions)")
    if np.array_equal(got, want.T):
        pytest.fail("prefix_lm_mask(7, 3) is transposed: M[i, j] is whether position i (row) sees position j")
    np.testing.assert_array_equal(got, want, err_msg="prefix_lm_mask(7, 3): M[i, j] = (j ≤ i) or (j < 3); no target "
                                                     "position may see a later one")
