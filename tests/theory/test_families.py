"""lshsim.theory.families: the array entry point ``probabilities`` against pointwise
``probability``, and its input validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lshsim import theory


@settings(max_examples=12)
@given(
    family=st.sampled_from(tuple(theory.COSINE_FAMILIES)),
    log2n=st.integers(1, 12),
    cosines=st.lists(st.floats(-0.9, 1.0), min_size=1, max_size=6),
)
def test_probabilities_array_matches_pointwise_probability(family, log2n, cosines):
    """`theory.probabilities` over an array equals `theory.probability` at each cosine
    (relative 1e-7: the checked Chebyshev table) and keeps the array's shape."""
    n = 2**log2n
    if family == "crosspolytope" and n < 4:
        n = 4
    arr = np.array(cosines).reshape(len(cosines), 1)
    got = theory.probabilities(family, n, arr)
    assert got.shape == arr.shape
    want = np.array([theory.probability(family, n, c) for c in cosines])
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-7, atol=1e-300)


def test_probabilities_refuses_bad_input():
    """Cosines outside [-1, 1], NaN, or a token family are refused with a named parameter."""
    with pytest.raises(ValueError, match="cosines"):
        theory.probabilities("voronoi", 8, [0.5, 1.5])
    with pytest.raises(ValueError, match="cosines"):
        theory.probabilities("simhash", 8, [math.nan])
    with pytest.raises(ValueError, match="tokenid"):
        theory.probabilities("tokenid", 8, [0.5])
