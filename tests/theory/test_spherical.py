"""Properties of the exact Voronoi and cross-polytope probabilities (2-D quadrature), with the
closed-form families alongside, over the whole parameter range: n in [2, 2^24], a in [-1, 1].

Every quadrature call costs ~50 ms, so the Hypothesis tests run 20-40 examples each; the
cosine strategy puts half its draws within 10^-e of an end, where the quadrature is hardest.

Regression tests at the end of the sections pin three defects found here and fixed in
e14bac3 (they were strict xfails before): cancellation in the cross-polytope box probability
near a = -1 (QuadratureError, or at n = 4 a silent error up to 1.3e-5), rounding noise in
Voronoi's Phi2 near a = -1 (QuadratureError), and the unsampled wedge tip of cross-polytope
near a = 1 (at n = 4 a silent relative error ~0.5 (1 - a), up to 5e-7).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import ndtr

from lshsim import theory
from lshsim.laws import spherical as spherical_theory
from lshsim.theorems import strategies as lst

SPHERICAL = ("voronoi", "crosspolytope")
#: n of 2..2^24, every family
MAX_LOG2 = 24
#: relative slack for comparisons between two quadrature results (each within 1e-9)
SLACK = 1e-8

quadrature = settings(max_examples=25)


def _configs(families=theory.COSINE_FAMILIES):
    """(family, n) with n valid for the family (default parameters), n <= 2^24."""
    return st.sampled_from(families).flatmap(
        lambda f: st.tuples(st.just(f), lst.bucket_counts(f, max_log2=MAX_LOG2))
    )


def _one_bit(a: float) -> float:
    return 1.0 - math.acos(a) / math.pi


# -- values at a = 1, -1, 0 --------------------------------------------------------------------


@quadrature
@given(_configs())
def test_probability_one_at_cosine_one(config):
    """P(a = 1) = 1 (log P = 0) for every cosine family and every n."""
    family, n = config
    assert theory.log_probability(family, n, 1.0) == 0.0
    assert theory.probability(family, n, 1.0) == 1.0


@quadrature
@given(_configs(("simhash", "voronoi", "crosspolytope")))
def test_probability_zero_at_cosine_minus_one(config):
    """P(a = -1) = 0 (log P = -inf) for simhash, voronoi and cross-polytope: y = -x always
    lands in another bucket (the opposite half-space, the argmin, the opposite vertex)."""
    family, n = config
    assert theory.log_probability(family, n, -1.0) == -math.inf
    assert theory.probability(family, n, -1.0) == 0.0


def test_pstable_antipodes_can_collide():
    """P-stable is the exception: x and -x at distance 2 < w = 4 often share a cell."""
    p = theory.probability("pstable", 16, -1.0)
    q = theory.pstable_direction_probability(2.0, 4.0, 2)
    assert p == pytest.approx(q**4, rel=1e-12)
    assert 0.3 < q < 1.0


@quadrature
@given(_configs(("simhash", "voronoi", "crosspolytope")), st.sampled_from([0.0, -0.0]))
def test_probability_one_over_n_at_cosine_zero(config, zero):
    """P(a = 0) = 1/n to 1e-12 relative: the scores of orthogonal x, y are independent (for
    cross-polytope with a Gaussian rotation too, Gx and Gy), so each bucket is shared w.p. 1/n^2.
    Cross-polytope reaches it by quadrature (the integrand factorises), the others exactly."""
    family, n = config
    log_p = theory.log_probability(family, n, zero)
    assert abs(math.expm1(log_p + math.log(n))) <= 1e-12


# -- monotonicity ------------------------------------------------------------------------------


@settings(max_examples=30)
@given(
    lst.family_configs(kind="cosine", exact=True, max_log2=MAX_LOG2),
    lst.cosines(),
    lst.cosines(),
)
def test_monotone_in_cosine(config, a1, a2):
    """P is non-decreasing in the cosine, for every family (any p-stable width) and n <= 2^24:
    P(a1) <= P(a2) (1 + 1e-9) for a1 < a2."""
    family, n, params = config
    a1, a2 = sorted((a1, a2))
    lo = theory.log_probability(family, n, a1, **params)
    hi = theory.log_probability(family, n, a2, **params)
    assert lo <= hi + 1e-9, (family, n, params, a1, a2, lo, hi)


@settings(max_examples=30)
@given(
    st.sampled_from(tuple(theory.COSINE_FAMILIES)).flatmap(
        lambda f: st.tuples(
            st.just(f),
            lst.bucket_counts(f, max_log2=MAX_LOG2),
            lst.bucket_counts(f, max_log2=MAX_LOG2),
        )
    ),
    lst.cosines(open=True),
)
def test_monotone_in_buckets(config, a):
    """P is non-increasing in n at a fixed cosine in (-1, 1): voronoi at every integer n,
    cross-polytope at every even n, simhash and p-stable (radix 2) at powers of two."""
    family, n1, n2 = config
    n1, n2 = sorted((n1, n2))
    p1 = theory.log_probability(family, n1, a)
    p2 = theory.log_probability(family, n2, a)
    assert p2 <= p1 + 1e-9, (family, n1, n2, a, p1, p2)


@pytest.mark.parametrize("family", SPHERICAL)
@pytest.mark.parametrize("a", [-0.9, -0.3, 0.2, 0.7, 0.99])
def test_strictly_decreasing_in_consecutive_buckets(family, a):
    """Consecutive n (step 1 for voronoi, 2 for cross-polytope) lower log P by more than 5x the
    quadrature's 1e-9, up to n = 2^20: the monotonicity above is not within noise."""
    step = 2 if family == "crosspolytope" else 1
    for n in (2, 4, 16, 100, 1000, 2**20):
        drop = theory.log_probability(family, n, a) - theory.log_probability(family, n + step, a)
        assert drop > 5e-9, (family, n, a, drop)


