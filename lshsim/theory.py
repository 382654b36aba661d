"""Exact collision probabilities that have a closed form.

Small pure functions shared by tests, experiments and plots. This module holds the closed
forms (SimHash, p-stable with the radix mapping, min-hash/Jaccard, Token-ID); the quadratures
for Voronoi and cross-polytope belong here too.

References:
    M. Charikar, STOC 2002 (SimHash). M. Datar et al., SoCG 2004 (p-stable LSH).
    A. Broder, 1997 (min-hash).
"""

from __future__ import annotations

import math

from scipy.special import ndtr

from lshsim._validate import check_buckets, check_float, check_int


def simhash_probability(n: int, cosine: float) -> float:
    """``P = (1 - arccos(a)/pi)^k`` for ``n = 2^k`` buckets and unit vectors at cosine ``a``."""
    n = check_buckets(n, power_of_two=True, family="simhash")
    a = check_float("cosine", cosine, -1.0, 1.0)
    return (1.0 - math.acos(a) / math.pi) ** (n.bit_length() - 1)


def datar_probability(distance: float, w: float) -> float:
    """Datar et al.'s per-direction probability that two points share a cell (no mapping).

    ``p(c) = 1 - 2 Phi(-w/c) - 2 / (sqrt(2 pi) w / c) (1 - exp(-w^2 / (2 c^2)))`` at Euclidean
    distance ``c``; ``p(0) = 1``.
    """
    c = check_float("distance", distance, 0.0, math.inf, hi_open=True)
    w = check_float("w (width)", w, 0.0, 1e300, lo_open=True)
    if c == 0.0:
        return 1.0
    r = w / c
    return (
        1.0 - 2.0 * ndtr(-r) - 2.0 / (math.sqrt(2.0 * math.pi) * r) * (1.0 - math.exp(-r * r / 2.0))
    )


def _triangle_expectation(j: float, sigma: float) -> float:
    """``E[max(0, 1 - |X - j|)]`` for ``X ~ N(0, sigma^2)``, in closed form."""

    def dens(x):  # sigma^2 * density of N(0, sigma^2) at x
        z = abs(x) / sigma
        return 0.0 if z > 60.0 else sigma / math.sqrt(2.0 * math.pi) * math.exp(-0.5 * z * z)

    cdf_lo, cdf_mid, cdf_hi = ndtr((j - 1) / sigma), ndtr(j / sigma), ndtr((j + 1) / sigma)
    left = dens(j - 1) - dens(j) + (1 - j) * (cdf_mid - cdf_lo)  # int (x - j + 1) phi, [j-1, j]
    right = (j + 1) * (cdf_hi - cdf_mid) + dens(j + 1) - dens(j)  # int (j + 1 - x) phi, [j, j+1]
    return max(0.0, left + right)


def pstable_direction_probability(distance: float, w: float, radix: int) -> float:
    """Per-direction collision probability of :class:`lshsim.hashing.PStable`.

    With ``D ~ N(0, c^2)`` the projected difference, the cell difference is ``t`` with
    probability ``E[tri(D/w - t)]``; cells collide when congruent mod ``radix``:
    ``q = sum_{t in Z} E[tri(D/w - t radix)]``. The ``t = 0`` term is :func:`datar_probability`.
    """
    c = check_float("distance", distance, 0.0, math.inf, hi_open=True)
    w = check_float("w (width)", w, 0.0, 1e300, lo_open=True)
    r = check_int("radix", radix, 2)
    sigma = c / w
    if sigma == 0.0:  # c = 0, or so small against w that D/w is 0 in floating point
        return 1.0
    total = _triangle_expectation(0.0, sigma)
    t = 1
    while True:  # terms decay like exp(-(t r - 1)^2 / (2 sigma^2)); both signs are equal
        term = 2.0 * _triangle_expectation(float(t * r), sigma)
        total += term
        if t * r - 1 > 40.0 * sigma or term < 1e-18 * total:
            break
        t += 1
    return min(1.0, total)


def pstable_probability(n: int, distance: float, *, k: int | None = None, w: float = 4.0) -> float:
    """Exact collision probability of :class:`lshsim.hashing.PStable`: ``q^k``.

    Args:
        n: buckets, ``n = r^k``.
        distance: Euclidean distance ``c`` between the two points (``sqrt(2 - 2a)`` for unit
            vectors at cosine ``a``).
        k: directions (default ``log2 n``).
        w: cell width.
    """
    from lshsim.hashing.hyperplane import PStable, _radix

    p = PStable.check_params(n, k=k, w=w)
    q = pstable_direction_probability(distance, p["w"], _radix(p["n"], p["k"]))
    return q ** p["k"]


def jaccard(shared: int, length: int) -> float:
    """Jaccard index ``s / (2l - s)`` of two ``l``-token sets sharing ``s`` tokens."""
    length = check_int("length (l)", length, 1)
    shared = check_int("shared", shared, 0, length)
    return shared / (2 * length - shared)


def tokenid_probability(shared: int, length: int) -> float:
    """Per-position Token-ID collision rate ``s / l`` (= ``f``) when ``n >= V``."""
    length = check_int("length (l)", length, 1)
    return check_int("shared", shared, 0, length) / length
