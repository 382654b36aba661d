"""Loss by frequency band (`lshsim.t5.bands`): the per-band sums against a slow reference."""

from __future__ import annotations

import numpy as np
import pytest

from lshsim.t5.bands import band_sums, band_table, token_counts


def test_band_sums_equal_a_loop_over_tokens():
    """Per band: summed ce x weight and summed weight, special ids (-1) and zero weights
    left out, equal to a plain loop over every token."""
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 50, 120)
    band_of = band_table(counts, special=(0, 1))
    targets = rng.integers(0, 120, (3, 17))
    weights = (rng.random((3, 17)) > 0.2).astype(np.float32)
    ce = rng.random((3, 17))
    want = np.zeros((3, 2))
    for t, w, c in zip(targets.ravel(), weights.ravel(), ce.ravel(), strict=True):
        b = band_of[t]
        if b >= 0 and w > 0:
            want[b] += (c * w, w)
    np.testing.assert_allclose(band_sums(ce, targets, weights, band_of, 3), want, rtol=1e-12)
    assert band_of[0] == band_of[1] == -1


def test_token_counts():
    assert token_counts([[1, 2, 2], [], [3]], 5).tolist() == [0, 1, 2, 1, 0]
    with pytest.raises(ValueError, match=r"^rows: token ids must lie in \[0, 5\)"):
        token_counts([[5]], 5)