# -- n = 2 and symmetries ----------------------------------------------------------------------


@given(lst.cosines())
def test_two_buckets_is_one_hyperplane(a):
    """n = 2: voronoi = cross-polytope = simhash = 1 - arccos(a)/pi (one random hyperplane)."""
    expected = _one_bit(a)
    for family in ("simhash", "voronoi", "crosspolytope"):
        assert theory.probability(family, 2, a) == pytest.approx(expected, rel=1e-12, abs=0)


@settings(max_examples=20)
@given(lst.cosines(open=True))
def test_two_bucket_voronoi_shortcut_matches_the_general_integral(a):
    """The T = 2 closed-form shortcut agrees with the general quadrature it bypasses,
    2 E[Phi2(U, V; a)] (the integrand of every T, with exponent T - 1 = 1), to 1e-8."""
    alpha, beta = spherical_theory._alpha_beta(a)

    def log_f(x, y):
        return -0.5 * (x * x + y * y) + spherical_theory._log_phi2(x, y, alpha, beta)

    itg = spherical_theory._Integrand(log_f, -math.inf, math.inf)
    log_p = math.log(2.0 / (2 * math.pi)) + spherical_theory._integrate(itg, spherical_theory.RTOL)
    assert log_p == pytest.approx(math.log1p(-math.acos(a) / math.pi), abs=SLACK)


@settings(max_examples=20)
@given(lst.cosines(open=True))
def test_two_bucket_crosspolytope_wedge_integral(a):
    """The d = 1 shortcut agrees with the general rule on its wedge domain (X > 0,
    |Y| < (alpha/beta) X): 2 P(U > 0, V > 0) = 1 - arccos(a)/pi. The integrand is 1 up to the
    wedge's edge, the sharpest case of its tip near a = 1 (once missed, see the n = 4 tests)."""
    alpha, beta = spherical_theory._alpha_beta(a)

    def log_f(x, y):  # R^(d-1) = 1
        return -0.5 * (x * x + y * y) + 0.0 * x

    itg = spherical_theory._Integrand(log_f, 0.0, alpha / beta)
    log_p = math.log(2.0 / (2 * math.pi)) + spherical_theory._integrate(itg, spherical_theory.RTOL)
    assert log_p == pytest.approx(math.log1p(-math.acos(a) / math.pi), abs=SLACK)


