"""lshsim.theory: input validation of every entry point, and the exact values against Monte
Carlo (fixed seeds, 4-sigma Wilson tolerances) including the calibration of the Monte-Carlo
intervals.

The closed forms are in tests/theory/test_closed_forms.py, ``probabilities`` in
tests/theory/test_families.py, the quadrature families' own properties in
tests/theory/test_spherical.py."""

from __future__ import annotations

import functools
import math

import pytest
from scipy import stats

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.hashing import FAMILIES
from tests.stats import assert_agrees

# -- bad input ---------------------------------------------------------------------------------

_BAD_INPUT = [
    ("family", lambda: theory.log_probability("nope", 4, 0.5)),
    ("family", lambda: theory.collision_probability("nope", 8, overlap=0.5)),
    ("family", lambda: theory.limit_rho("nope", 0.5)),
    (r"n \(buckets\)", lambda: theory.log_probability("voronoi", 1, 0.5)),
    (r"n \(buckets\)", lambda: theory.log_probability("voronoi", 2**63, 0.5)),
    (r"n \(buckets\)", lambda: theory.log_probability("voronoi", 4.5, 0.5)),
    (r"n \(buckets\)", lambda: theory.log_probability("voronoi", True, 0.5)),
    (r"n \(buckets\)", lambda: theory.rho("voronoi", 1, 0.5)),
    (r"n \(buckets\)", lambda: theory.voronoi_probability(1, 0.5)),
    ("power of two", lambda: theory.log_probability("simhash", 12, 0.5)),
    ("power of two", lambda: theory.log_probability("pstable", 12, 0.5)),
    ("power of two", lambda: theory.asymptotic_probability("simhash", 12, 0.5)),
    ("power of two", lambda: theory.collision_probability("simhash", 12, overlap=0.5)),
    ("even", lambda: theory.log_probability("crosspolytope", 7, 0.5)),
    ("even", lambda: theory.crosspolytope_probability(7, 0.5)),
    ("even", lambda: theory.rho("crosspolytope", 7, 0.5)),
    ("cosine", lambda: theory.log_probability("voronoi", 4, 1.0000001)),
    ("cosine", lambda: theory.probability("crosspolytope", 4, -1.5)),
    ("cosine", lambda: theory.log_probability("voronoi", 4, math.nan)),
    ("cosine", lambda: theory.log_probability("simhash", 4, math.inf)),
    ("cosine", lambda: theory.log_probability("pstable", 4, "x")),
    ("cosine", lambda: theory.limit_rho("voronoi", 2.0)),
    ("cosine", lambda: theory.asymptotic_probability("voronoi", 8, 1.0)),
    ("cosine", lambda: theory.asymptotic_probability("crosspolytope", 8, -1.0)),
    ("rotation", lambda: theory.log_probability("crosspolytope", 8, 0.5, rotation="hadamard")),
    (
        "rotation",
        lambda: theory.collision_probability("crosspolytope", 8, overlap=0.5, rotation="hadamard"),
    ),
    ("overlap", lambda: theory.log_probability("minhash", 8, 0.5)),
    ("overlap", lambda: theory.log_probability("tokenid", 8, 0.5)),
    ("overlap", lambda: theory.limit_rho("minhash", 0.5)),
    ("overlap", lambda: theory.asymptotic_probability("tokenid", 8, 0.5)),
    ("rtol", lambda: theory.log_probability("voronoi", 8, 0.5, rtol=0.0)),
    ("rtol", lambda: theory.log_probability("voronoi", 8, 0.5, rtol=1e-14)),
    ("rtol", lambda: theory.log_probability("crosspolytope", 8, 0.5, rtol=0.1)),
    ("rtol", lambda: theory.log_probability("voronoi", 8, 0.5, rtol=math.nan)),
    ("rtol", lambda: theory.voronoi_probability(8, 0.5, rtol=1.0)),
    ("unknown parameter", lambda: theory.log_probability("voronoi", 8, 0.5, k=3)),
    (r"w \(width\)", lambda: theory.limit_rho("pstable", 0.5, w=-1.0)),
    (r"overlap \(f\)", lambda: theory.collision_probability("voronoi", 8, overlap=1.5)),
    ("cosines", lambda: theory.collision_probability("voronoi", 8, overlap=0.5, cosines=1)),
]


@pytest.mark.parametrize(("match", "call"), _BAD_INPUT, ids=[m for m, _ in _BAD_INPUT])
def test_bad_input_raises_value_error_naming_it(match, call):
    """Every entry point rejects a bad family, n, cosine, rotation, rtol or parameter with a
    ValueError whose message names it (never a number, never another exception type)."""
    with pytest.raises(ValueError, match=match):
        call()


def test_asymptotic_rejects_odd_crosspolytope():
    """asymptotic_probability('crosspolytope', n odd) is rejected like probability()."""
    with pytest.raises(ValueError, match="even"):
        theory.asymptotic_probability("crosspolytope", 7, 0.5)


def test_minhash_sentence_rejects_unknown_parameter():
    """collision_probability('minhash', ..., bogus=1): ValueError naming it, as for tokenid."""
    with pytest.raises(ValueError, match="unknown parameter"):
        theory.collision_probability("minhash", 8, overlap=0.5, bogus=1)


@pytest.mark.parametrize(("family", "params"), [("voronoi", {"bogus": 3}), ("simhash", {"k": 3})])
def test_limit_rho_rejects_unknown_parameter(family, params):
    """limit_rho rejects parameters its family does not take (probability() does)."""
    with pytest.raises(ValueError, match="unknown parameter"):
        theory.limit_rho(family, 0.5, **params)


