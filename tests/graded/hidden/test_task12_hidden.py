"""Held-back tests of module 12: DeBERTa's relative distance with more keys than queries."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task12_4
def test_relative_distance_rectangular(impl):
    relative_distance = impl("task12_beyond.deberta").relative_distance
    Tq, Tk, k = 4, 11, 3
    got = np.asarray(relative_distance(Tq, Tk, k))
    want = np.clip(np.arange(Tq)[:, None] - np.arange(Tk)[None, :] + k, 0, 2 * k - 1)
    assert got.shape == (Tq, Tk), (f"relative_distance(Tq=4, Tk=11, k=3) must be (Tq, Tk) = (4, 11), got {got.shape}: "
                                   "rows are queries, columns keys")
    assert got.min() >= 0 and got.max() <= 2 * k - 1, (
        f"relative_distance(4, 11, k=3) has values in [{got.min()}, {got.max()}]; they index 2k = 6 rows, so clip to [0, 5]")
    np.testing.assert_array_equal(got, want, err_msg="relative_distance(4, 11, 3): δ(i, j) = clip(i − j + k, 0, 2k − 1), "
                                                     "query i in rows; is it j − i instead of i − j?")