@given(st.integers(1, 62), lst.cosines())
def test_simhash_bits_are_symmetric(k, a):
    """SimHash per-bit identity P_1(a) + P_1(-a) = 1 with P_1 = P^(1/k) = exp(log P / k), any
    n = 2^k (through log P: P itself underflows at k = 62, a near -1)."""
    p1 = math.exp(theory.log_probability("simhash", 2**k, a) / k)
    p1m = math.exp(theory.log_probability("simhash", 2**k, -a) / k)
    assert p1 + p1m == pytest.approx(1.0, abs=1e-12)


@given(lst.cosines())
def test_two_bucket_voronoi_is_symmetric(a):
    """voronoi(2, a) + voronoi(2, -a) = 1 (a hyperplane separates x, y or x, -y)."""
    total = theory.probability("voronoi", 2, a) + theory.probability("voronoi", 2, -a)
    assert total == pytest.approx(1.0, abs=1e-12)


# -- accuracy ----------------------------------------------------------------------------------


@settings(max_examples=30)
@given(
    st.sampled_from(SPHERICAL).flatmap(
        lambda f: st.tuples(st.just(f), lst.bucket_counts(f, max_log2=MAX_LOG2))
    ),
    lst.cosines(open=True),
)
def test_default_tolerance_is_far_inside_the_requirement(config, a):
    """The answer does not depend on how it is asked: rtol = 1e-12 agrees with the default
    (1e-9) to 1e-8 relative in P, 100x inside the 1e-6 requirement, at every n <= 2^24."""
    family, n = config
    default = theory.log_probability(family, n, a)
    strict = theory.log_probability(family, n, a, rtol=1e-12)
    assert abs(math.expm1(default - strict)) <= SLACK, (family, n, a, default, strict)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(64)


@functools.cache
def _plackett_nodes(r: float) -> tuple[float, np.ndarray, np.ndarray]:
    """asin(r) and, at the 64 Gauss-Legendre nodes t of [0, asin(r)], sin t and 2 cos^2 t (they
    depend on r only: dblquad calls _phi2 ~10^5 times per integral at one r)."""
    top = math.asin(r)
    t = 0.5 * top * (_GL_X + 1.0)
    return top, np.sin(t), 2 * np.cos(t) ** 2


def _phi2(h: float, k: float, r: float) -> float:
    """Bivariate normal CDF by Plackett's formula (an independent method: no Owen's T):
    Phi2 = Phi(h) Phi(k) + 1/(2 pi) int_0^asin(r) exp(-(h^2 - 2hk sin t + k^2)/(2 cos^2 t)) dt,
    64-point Gauss-Legendre in t (exact to rounding for |r| <= 0.8)."""
    top, s, two_c2 = _plackett_nodes(r)
    tail = np.dot(_GL_W, np.exp(-(h * h - 2 * h * k * s + k * k) / two_c2))
    return float(ndtr(h) * ndtr(k) + 0.5 * top * tail / (2 * math.pi))


def _density(u: float, v: float, a: float) -> float:
    s2 = 1.0 - a * a
    return math.exp(-(u * u - 2 * a * u * v + v * v) / (2 * s2)) / (2 * math.pi * math.sqrt(s2))


def _voronoi_by_dblquad(n: int, a: float) -> float:
    """n E[Phi2(U, V; a)^(n-1)] by scipy's adaptive dblquad over (u, v) in [-9, 9]^2."""
    val, _ = integrate.dblquad(
        lambda v, u: _density(u, v, a) * _phi2(u, v, a) ** (n - 1),
        -9, 9, -9, 9, epsabs=1e-12, epsrel=1e-10,
    )  # fmt: skip
    return n * val


