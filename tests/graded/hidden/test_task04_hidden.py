"""Held-back tests of module 4: top-k on rows with several ties and negative logits."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task4_2
def test_top_k_ties_negative_rows(impl):
    top_k_filter = impl("task04_gpt.decoding").top_k_filter
    logits = np.array([[-3.0, -1.0, -1.0, -1.0, -7.0],
                       [0.5, -2.0, 0.5, 9.0, -2.0]])
    before = logits.copy()
    out = np.asarray(top_k_filter(logits, 2))
    np.testing.assert_array_equal(logits, before, err_msg="top_k_filter modified its input: return a new array")
    kept = np.isfinite(out)
    want = np.array([[False, True, True, True, False],   # three tie for the top: all kept
                     [True, False, True, True, False]])  # 9.0, then 0.5 twice (tie with the 2nd largest)
    assert kept.shape == want.shape and (kept == want).all(), (
        f"top_k_filter(k=2) on rows with ties kept {kept.astype(int).tolist()}, expected "
        f"{want.astype(int).tolist()}: keep every logit ≥ the 2nd largest of its row (ties kept), per row")
    np.testing.assert_array_equal(out[kept], logits[want],
                                  err_msg="top_k_filter changed the values it kept: kept logits must be unchanged")
    assert np.all(out[~kept] == -np.inf), f"top_k_filter must set the dropped logits to −inf, got {out[~kept]}"
