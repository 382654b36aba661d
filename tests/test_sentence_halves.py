"""The exact half-cosine sampler against brute-force sentence pairs, and what it is checked against.

The brute force embeds real sentence pairs in ``R^d`` (:func:`lshsim.sentences.sentence_pairs`)
and takes the cosines of their halves; the mean and the mean product of the two half-cosines
must agree with :func:`lshsim.sentence_halves.half_cosines` within 4 standard errors. (The
product-key average over this law against the kernel is claim B.pk1's check, run by
``tests/theorems/test_claim_registry.py``.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lshsim.estimate import estimate_collision
from lshsim.sentence_halves import half_cosine_pairs, half_cosines
from lshsim.sentences import sentence_pairs


def _cos(a, b):
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize(("f", "d", "length"), [(0.5, 8, 6), (0.25, 4, 5)])
def test_half_cosines_match_brute_force(f, d, length):
    """Means of A1, A2 and of A1 A2 (the halves' dependence) agree within 4 combined SEs."""
    rng = np.random.default_rng(11)
    fast = half_cosines(60_000, f, length=length, dim=d, rng=rng)
    p = sentence_pairs(30_000, f, length=length, vocab=1000, dim=d, rng=rng)
    h = d // 2
    slow = np.stack([_cos(p.x1[:, :h], p.x2[:, :h]), _cos(p.x1[:, h:], p.x2[:, h:])], axis=1)
    for stat in (lambda c: c[:, 0], lambda c: c[:, 1], lambda c: c[:, 0] * c[:, 1]):
        a, b = stat(fast), stat(slow)
        se = math.hypot(a.std() / math.sqrt(a.size), b.std() / math.sqrt(b.size))
        assert abs(a.mean() - b.mean()) <= 4.0 * se


def test_half_cosine_pairs_are_exact():
    """Unit vectors whose halves have exactly the requested cosines."""
    x, y = half_cosine_pairs(50, 0.3, -0.6, 10, np.random.default_rng(0))
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0)
    np.testing.assert_allclose(_cos(x[:, :5], y[:, :5]), 0.3)
    np.testing.assert_allclose(_cos(x[:, 5:], y[:, 5:]), -0.6)


def test_bad_input():
    """Odd or too small d names dim (d)."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"dim \(d\) must be even"):
        half_cosines(3, 0.5, length=4, dim=7, rng=rng)
    with pytest.raises(ValueError, match=r"dim \(d\)"):
        half_cosines(3, 0.5, length=4, dim=2, rng=rng)
    with pytest.raises(ValueError, match=r"dim \(d\) must be even"):
        estimate_collision("productkey", 64, cosine=0.5, dim=9, samples=5)
