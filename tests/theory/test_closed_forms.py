"""lshsim.laws.closed_forms (and SimHash's closed form): against independent numerical
integration, the two p-stable sums against each other, and input validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from lshsim import theory


def _pstable_direction_by_quadrature(c: float, w: float, r: int) -> float:
    """sum_t E[tri(D/w - t r)], D ~ N(0, c^2), by adaptive quadrature of each term."""
    total = 0.0
    sd = c / w
    for t in range(-50, 51):
        centre = t * r
        if abs(centre) - 1 > 12 * sd + 1:
            continue
        val, _ = integrate.quad(
            lambda x, j=centre: max(0.0, 1 - abs(x - j)) * stats.norm.pdf(x, scale=sd),
            centre - 1,
            centre + 1,
            points=[centre],
            epsabs=1e-13,
            epsrel=1e-11,
        )
        total += val
    return total


@given(st.floats(0.01, 10.0), st.floats(1e-9, 20.0))
def test_datar_formula_is_the_zero_term(c, w):
    """Datar's closed form equals the t = 0 triangle term E[tri(D/w)], down to tiny w/c."""
    from lshsim.laws.closed_forms import _triangle_expectation

    assert theory.datar_probability(c, w) == pytest.approx(
        _triangle_expectation(0.0, c / w), rel=1e-9, abs=1e-300
    )


@pytest.mark.parametrize(
    ("c", "w", "r"), [(0.3, 4.0, 2), (1.0, 0.5, 2), (2.0, 0.3, 3), (1.4, 1.0, 16), (0.05, 0.2, 5)]
)
def test_pstable_direction_matches_quadrature(c, w, r):
    """The closed-form wrap-around sum matches term-by-term quadrature."""
    assert theory.pstable_direction_probability(c, w, r) == pytest.approx(
        _pstable_direction_by_quadrature(c, w, r), rel=1e-8, abs=1e-12
    )


@given(st.floats(0.0, 5.0), st.floats(0.1, 10.0), st.integers(2, 64))
def test_pstable_direction_is_a_probability_above_datar(c, w, r):
    """The mapping only adds collisions: Datar's p <= q <= 1."""
    q = theory.pstable_direction_probability(c, w, r)
    assert theory.datar_probability(c, w) - 1e-12 <= q <= 1.0


def test_pstable_far_apart_tends_to_one_over_radix():
    """Far apart, the cell difference is spread out and congruence mod r has probability 1/r."""
    assert theory.pstable_direction_probability(50.0, 0.5, 4) == pytest.approx(0.25, abs=1e-6)


@given(st.integers(1, 30), st.floats(-1.0, 1.0))
def test_simhash_closed_form(k, a):
    """SimHash: per-bit agreement 1 - theta/pi, k independent bits."""
    p = theory.simhash_probability(2**k, a)
    assert p == pytest.approx((1 - np.arccos(a) / math.pi) ** k, rel=1e-12)
    assert theory.simhash_probability(2**k, 0.0) == pytest.approx(2.0**-k)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_jaccard_and_tokenid(sl):
    """Jaccard s/(2l-s) is f/(2-f) and never exceeds the per-token rate s/l."""
    s, length = sl
    f = s / length
    assert theory.jaccard(s, length) == pytest.approx(f / (2 - f))
    assert theory.jaccard(s, length) <= theory.tokenid_probability(s, length) + 1e-15


def test_bad_input_names_parameter():
    """Closed forms reject out-of-range input with the parameter's name."""
    with pytest.raises(ValueError, match="cosine"):
        theory.simhash_probability(8, 1.01)
    with pytest.raises(ValueError, match="power of two"):
        theory.simhash_probability(12, 0.5)
    with pytest.raises(ValueError, match=r"w \(width\)"):
        theory.datar_probability(1.0, 0.0)
    with pytest.raises(ValueError, match="shared"):
        theory.jaccard(5, 4)


@given(st.floats(0.05, 20.0), st.integers(2, 40))
def test_pstable_direct_and_fourier_sums_agree(ratio, r):
    """Term-by-term and Poisson-summation forms of the wrap-around sum agree (1e-11)."""
    from lshsim.laws.closed_forms import _pstable_direction_direct, _pstable_direction_fourier

    sigma = ratio * r
    assert _pstable_direction_direct(sigma, r) == pytest.approx(
        _pstable_direction_fourier(sigma, r), abs=1e-11
    )


def test_pstable_tiny_width_is_uniform_over_the_radix():
    """With w far below the distance the cell difference is uniform mod r: q -> 1/r."""
    assert theory.pstable_direction_probability(1.0, 1e-9, 4) == pytest.approx(0.25, abs=1e-12)
    # r = 2^62 cells dwarf the spread (1e9 cells): no wrap-around, only Datar's term remains
    exact = theory.pstable_probability(2**62, 1.0, k=1, w=1e-9)
    assert exact == pytest.approx(theory.datar_probability(1.0, 1e-9), rel=1e-9)
    assert exact == pytest.approx(1e-9 / math.sqrt(2 * math.pi), rel=1e-6)


@given(st.floats(0.0, 40.0))
def test_triangle_closed_form_and_quadrature_meet_at_sigma_4(j):
    """The closed form (sigma <= 4) and Gauss-Legendre (sigma > 4) agree where they meet."""
    from lshsim.laws.closed_forms import _triangle_expectation

    below = _triangle_expectation(j, 4.0)
    above = _triangle_expectation(j, 4.0 * (1 + 1e-12))
    assert above == pytest.approx(below, rel=1e-9, abs=1e-300)
