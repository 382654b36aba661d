"""The lazy reduced sampler of the spherical families and its inverse normal CDF.

``Voronoi.sample_reduced`` / ``CrossPolytope.sample_reduced`` (Gaussian rotation) sample the
collision indicator of ``n`` (resp. ``n/2``) i.i.d. bivariate-normal pairs lazily (see
``lshsim.hashing.reduced.lazy_sample``): exact in distribution, not stream-identical to
drawing every pair. So the checks here are statistical: collision rates against the exact
probabilities of :mod:`lshsim.theory` and against the brute-force sampler, with tolerances
from the binomial standard deviation at fixed seeds, plus the exact pieces (the inverse CDF,
the order-statistic quantiles, determinism, independence of the buffer size).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.hashing import reduced
from lshsim.hashing.reduced import _max_of, _min_of, _tn_quantile
from lshsim.hashing.spherical import (
    LAZY_MIN_COLS,
    CrossPolytope,
    Voronoi,
    lazy_sample,
    ndtri,
    reduced_argmax,
)

# |z| of one rate against its exact value; the chance of a false alarm per check is ~7e-6.
Z_MAX = 4.5
FAMILIES = {"voronoi": (Voronoi, False, 1), "crosspolytope": (CrossPolytope, True, 2)}


def _z(successes: int, trials: int, p: float) -> float:
    """Standardised binomial deviation; p in {0, 1} demands the exact count."""
    var = trials * p * (1.0 - p)
    if var == 0.0:
        return 0.0 if successes == trials * p else math.inf
    return (successes - trials * p) / math.sqrt(var)


# --------------------------------------------------------------------------- ndtri


def test_ndtri_matches_scipy_with_relative_precision():
    p = np.concatenate(
        [
            10.0 ** -np.linspace(1.0, 300.0, 3001),
            np.linspace(1e-3, 1.0 - 1e-3, 4001),
            0.5 + np.linspace(-1e-9, 1e-9, 201),
            [0.02425, 0.025, 0.25, 0.5],
        ]
    )
    got = np.array([ndtri(x) for x in p])
    want = special.ndtri(p)
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    assert rel.max() < 1e-14, (rel.max(), p[rel.argmax()])


def test_ndtri_upper_half_and_edges():
    q = 10.0 ** -np.linspace(1.0, 16.0, 151)
    got = np.array([ndtri(1.0 - x) for x in q])
    assert np.allclose(got, special.ndtri(1.0 - q), rtol=1e-14, atol=0)
    assert ndtri(0.0) == -math.inf
    assert ndtri(1.0) == math.inf
    assert math.isnan(ndtri(1.5))
    assert math.isnan(ndtri(-0.1))
    assert math.isnan(ndtri(math.nan))
    assert abs(ndtri(1e-310) - special.ndtri(1e-310)) < 1e-6 * 37.7  # no refinement there


# --------------------------------------------------------------------------- order statistics


@pytest.mark.parametrize(
    ("lo", "hi"),
    [(-math.inf, math.inf), (-math.inf, 1.3), (0.0, math.inf), (0.0, 0.4), (-2.0, 3.0), (1.0, 2.5)],
)
def test_truncated_quantile_matches_scipy(lo, hi):
    for w in (1e-6, 0.01, 0.3, 0.5, 0.77, 0.999):
        got = _tn_quantile(lo, hi, w, 1.0 - w)
        want = stats.truncnorm.ppf(w, lo, hi)
        assert lo <= got <= hi
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (lo, hi, w)


@pytest.mark.parametrize("count", [1, 7, 4096, 2**20, 2**30])
@pytest.mark.parametrize("unif", [1e-12, 0.1, 0.5, 0.9, 1.0 - 2.0**-53])
def test_max_of_normals_upper_tail_is_exact(count, unif):
    """P(max of count > x) = 1 - unif^(1/count), with relative precision in the tail."""
    x = _max_of(-math.inf, math.inf, count, unif)
    want_tail = -math.expm1(math.log(unif) / count)
    assert special.ndtr(-x) == pytest.approx(want_tail, rel=1e-10)
    # below a truncation point h: P(X > x | X < h) = 1 - unif^(1/count) as well
    h = 3.0
    x = _max_of(-math.inf, h, count, unif)
    tail = (special.ndtr(-x) - special.ndtr(-h)) / special.ndtr(h)
    assert x <= h
    assert tail == pytest.approx(want_tail, rel=1e-7, abs=1e-15)


@pytest.mark.parametrize("count", [1, 5, 1000])
def test_min_of_truncated_normals(count):
    lo, hi, unif = -1.0, 2.0, 0.3
    x = _min_of(lo, hi, count, unif)
    mass = special.ndtr(hi) - special.ndtr(lo)
    survive = ((special.ndtr(hi) - special.ndtr(x)) / mass) ** count  # P(min > x)
    assert survive == pytest.approx(unif, rel=1e-9)


# --------------------------------------------------------------------------- rates vs theory

GRID_N = (2, 4, 8, 32, 64, 1000, 4096, 2**16, 2**20)
GRID_A = (-1.0, -0.9, -0.5, 0.0, 0.3, 0.7, 0.9, 0.99, 1.0)
TRIALS = 20000


@pytest.mark.parametrize("family", list(FAMILIES))
def test_collision_rate_matches_exact_probability(family):
    """Every (n, a) of the grid within Z_MAX sigma, and the sum of z^2 within its chi-square
    tail (probability 1e-6), at a fixed seed."""
    cls = FAMILIES[family][0]
    zs = []
    for i, n in enumerate(GRID_N):
        for j, a in enumerate(GRID_A):
            rng = np.random.default_rng([11, i, j])
            hits = int(cls.sample_reduced(n, np.full(TRIALS, a), rng).sum())
            p = theory.probability(family, n, a)
            z = _z(hits, TRIALS, p)
            assert abs(z) < Z_MAX, (family, n, a, hits / TRIALS, p, z)
            zs.append(z)
    chi2 = float(np.sum(np.square(zs)))
    assert chi2 < stats.chi2.isf(1e-6, len(zs)), chi2


@pytest.mark.parametrize("family", list(FAMILIES))
def test_mixed_cosines_in_one_call(family):
    """One call with many cosines: the count matches the sum of the exact probabilities."""
    cls = FAMILIES[family][0]
    n = 4096
    cos = np.random.default_rng(3).uniform(-0.2, 0.999, 40000)
    hits = cls.sample_reduced(n, cos, np.random.default_rng(4))
    p = theory.probabilities(family, n, cos)
    z = (hits.sum() - p.sum()) / math.sqrt(np.sum(p * (1 - p)))
    assert abs(z) < Z_MAX
    # and the hits concentrate where p is large (the indicator tracks its own cosine)
    hi = cos > np.median(cos)
    z_hi = (hits[hi].sum() - p[hi].sum()) / math.sqrt(np.sum(p[hi] * (1 - p[hi])))
    assert abs(z_hi) < Z_MAX


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("cols", [LAZY_MIN_COLS, 64, 200])
@pytest.mark.parametrize("a", [-0.6, 0.0, 0.5, 0.95])
def test_lazy_agrees_with_brute_force(family, cols, a):
    """Two-sample test: lazy and brute-force (every pair drawn) rates at the same sizes."""
    signed = FAMILIES[family][1]
    cos = np.full(TRIALS, a)
    lazy = lazy_sample(cols, cos, np.random.default_rng(21), signed)[0].mean()
    brute = reduced_argmax(cols, cos, np.random.default_rng(22), signed).mean()
    pool = (lazy + brute) / 2
    if pool in (0.0, 1.0):
        assert lazy == brute
        return
    z = (lazy - brute) / math.sqrt(pool * (1 - pool) * 2 / TRIALS)
    assert abs(z) < Z_MAX, (lazy, brute, z)


@settings(max_examples=40, deadline=None)
@given(
    family=st.sampled_from(list(FAMILIES)),
    log2n=st.integers(1, 30),
    a=st.floats(-1.0, 1.0, allow_nan=False),
)
def test_rate_matches_theory_property(family, log2n, a):
    cls, signed, per = FAMILIES[family]
    n = 2**log2n if log2n > 1 or family == "voronoi" else 2
    cos = np.full(3000, a)
    hits = cls.sample_reduced(n, cos, np.random.default_rng(log2n))
    assert hits.dtype == np.bool_ and hits.shape == cos.shape
    if n <= 2**24:  # the exact value is cheap enough here
        p = theory.probability(family, n, a)
        assert abs(_z(int(hits.sum()), hits.size, p)) < 5.0, (n, a, hits.mean(), p)
    cols = n // per
    if cols >= 1:
        steps = lazy_sample(cols, cos[:200], np.random.default_rng(0), signed)[1]
        assert (steps >= 0).all() and (steps <= cols).all()  # each step removes one pair


# --------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("signed", [False, True])
def test_deterministic_and_independent_of_the_buffer(signed, monkeypatch):
    cos = np.random.default_rng(5).uniform(0.5, 0.99, 3000)
    first = lazy_sample(4096, cos, np.random.default_rng(9), signed)
    again = lazy_sample(4096, cos, np.random.default_rng(9), signed)
    other = lazy_sample(4096, cos, np.random.default_rng(10), signed)
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0], other[0])
    # a tiny first buffer: trials run out of uniforms and restart on refilled buffers,
    # consuming the generator's stream in the same order, so nothing changes
    monkeypatch.setattr(reduced, "LAZY_UNIFORMS_PER_TRIAL", 0)
    small = lazy_sample(4096, cos, np.random.default_rng(9), signed)
    assert np.array_equal(first[0], small[0]) and np.array_equal(first[1], small[1])


@pytest.mark.parametrize("family", list(FAMILIES))
def test_estimate_same_numbers_for_any_thread_count(family):
    kw = {"cosine": 0.9, "samples": 5000, "seed": 17, "mode": "reduced"}
    one = estimate_collision(family, 4096, threads=1, **kw)
    two = estimate_collision(family, 4096, threads=2, **kw)
    assert one.successes == two.successes
    assert abs(_z(one.successes, one.samples, theory.probability(family, 4096, 0.9))) < Z_MAX


@pytest.mark.parametrize("signed", [False, True])
def test_lazy_never_reads_past_its_buffer(signed):
    """A trial that runs out of uniforms restarts; no step may read past the buffer's end.

    The buffer is a view whose next elements hold a poison value: with every end position,
    the trials finished, their outcomes and the uniforms used must not depend on the poison.
    (A step used to take up to 5 uniforms after checking for 4: the cross-polytope estimate
    of ``collision_vs_n`` at n = 1024, cosine 0.9 then moved between runs of one process.)
    """
    cos = np.full(40, 0.9)
    stream = np.random.default_rng(3).random(600)
    for total in range(2 * reduced._LAZY_STEP_UNIFORMS, stream.size):
        seen = []
        for poison in (0.0, 1.0 - 2.0**-53):
            buf = np.full(total + 8, poison)
            buf[:total] = stream[:total]
            out = np.zeros(cos.size, dtype=np.bool_)
            steps = np.zeros(cos.size, dtype=np.int64)
            t, pos = reduced._lazy_trials(cos, 512, signed, buf[:total], out, steps, 0)
            assert pos <= total, (total, pos)
            seen.append((t, pos, out[:t].tolist(), steps[:t].tolist()))
        assert seen[0] == seen[1], total


def test_crosspolytope_estimate_repeats_exactly():
    """The cell whose committed estimate moved (3819 vs 3822 of 10^4): same seed, same count."""
    kw = {"cosine": 0.9, "samples": 10_000, "seed": 1163578482, "mode": "reduced", "threads": 1}
    counts = {estimate_collision("crosspolytope", 1024, **kw).successes for _ in range(8)}
    assert len(counts) == 1, counts
    p = theory.probability("crosspolytope", 1024, 0.9)
    assert abs(_z(counts.pop(), kw["samples"], p)) < Z_MAX
