"""Exact product-key law and the exact Voronoi top-k overlap, against independent references.

* product keys: ``P = P_vor(s, a1) P_vor(s, a2)`` evaluated through the library equals the
  Voronoi values it is built from, and the square-``n`` check names ``buckets``;
* top-k: the multinomial quadrature against a brute-force tensor-grid quadrature
  (:func:`lshsim.testing.reference.topk_overlap_grid`: another grid, no Owen's T), against a
  vectorised NumPy Monte Carlo of the score pairs (CI-derived tolerance, fixed seed), and its
  closed values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lshsim import theory
from lshsim.laws.topk import topk_quadrature
from lshsim.testing.reference import topk_overlap_grid


def test_productkey_is_the_product_of_two_voronoi_laws():
    """P_pk(s^2; a1, a2) = P_vor(s, a1) P_vor(s, a2), and rho_pk(n, a) = rho_vor(sqrt n, a)."""
    for s, a1, a2 in ((2, 0.3, 0.9), (32, 0.5, 0.5), (4096, -0.2, 0.7)):
        want = theory.voronoi_probability(s, a1) * theory.voronoi_probability(s, a2)
        assert theory.productkey_probability(s * s, a1, a2) == pytest.approx(want, rel=1e-12)
    assert theory.productkey_rho(2**20, 0.6) == pytest.approx(
        theory.rho("voronoi", 2**10, 0.6), rel=1e-12
    )
    assert theory.productkey_probability(64, 0.0) == pytest.approx(1 / 64, rel=1e-12)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: theory.productkey_probability(50, 0.5), r"n \(buckets\) must be a perfect square"),
        (lambda: theory.productkey_probability(2, 0.5), r"n \(buckets\)"),
        (lambda: theory.productkey_probability(64, 1.5), r"cosine"),
        (lambda: theory.voronoi_topk_overlap(64, 0, 0.5), r"topk \(k\)"),
        (lambda: theory.voronoi_topk_overlap(64, 65, 0.5), r"topk \(k\)"),
        (lambda: theory.voronoi_topk_overlap(64, 17, 0.5), r"topk \(k\) must be <= 16"),
        (lambda: theory.voronoi_topk_overlap(64, 2, -1.5), r"cosine"),
    ],
)
def test_bad_input(call, match):
    """One-line ValueErrors naming the parameter."""
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(("n", "k", "a"), [(8, 2, 0.5), (12, 4, -0.4)])
def test_topk_matches_an_independent_grid_quadrature(n, k, a):
    """The adaptive multinomial quadrature agrees with a brute-force tensor grid to 1e-4."""
    want = topk_overlap_grid(n, k, a, step=0.02)
    assert topk_quadrature(n, k, a) == pytest.approx(want, rel=1e-4)


def test_topk_matches_numpy_monte_carlo():
    """n = 40, k = 4, a = 0.7: 10000 draws of the 40 bivariate-normal score pairs; the exact
    overlap lies within 4 standard errors of the mean per-trial overlap."""
    n, k, a, trials = 40, 4, 0.7, 10_000
    rng = np.random.default_rng(19)
    u = rng.standard_normal((trials, n))
    v = a * u + math.sqrt(1 - a * a) * rng.standard_normal((trials, n))
    tu = np.argsort(-u, axis=1)[:, :k]
    tv = np.argsort(-v, axis=1)[:, :k]
    frac = (tu[:, :, None] == tv[:, None, :]).sum(axis=(1, 2)) / k
    se = frac.std(ddof=1) / math.sqrt(trials)
    assert abs(frac.mean() - theory.voronoi_topk_overlap(n, k, a)) <= 4.0 * se


def test_topk_closed_values():
    """k = 1 is P_vor; k = n, a = 1 give 1; a = 0 gives k/n (also by quadrature near 0);
    a = -1 gives max(0, 2k - n)/k."""
    assert theory.voronoi_topk_overlap(64, 1, 0.5) == theory.voronoi_probability(64, 0.5)
    assert theory.voronoi_topk_overlap(10, 10, 0.2) == 1.0
    assert theory.voronoi_topk_overlap(10, 3, 1.0) == 1.0
    assert theory.voronoi_topk_overlap(10, 3, 0.0) == pytest.approx(0.3)
    assert topk_quadrature(10, 3, 0.0) == pytest.approx(0.3, rel=1e-8)
    assert theory.voronoi_topk_overlap(10, 7, -1.0) == pytest.approx(4 / 7)
    assert theory.voronoi_topk_overlap(10, 3, -1.0) == 0.0