# -- theory against high-sample Monte Carlo ----------------------------------------------------

#: one seed for every Monte-Carlo comparison: a 4-sigma miss has probability ~6e-5 per check
MC_SEED = 20240

_GRID = [
    (family, n, a)
    for family in theory.COSINE_FAMILIES
    for n in (4, 64, 1024)
    for a in (-0.5, 0.3, 0.8, 0.95)
]


@pytest.mark.parametrize(("family", "n", "a"), _GRID)
def test_theory_matches_reduced_monte_carlo(family, n, a):
    """Exact P(a) lies in the 4-sigma Wilson interval of 2e5 reduced-mode trials (5e4 for the
    O(n)-per-trial spherical families at n = 1024) on the grid n x a for every cosine family."""
    samples = 50_000 if family in ("voronoi", "crosspolytope") and n >= 1024 else 200_000
    est = estimate_collision(family, n, cosine=a, samples=samples, seed=MC_SEED, mode="reduced")
    assert_agrees(est.successes, est.samples, theory.probability(family, n, a))


@pytest.mark.parametrize(
    ("family", "n", "dim", "a"),
    [
        ("voronoi", 8, 16, 0.5),
        ("voronoi", 5, 3, -0.3),
        ("crosspolytope", 8, 16, 0.5),
        ("crosspolytope", 6, 3, 0.8),
        ("simhash", 8, 5, 0.6),
        ("pstable", 16, 7, 0.2),
    ],
)
def test_theory_matches_full_monte_carlo(family, n, dim, a):
    """Real d-dimensional vectors hashed by the kernels (full mode, 1e4 pairs) agree with the
    exact P(a): the reduced sufficient statistics are not the only thing the theory matches."""
    est = estimate_collision(family, n, cosine=a, dim=dim, samples=10_000, seed=MC_SEED)
    assert_agrees(est.successes, est.samples, theory.probability(family, n, a))


_SENTENCE = [(family, n, f) for family in FAMILIES for n, f in ((16, 0.5), (64, 0.875))] + [
    ("simhash", 16, 0.25)  # full mode below: real sentence embeddings
]


@pytest.mark.parametrize(("family", "n", "f"), _SENTENCE)
def test_sentence_target_matches_monte_carlo(family, n, f):
    """collision_probability (the exact E[P(cos)] of the sentence model, l = 8, d = 16) agrees
    with simulation: |theory - MC| <= 4 sqrt(se_mc^2 + se_theory^2). Reduced mode for the
    vector families, full mode (real token sets) for minhash, tokenid and ngram, one full-mode
    simhash point with real sentence embeddings."""
    full = FAMILIES[family].input_kind != "vectors" or f == 0.25
    th = theory.collision_probability(family, n, overlap=f, length=8, dim=16, cosines=2**14)
    est = estimate_collision(
        family,
        n,
        overlap=f,
        length=8,
        dim=16,
        samples=10_000 if full else 200_000,
        seed=MC_SEED,
        mode="full" if full else "reduced",
    )
    p = est.estimate
    se_mc = math.sqrt(max(p * (1 - p), 1.0 / est.samples) / est.samples)
    tol = 4.0 * math.hypot(se_mc, th.std_error)
    assert abs(p - th.probability) <= tol, (th.probability, th.std_error, p, se_mc)


# -- calibration of the Monte-Carlo intervals --------------------------------------------------

#: seeds per calibration case, and the Binomial(SEEDS, 0.95) 99.9% acceptance interval
SEEDS = 400
COVER_LO = int(stats.binom.ppf(0.0005, SEEDS, 0.95))
COVER_HI = int(stats.binom.ppf(0.9995, SEEDS, 0.95))
_CALIBRATION = [("simhash", 16, 0.5), ("voronoi", 16, 0.3)]


@functools.cache
def _intervals(family: str, n: int, a: float) -> tuple[tuple[float, float], ...]:
    """The 95% Wilson intervals of SEEDS independent 2000-trial reduced-mode estimates."""
    out = []
    for seed in range(SEEDS):
        est = estimate_collision(family, n, cosine=a, samples=2000, seed=seed, mode="reduced")
        out.append((est.ci_low, est.ci_high))
    return tuple(out)


def _coverage(intervals, value: float) -> int:
    return sum(lo <= value <= hi for lo, hi in intervals)


@pytest.mark.parametrize(("family", "n", "a"), _CALIBRATION)
def test_wilson_intervals_cover_at_nominal_rate(family, n, a):
    """The 95% intervals of estimate_collision cover the exact P in a count of the 400 seeds
    inside the 99.9% acceptance interval of Binomial(400, 0.95), [364, 393]."""
    covered = _coverage(_intervals(family, n, a), theory.probability(family, n, a))
    assert COVER_LO <= covered <= COVER_HI, (covered, COVER_LO, COVER_HI)


@pytest.mark.parametrize(("family", "n", "a"), _CALIBRATION)
def test_calibration_rejects_a_value_five_percent_off(family, n, a):
    """Control for the test above: the same intervals cover 1.05 P too rarely to pass it
    (about 1 sigma off per estimate), so the calibration test can fail."""
    wrong = 1.05 * theory.probability(family, n, a)
    assert _coverage(_intervals(family, n, a), wrong) < COVER_LO


def test_calibration_acceptance_interval():
    """The acceptance interval is the documented one (guards the quantile arithmetic)."""
    assert (COVER_LO, COVER_HI) == (364, 393)
    assert (
        stats.binom.cdf(COVER_HI, SEEDS, 0.95) - stats.binom.cdf(COVER_LO - 1, SEEDS, 0.95) > 0.998
    )
