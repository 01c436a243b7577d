"""Held-back tests of module 3: the sinusoidal table at an odd width and a longer length."""
import numpy as np
import pytest


@pytest.mark.hidden
@pytest.mark.task3_3
def test_sinusoidal_odd_width(impl):
    pe = impl("task03_transformer.positions").sinusoidal_positions(50, 7)
    assert np.shape(pe) == (50, 7), f"sinusoidal_positions(50, 7) must be (T, C) = (50, 7), got {np.shape(pe)}"
    pos = np.arange(50)[:, None]
    angle = pos / 10000 ** (np.arange(0, 7, 2) / 7)  # (50, 4)
    want = np.zeros((50, 7))
    want[:, 0::2], want[:, 1::2] = np.sin(angle), np.cos(angle[:, :3])
    if np.allclose(pe[:, :4], np.sin(angle)):
        pytest.fail("sinusoidal_positions(50, 7): the first 4 columns hold all the sines — the paper interleaves "
                    "them: column 2i the sine, column 2i+1 the cosine of the same angle")
    np.testing.assert_allclose(pe, want, atol=1e-10,
                               err_msg="sinusoidal_positions(50, 7) differs from PE[pos, 2i] = sin(pos / 10000^(2i/C)), "
                                       "PE[pos, 2i+1] = cos(same angle); for an odd C the last column is a sine")