def _crosspolytope_by_dblquad(n: int, a: float) -> float:
    """2d E[1{U, V > 0} R(U, V)^(d-1)], R(u, v) = P(|U'| < u, |V'| < v), by dblquad."""
    d = n // 2

    def box(u, v):
        return _phi2(u, v, a) - _phi2(-u, v, a) - _phi2(u, -v, a) + _phi2(-u, -v, a)

    val, _ = integrate.dblquad(
        lambda v, u: _density(u, v, a) * box(u, v) ** (d - 1),
        0, 9, 0, 9, epsabs=1e-12, epsrel=1e-10,
    )  # fmt: skip
    return 2 * d * val


@pytest.mark.parametrize("a", [-0.5, 0.3, 0.8])
@pytest.mark.parametrize(
    ("family", "n"),
    [("voronoi", n) for n in (3, 4, 5, 8)] + [("crosspolytope", n) for n in (4, 6)],
)
def test_matches_independent_dblquad(family, n, a):
    """Against an independent reference (dblquad in (u, v), Plackett's Phi2), P agrees to
    1e-8 relative, 100x inside the 1e-6 requirement."""
    ref = _voronoi_by_dblquad(n, a) if family == "voronoi" else _crosspolytope_by_dblquad(n, a)
    assert theory.probability(family, n, a) == pytest.approx(ref, rel=1e-8)


def test_reference_phi2_is_accurate():
    """The reference Phi2 itself: the exact Phi2(0, 0; r) = 1/4 + asin(r)/(2 pi), and
    Phi2(h, k; 0) = Phi(h) Phi(k)."""
    for r in (-0.8, -0.5, 0.3, 0.8):
        assert _phi2(0.0, 0.0, r) == pytest.approx(0.25 + math.asin(r) / (2 * math.pi), rel=1e-14)
    assert _phi2(0.7, -1.2, 0.0) == pytest.approx(ndtr(0.7) * ndtr(-1.2), rel=1e-14)


def _one_minus_atan_ratio(t: float) -> float:
    """1 - arctan(t)/t, by its series t^2/3 - t^4/5 + ... below t = 1/2 (no cancellation)."""
    if t >= 0.5:
        return 1.0 - math.atan(t) / t  # t = inf gives 1
    t2, term, total, k = t * t, 1.0, 0.0, 1
    while True:
        term *= t2 if k == 1 else -t2  # t^2, -t^4, t^6, ...
        piece = term / (2 * k + 1)
        total += piece
        if abs(piece) <= 1e-18 * abs(total):  # also ends when t^2 underflows to 0
            return total
        k += 1


def _crosspolytope4_by_angle(a: float) -> float:
    """Cross-polytope with d = 2 (n = 4) by a 1-D integral, independent of the 2-D rule.

    Gx and Gy are 2-D Gaussian vectors whose coordinate pairs have correlation a; their joint
    law is invariant under a common rotation, so the direction of Gx is uniform and independent
    of the angle psi between them, and the four 90-degree buckets agree with probability
    max(0, 1 - 2|psi|/pi). The angle has the density (correlated circular Gaussians)
    p(psi) = (1 - a^2) / (2 pi q^2) [1 + b arccos(-b) / q],  b = a cos psi,  q = sqrt(1 - b^2),
    with q^2 = (1 - a^2) + a^2 sin^2 psi, and for b < 0 the bracket as 1 - atan(t)/t,
    t = q/|b|: both free of cancellation near a = +-1.
    """
    s2 = (1.0 - a) * (1.0 + a)

    def integrand(psi):
        b = a * math.cos(psi)
        q2 = s2 + (a * math.sin(psi)) ** 2
        q = math.sqrt(q2)
        if b < 0:
            bracket = _one_minus_atan_ratio(q / -b)
        else:
            bracket = 1.0 + b * math.acos(-b) / q
        return 2.0 * s2 / (2 * math.pi * q2) * bracket * (1.0 - 2.0 * psi / math.pi)

    width = math.sqrt(s2)  # the density's peak at psi = 0 has this width near a = 1
    cuts = sorted({min(math.pi / 2, width * k) for k in (1, 10, 100, 1000)} | {math.pi / 2})
    total, lo = 0.0, 0.0
    for hi in cuts:
        if hi > lo:
            total += integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-11, limit=200)[0]
            lo = hi
    return total


