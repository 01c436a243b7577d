"""Held-back tests of module 11: subword pooling on a word of pieces with mixed signs."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task11_1
def test_pool_subwords_each_choice(impl):
    pool = impl("task11_static.pooling").pool_subwords
    v = np.array([[1.0, -4.0, 2.0], [-3.0, 5.0, 0.5], [2.0, 0.0, -1.0], [0.5, 1.0, 7.0]])  # (P=4, C=3)
    states = np.stack([np.vstack([np.full((1, 3), 50.0), v, np.full((1, 3), -50.0)]),      # [CLS] pieces [SEP]
                       np.vstack([np.full((1, 3), 60.0), 2 * v, np.full((1, 3), -60.0)])])  # (L+1=2, T=6, C=3)
    want = {"mean": v.mean(axis=0), "max": v.max(axis=0), "min": v.min(axis=0), "last": v[-1]}
    for how, w in want.items():
        got = np.asarray(pool(states, (1, 5), how))
        assert got.shape == (2, 3), (f"pool_subwords(states (2, 6, 3), (1, 5), {how!r}) must return (L+1, C) = "
                                     f"(2, 3), got {got.shape}: reduce over the pieces, not the layers or channels")
        np.testing.assert_allclose(got, [w, 2 * w], err_msg=f"pool_subwords(how={how!r}) on 4 pieces at positions "
                                                            f"1..4 of 2 states: expected {[w, 2 * w]}, got {got}")
