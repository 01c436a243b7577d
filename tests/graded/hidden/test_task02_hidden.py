"""Held-back tests of module 2: softmax and log-softmax along a middle axis with extreme values."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task2_1
def test_softmax_and_log_softmax_middle_axis_extremes(impl):
    mod = impl("task02_kernels.softmax")
    x = np.array([[[3e4, -2.0], [0.0, 5e3], [-3e4, 1.0]]], dtype=np.float32)  # (1, 3, 2), reduce axis 1
    x64 = x.astype(np.float64)
    m = x64.max(axis=1, keepdims=True)
    want_log = x64 - m - np.log(np.exp(x64 - m).sum(axis=1, keepdims=True))
    p = mod.softmax_forward(x, axis=1)
    assert np.shape(p) == x.shape and np.asarray(p).dtype == np.float32, (
        f"softmax_forward(x (1, 3, 2) float32, axis=1) must return shape (1, 3, 2) float32, got "
        f"{np.shape(p)} {np.asarray(p).dtype}")
    assert np.all(np.isfinite(p)), f"softmax_forward over values ±3e4 gave {p}: subtract the max along the axis first"
    np.testing.assert_allclose(np.asarray(p).sum(axis=1), 1.0, rtol=1e-6,
                               err_msg="softmax_forward(x, axis=1): each slice along axis 1 must sum to 1 — "
                                       "is the max or the sum taken along the last axis instead of `axis`?")
    np.testing.assert_allclose(p, np.exp(want_log), rtol=1e-5, atol=1e-7,
                               err_msg="softmax_forward(x, axis=1) values differ from exp(x − max − log Σ exp(x − max))")
    lp = mod.log_softmax_forward(x, axis=1)
    assert np.all(np.isfinite(lp)), (f"log_softmax_forward over values ±3e4 gave {lp}: np.log(softmax) underflows to "
                                     "−inf; use x − m − log Σ exp(x − m)")
    np.testing.assert_allclose(lp, want_log, rtol=1e-5,
                               err_msg="log_softmax_forward(x, axis=1) differs from x − m − log Σ exp(x − m) along axis 1")
