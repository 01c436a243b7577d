"""Held-back tests of module 7: replaced-token labels on a batch where samples often equal the original."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task7_1
def test_replaced_token_labels_batch(impl):
    labels_fn = impl("task07_electra.sampling").replaced_token_labels
    rng = np.random.default_rng(7)
    original = rng.integers(0, 3, size=(4, 9))          # a 3-token vocabulary: many samples hit the original
    masked = rng.random((4, 9)) < 0.5
    corrupted = np.where(masked, rng.integers(0, 3, size=(4, 9)), original)
    got = np.asarray(labels_fn(original, corrupted, masked))
    want = (masked & (corrupted != original)).astype(np.int64)
    assert got.shape == want.shape, f"replaced_token_labels on (4, 9) inputs returned shape {got.shape}"
    if np.array_equal(got, masked.astype(np.int64)):
        pytest.fail("replaced_token_labels returned the mask itself: a masked position where the generator sampled "
                    "the original token is 'original' (0), not 'replaced'")
    np.testing.assert_array_equal(got, want, err_msg="replaced_token_labels: label = 1 iff masked and corrupted != "
                                                     "original, else 0")
    assert got.dtype == np.int64, f"replaced_token_labels must return int64 labels, got {got.dtype}"
