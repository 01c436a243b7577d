"""Held-back tests of module 11: subword pooling on a word of pieces with mixed signs."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task11_1
def test_pool_subwords_each_choice(impl):
    pool = impl("task11_static.pooling").pool_subwords
    v = np.array([[1.0, -4.0, 2.0], [-3.0, 5.0, 0.5], [2.0, 0.0, -1.0], [0.5, 1.0, 7.0]])  # (P=4, C=3)
    want = {"mean": v.mean(axis=0), "max": v.max(axis=0), "min": v.min(axis=0), "last": v[-1]}
    for how, w in want.items():
        got = np.asarray(pool(v, how))
        assert got.shape == (3,), (f"pool_subwords(vectors (4, 3), {how!r}) must return (C,) = (3,), got {got.shape}: "
                                   "reduce over the pieces (axis 0), not the channels")
        np.testing.assert_allclose(got, w, err_msg=f"pool_subwords(how={how!r}) on 4 pieces: expected {w}, got {got}")