def test_angle_reference_known_values():
    """The 1-D reference itself: P(0) = 1/4 (independent buckets) and P(-1/2) = 1/9."""
    assert _crosspolytope4_by_angle(0.0) == pytest.approx(0.25, rel=1e-14)
    assert _crosspolytope4_by_angle(-0.5) == pytest.approx(1 / 9, rel=1e-12)


@settings(max_examples=40)
@given(lst.cosines(open=True))
def test_crosspolytope_four_buckets_matches_angle_formula(a):
    """n = 4 cross-polytope agrees with the independent 1-D angle integral to 1e-8 relative
    over the whole open range (-1, 1)."""
    exact = theory.probability("crosspolytope", 4, a)
    assert exact == pytest.approx(_crosspolytope4_by_angle(a), rel=1e-8, abs=0)


@pytest.mark.parametrize("a", [1 - 1e-6, 1 - 3e-7, 1 - 1e-7])
def test_crosspolytope_four_buckets_near_one(a):
    """Regression (wedge tip, fixed in e14bac3): n = 4 cross-polytope near a = 1 agrees with
    the 1-D angle integral to 1e-8 relative (it was off by ~0.5 (1 - a): 5e-7 at 1 - 1e-6)."""
    exact = theory.probability("crosspolytope", 4, a)
    assert exact == pytest.approx(_crosspolytope4_by_angle(a), rel=1e-8, abs=0)


@pytest.mark.parametrize("a", [-1 + 1e-13, -1 + 1e-14])
def test_crosspolytope_four_buckets_near_minus_one(a):
    """Regression (box cancellation, fixed in e14bac3): n = 4 cross-polytope near a = -1 agrees
    with the 1-D angle integral to 1e-8 relative (it was off by 1.8e-7 at 1 + a = 1e-13 and
    1.3e-5 at 1e-14, silently)."""
    exact = theory.probability("crosspolytope", 4, a)
    assert exact == pytest.approx(_crosspolytope4_by_angle(a), rel=1e-8, abs=0)


# -- exponents and asymptotics -----------------------------------------------------------------


@settings(max_examples=30)
@given(
    st.sampled_from(SPHERICAL).flatmap(
        lambda f: st.tuples(st.just(f), lst.bucket_counts(f, max_log2=MAX_LOG2))
    ),
    lst.cosines(lo=0.0, hi=1.0).filter(lambda a: a < 1.0),
)
def test_rho_above_the_limit(config, a):
    """rho(n, a) >= (1 - a)/(1 + a) at every n >= 2 and a in [0, 1): the Andoni et al.
    exponent is approached from above (P <= n^-rho_inf). Slack: the quadrature's 1e-9."""
    family, n = config
    r = theory.rho(family, n, a)
    assert r >= theory.limit_rho(family, a) - 2e-9 / math.log(n), (family, n, a, r)


@quadrature
@given(lst.bucket_counts("voronoi", max_log2=MAX_LOG2), lst.cosines())
def test_voronoi_rho_non_negative(n, a):
    """rho(voronoi) >= 0, i.e. P <= 1, over the whole range (including a = 1: rho = 0)."""
    assert theory.rho("voronoi", n, a) >= 0.0


@pytest.mark.parametrize("family", SPHERICAL)
@pytest.mark.parametrize("a", [0.1, 0.5, 0.9, 0.99])
def test_refined_asymptotic_improves_with_n(family, a):
    """|log P - log P_asym(refined)| decreases along n = 2^8, 2^16, 2^24 (error O(1/log n))."""
    gaps = [
        abs(
            theory.log_probability(family, n, a)
            - math.log(theory.asymptotic_probability(family, n, a, refined=True))
        )
        for n in (2**8, 2**16, 2**24)
    ]
    assert gaps[0] > gaps[1] > gaps[2], gaps


