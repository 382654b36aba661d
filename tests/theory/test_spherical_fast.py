"""The compiled spherical laws give the numbers of the NumPy implementation they replaced.

:mod:`lshsim.laws.spherical` evaluates the Voronoi and cross-polytope integrands with Numba
kernels over scipy's own Owen's T and normal CDFs, and computes the inner integrals of each
``X`` interval once; the quadrature is unchanged, so only last-ulp differences of ``exp`` and
``log`` (NumPy's SIMD loops against libm) and of summation order remain. Two references:

* ``data/spherical_reference.json``: ``log P`` on the grid families x n in {3, 4, 8, 16, 64,
  1024, 2^20} x a in {-0.999, -0.9, -0.5, 0, 0.3, 0.7, 0.95, 0.999999}, computed by the NumPy
  implementation (commit 5ef02db). Every representable ``P`` agrees to 1e-13 relative; a ``P``
  below the float range (``log P < -708``, the a = -0.999 corner) has ``log P`` to 1e-13
  relative (its ``P`` is 0.0 either way).
* the NumPy integrands ``log Phi2`` and ``log R`` of that commit, copied below, pointwise at
  1e-13 relative over every branch: Owen's form, the ``u = 0`` edge, the ``min(u, v) < -37``
  tail, the slivers near ``a = -1`` and the outside of the cross-polytope's wedge.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import log_ndtr, ndtr, owens_t

from lshsim.laws import spherical, spherical_kernels

REFERENCE = Path(__file__).parent / "data" / "spherical_reference.json"
#: agreement required of every probability (the quadrature's own rtol is 1e-9)
RTOL = 1e-13
#: log of the smallest normal double: below it P is not representable
LOG_TINY = math.log(np.finfo(float).tiny)
LAWS = {
    "voronoi": spherical.voronoi_log_probability,
    "crosspolytope": spherical.crosspolytope_log_probability,
}


@pytest.mark.parametrize("family", sorted(LAWS))
def test_probabilities_match_the_numpy_implementation(family):
    """Every grid value agrees with the stored NumPy value: ``P`` to 1e-13 relative."""
    stored = json.loads(REFERENCE.read_text())
    bad = []
    for n, a in itertools.product(stored["buckets"], stored["cosines"]):
        old = stored["log_probability"][family][f"{n},{a!r}"]
        new = LAWS[family](n, a)
        if old >= LOG_TINY:
            off = abs(math.expm1(new - old))  # relative error of P
        else:
            off = abs(new - old) / abs(old)  # relative error of log P
        if not off <= RTOL:
            bad.append(f"n={n} a={a}: log P {new!r}, was {old!r} ({off:.2e})")
    assert not bad, "\n".join(bad)


# -- the NumPy integrands of commit 5ef02db, verbatim up to names -------------------------------

_SLIVER_T, _SLIVER_W = np.polynomial.legendre.leggauss(48)
_BOX_T, _BOX_W = np.polynomial.legendre.leggauss(32)
_CELL_T, _CELL_W = np.polynomial.legendre.leggauss(8)


def _old_log_phi2(x, y, alpha, beta):
    u = alpha * x + beta * y
    v = alpha * x - beta * y
    with np.errstate(divide="ignore", invalid="ignore"):
        num_u, num_v = beta * x - alpha * y, beta * x + alpha * y
        au = np.where(u == 0.0, np.copysign(np.inf, num_u), num_u / u)
        av = np.where(v == 0.0, np.copysign(np.inf, num_v), num_v / v)
        tu = owens_t(u, au)
        tv = owens_t(v, av)
        half = np.where((u * v < 0) | ((u * v == 0) & (u + v < 0)), 0.5, 0.0)
        comp = 0.5 * ndtr(-u) + 0.5 * ndtr(-v) + tu + tv + half
        direct = 0.5 * ndtr(u) + 0.5 * ndtr(v) - tu - tv - half
        out = np.where(comp < 0.5, np.log1p(-np.minimum(comp, 0.5)), np.log(np.maximum(direct, 0)))
    if alpha < 0.3:
        small = comp >= 0.5
        if small.any():
            with np.errstate(divide="ignore"):  # a sliver that underflows to 0
                out[small] = np.log(_old_phi2_sliver(x[small], y[small], alpha, beta))
    return np.where(np.minimum(u, v) < -37.0, np.minimum(log_ndtr(u), log_ndtr(v)), out)


def _old_phi2_sliver(x, y, alpha, beta):
    kappa = beta / alpha
    xs = x[:, None]
    start = np.maximum(x, 0.0)
    tail = np.where(x >= 0.0, 12.0, np.sqrt(x * x + 80.0) - np.abs(x))
    total = np.zeros_like(x)
    for lo, hi in ((np.zeros_like(x), start), (start, start + tail)):
        half = 0.5 * (hi - lo)
        t = (0.5 * (lo + hi))[:, None] + half[:, None] * _SLIVER_T
        ys = y[:, None]
        dens = np.exp(-0.5 * (ys + t / kappa) ** 2) + np.exp(-0.5 * (ys - t / kappa) ** 2)
        total += half * ((dens * ndtr(xs - t)) @ _SLIVER_W)
    return total / (kappa * math.sqrt(2.0 * math.pi))


def _old_log_box(x, y, alpha, beta, a):
    u = alpha * x + beta * y
    v = alpha * x - beta * y
    s = 2.0 * alpha * beta
    with np.errstate(divide="ignore", invalid="ignore"):
        b_minus = (beta * x - alpha * y) / u
        c_minus = (beta * x + alpha * y) / v
        b_plus = (v + a * u) / (u * s)
        c_plus = (u + a * v) / (v * s)
        comp = 2.0 * (owens_t(u, b_minus) + owens_t(u, b_plus) + owens_t(v, c_minus))
        comp = comp + 2.0 * owens_t(v, c_plus)
        small = np.log1p(-np.minimum(comp, 0.5))
        out = np.where(comp < 0.5, small, np.log(np.maximum(1.0 - comp, 0.0)))
        if alpha < 0.3:
            tiny = (comp >= 0.5) & (u > 0) & (v > 0)
            if tiny.any():
                out[tiny] = np.log(_old_box_sliver(u[tiny], v[tiny], alpha, beta))
    return np.where((u > 0) & (v > 0), out, -np.inf)


def _old_interval_mass(lo, hi):
    lo, hi = np.minimum(lo, hi), hi
    narrow = 0.5 * (hi - lo)
    mid = 0.5 * (lo + hi)
    pts = mid[..., None] + narrow[..., None] * _CELL_T
    by_rule = narrow * (np.exp(-0.5 * pts * pts) @ _CELL_W) / math.sqrt(2.0 * math.pi)
    by_tails = np.where(lo > 0, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))
    return np.where(hi - lo < 0.5, by_rule, by_tails)


def _old_box_sliver(u, v, alpha, beta):
    uu, vv = u[:, None], v[:, None]
    kink = np.clip(np.abs(uu - vv) / (2.0 * alpha), 0.0, 12.0)
    end = np.clip((uu + vv) / (2.0 * alpha), 0.0, 12.0)
    total = np.zeros(uu.shape[0])
    for lo_e, hi_e in itertools.pairwise((-end, -kink, kink, end)):
        half = 0.5 * (hi_e - lo_e)
        xi = 0.5 * (lo_e + hi_e) + half * _BOX_T
        lo = np.maximum(-uu - alpha * xi, alpha * xi - vv) / beta
        hi = np.minimum(uu - alpha * xi, alpha * xi + vv) / beta
        with np.errstate(invalid="ignore"):
            mass = np.where(hi > lo, _old_interval_mass(lo, hi), 0.0)
        total += half[:, 0] * ((np.exp(-0.5 * xi * xi) * mass) @ _BOX_W)
    return total / math.sqrt(2.0 * math.pi)


#: cosines of the pointwise check: both slivers (alpha < 0.3 below a = -0.82) and the ends
POINT_COSINES = (-0.999999, -0.999, -0.9, -0.5, 0.0, 0.7, 0.999999)


def _points(a):
    """Rotated ``(x, y)``: a lattice over the integrands' range, ``u = 0`` and ``v = 0``
    exactly (a = 0, where ``alpha = beta``), and the deep left tail (``min(u, v) < -37``)."""
    x, y = np.meshgrid(np.linspace(-60.0, 12.0, 37), np.linspace(0.0, 9.0, 10))
    x, y = x.ravel(), y.ravel()
    if a == 0.0:
        edge = np.linspace(-3.0, 3.0, 7)
        x, y = np.concatenate([x, edge, edge]), np.concatenate([y, -edge, edge])
    return x, y


@pytest.mark.parametrize("a", POINT_COSINES)
def test_integrands_match_the_numpy_implementation(a):
    """``log Phi2`` and ``log R`` at each point: the same number to 1e-13 relative, the same
    infinities (``R`` outside ``u, v > 0``, ``Phi2`` underflowing)."""
    alpha, beta = spherical._alpha_beta(a)
    x, y = _points(a)
    np.testing.assert_allclose(
        spherical._log_phi2(x, y, alpha, beta), _old_log_phi2(x, y, alpha, beta), rtol=RTOL
    )
    np.testing.assert_allclose(
        spherical._log_box(x, y, alpha, beta, a), _old_log_box(x, y, alpha, beta, a), rtol=RTOL
    )


def test_points_reach_every_branch():
    """The pointwise check is not vacuous: its points reach each branch of both integrands."""
    reached = set()
    for a in POINT_COSINES:
        alpha, beta = spherical._alpha_beta(a)
        x, y = _points(a)
        u, v = alpha * x + beta * y, alpha * x - beta * y
        log_phi2 = spherical._log_phi2(x, y, alpha, beta)
        log_box = spherical._log_box(x, y, alpha, beta, a)
        reached |= {"u = 0"} if np.any(u == 0.0) else set()
        reached |= {"tail"} if np.any(np.minimum(u, v) < -37.0) else set()
        reached |= {"outside wedge"} if np.any(np.isneginf(log_box)) else set()
        if alpha < spherical_kernels.SLIVER_ALPHA:
            inside = np.minimum(u, v) >= -37.0
            reached |= {"phi2 sliver"} if np.any(inside & (log_phi2 < math.log(0.5))) else set()
            wedge = (u > 0) & (v > 0)
            reached |= {"box sliver"} if np.any(wedge & (log_box < math.log(0.5))) else set()
    assert reached == {"u = 0", "tail", "outside wedge", "phi2 sliver", "box sliver"}


@pytest.mark.parametrize(("family", "a"), [("voronoi", -0.95), ("crosspolytope", 0.6)])
def test_generic_integrand_gives_the_family_number(family, a):
    """The generic rule (a Python ``log_f`` over the array integrands, NumPy ``Y`` limits)
    and the compiled family rule are the same computation: equal to 1e-13."""
    n = 16
    alpha, beta = spherical._alpha_beta(a)
    if family == "voronoi":

        def log_f(x, y):
            return -0.5 * (x * x + y * y) + (n - 1) * spherical._log_phi2(x, y, alpha, beta)

        itg = spherical._Integrand(log_f, -math.inf, math.inf)
        const = math.log(n) - math.log(2.0 * math.pi)
    else:
        m = n // 2

        def log_f(x, y):
            return -0.5 * (x * x + y * y) + (m - 1) * spherical._log_box(x, y, alpha, beta, a)

        itg = spherical._Integrand(log_f, 0.0, alpha / beta)
        const = math.log(n) - math.log(2.0 * math.pi)
    generic = min(0.0, const + spherical._integrate(itg, spherical.RTOL))
    assert generic == pytest.approx(LAWS[family](n, a), rel=RTOL, abs=0)