@pytest.mark.parametrize("family", SPHERICAL)
@pytest.mark.parametrize("a", [0.1, 0.5, 0.9, 0.99])
def test_rho_decreases_to_the_limit(family, a):
    """rho(n, a) - (1 - a)/(1 + a) is positive and decreases along n = 2^8, 2^12, ..., 2^24."""
    excess = [
        theory.rho(family, 2**e, a) - theory.limit_rho(family, a) for e in (8, 12, 16, 20, 24)
    ]
    assert all(x > 0 for x in excess), excess
    assert all(x > y for x, y in itertools.pairwise(excess)), excess


def test_refined_asymptotic_exact_at_zero():
    """The refined Laplace form equals 1/n exactly at a = 0 (as documented)."""
    for n in (2, 100, 2**24):
        p = theory.asymptotic_probability("voronoi", n, 0.0, refined=True)
        assert p == pytest.approx(1.0 / n, rel=1e-12)


# -- failure is loud ---------------------------------------------------------------------------


@pytest.mark.parametrize("family", SPHERICAL)
def test_outer_rule_raises_rather_than_guess(family, monkeypatch):
    """With the outer rule capped at 4 intervals it cannot meet rtol = 1e-12, and says so:
    QuadratureError naming the tolerance, never a number. Control: under the same cap a lax
    rtol = 1e-2 is met, and agrees with the uncapped value to that tolerance."""
    exact = theory.log_probability(family, 64, 0.7)
    monkeypatch.setattr(spherical_theory, "MAX_INTERVALS", 4)
    with pytest.raises(theory.QuadratureError, match="tolerance"):
        theory.log_probability(family, 64, 0.7, rtol=1e-12)
    assert theory.log_probability(family, 64, 0.7, rtol=1e-2) == pytest.approx(exact, abs=1e-2)
    assert theory.QuadratureError is spherical_theory.QuadratureError
    assert issubclass(theory.QuadratureError, ArithmeticError)


@pytest.mark.parametrize("family", SPHERICAL)
def test_inner_rule_raises_rather_than_guess(family, monkeypatch):
    """With the inner rule capped at its first panel count (no refinement left), an integrand
    that needs more panels raises QuadratureError naming the tolerance. Control: the same cap
    meets a lax rtol = 1e-3, agreeing with the uncapped value."""
    exact = theory.log_probability(family, 2**20, 0.99)
    monkeypatch.setattr(spherical_theory, "START_PANELS", 1)
    monkeypatch.setattr(spherical_theory, "MAX_PANELS", 1)
    with pytest.raises(theory.QuadratureError, match="tolerance"):
        theory.log_probability(family, 2**20, 0.99, rtol=1e-12)
    assert theory.log_probability(family, 2**20, 0.99, rtol=1e-3) == pytest.approx(exact, abs=1e-3)


# -- regressions: QuadratureError at valid cosines near -1 (fixed in e14bac3) ------------------


@pytest.mark.parametrize(("n", "a"), [(2**16, -0.999999), (2**24, -0.99999), (4096, -1 + 1e-8)])
def test_crosspolytope_near_antipodal_reaches_default_tolerance(n, a):
    """Regression (box cancellation, fixed in e14bac3): valid cosines near -1 meet the default
    rtol (they raised QuadratureError) and agree with rtol = 1e-6."""
    loose = theory.log_probability("crosspolytope", n, a, rtol=1e-6)
    assert theory.log_probability("crosspolytope", n, a) == pytest.approx(loose, rel=2e-6)


@pytest.mark.parametrize(
    ("n", "a"), [(2**24, -1 + 1e-8), (2**12, -1 + 1e-11), (3, math.nextafter(-1.0, 0.0))]
)
def test_voronoi_near_antipodal_reaches_default_tolerance(n, a):
    """Regression (Phi2 rounding, fixed in e14bac3): valid cosines near -1 meet the default
    rtol (they raised QuadratureError) and agree with rtol = 1e-6."""
    loose = theory.log_probability("voronoi", n, a, rtol=1e-6)
    assert theory.log_probability("voronoi", n, a) == pytest.approx(loose, rel=2e-6)
