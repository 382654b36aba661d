"""Closed-form collision probabilities: p-stable (with the radix wrap-around), min-hash, Token-ID.

* :func:`datar_probability`: Datar et al.'s per-direction probability (no mapping);
* :func:`pstable_direction_probability` / :func:`pstable_probability`: the same with the cell
  index taken mod the radix, as :class:`lshsim.hashing.PStable` does (direct sum for a narrow
  projection, Poisson summation for a wide one);
* :func:`jaccard` and :func:`minhash_probability`: min-hash on two token sets;
* :func:`tokenid_probability`: the per-position Token-ID rate, with the ``id mod n`` folding.

SimHash's closed form lives with the other cosine families in :mod:`lshsim.theory.families`.

References:
    M. Datar et al., SoCG 2004 (p-stable LSH). A. Broder, 1997 (min-hash).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import ndtr

from lshsim._validate import check_buckets, check_float, check_int

__all__ = [
    "datar_probability",
    "jaccard",
    "minhash_law",
    "pstable_direction_probability",
    "pstable_law",
    "radix_of",
    "tokenid_probability",
]


def radix_of(n: int, k: int) -> int | None:
    """The integer ``r >= 2`` with ``r^k == n``, or None."""
    if k == 1:  # n ** 1.0 rounds to a float: for n > 2^53 r = n would be missed
        return n if n >= 2 else None
    r = round(n ** (1.0 / k))
    for cand in (r - 1, r, r + 1):
        if cand >= 2 and cand**k == n:
            return cand
    return None


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
    # 1 - 2 Phi(-r) = erf(r / sqrt 2) and 1 - exp(-x) = -expm1(-x): no cancellation at small r
    tail = 2.0 / (math.sqrt(2.0 * math.pi) * r) * math.expm1(-r * r / 2.0)
    return math.erf(r / math.sqrt(2.0)) + tail


def _triangle_expectation(j: float, sigma: float) -> float:
    """``E[max(0, 1 - |X - j|)]`` for ``X ~ N(0, sigma^2)`` and ``j >= 0``.

    Closed form for ``sigma <= 4`` (with upper-tail CDFs, so terms far in the tail keep their
    relative precision); for wider ``sigma`` the closed form cancels, and 24-point
    Gauss-Legendre on each half of the triangle is exact to rounding (the density is nearly
    polynomial over a window of width 2 << sigma).
    """
    if sigma > 4.0:
        nodes, weights = _gauss_legendre()
        u = 0.5 * (nodes + 1.0)  # [0, 1]
        z_hi = (j + u) / sigma
        z_lo = (j - u) / sigma
        dens = np.exp(-0.5 * z_hi * z_hi) + np.exp(-0.5 * z_lo * z_lo)
        return float(0.5 * np.sum(weights * (1.0 - u) * dens) / (sigma * math.sqrt(2 * math.pi)))

    def dens(x):  # sigma^2 * density of N(0, sigma^2) at x
        z = abs(x) / sigma
        return 0.0 if z > 60.0 else sigma / math.sqrt(2.0 * math.pi) * math.exp(-0.5 * z * z)

    # upper tails Q(x) = P(X > x): P(a < X < b) = Q(a) - Q(b), accurate for a, b >> 0
    q_lo, q_mid, q_hi = ndtr(-(j - 1) / sigma), ndtr(-j / sigma), ndtr(-(j + 1) / sigma)
    left = dens(j - 1) - dens(j) + (1 - j) * (q_lo - q_mid)  # int (x - j + 1) phi, [j-1, j]
    right = (j + 1) * (q_mid - q_hi) + dens(j + 1) - dens(j)  # int (j + 1 - x) phi, [j, j+1]
    return max(0.0, left + right)


@functools.lru_cache(maxsize=1)
def _gauss_legendre() -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(24)


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
    if sigma >= 0.5 * r:
        return _pstable_direction_fourier(sigma, r)
    return _pstable_direction_direct(sigma, r)


def _pstable_direction_direct(sigma: float, r: int) -> float:
    """``sum_t E[tri(X - t r)]`` for ``X ~ N(0, sigma^2)``, term by term (small sigma/r)."""
    total = _triangle_expectation(0.0, sigma)
    t = 1
    while True:  # terms decay like exp(-(t r - 1)^2 / (2 sigma^2)); both signs are equal
        term = 2.0 * _triangle_expectation(float(t * r), sigma)
        total += term
        if t * r - 1 > 40.0 * sigma or term < 1e-18 * total:
            break
        t += 1
    return min(1.0, total)


def _pstable_direction_fourier(sigma: float, r: int) -> float:
    """The same sum by Poisson summation (fast for large sigma/r).

    ``F(x) = sum_t tri(x - t r)`` has period ``r`` and Fourier coefficients
    ``sinc^2(k/r) / r``; ``E[exp(2 pi i k X / r)] = exp(-2 pi^2 k^2 sigma^2 / r^2)``, so
    ``q = (1/r) (1 + 2 sum_{k >= 1} sinc^2(k/r) exp(-2 pi^2 k^2 sigma^2 / r^2))``.
    """
    total = 1.0
    k = 1
    while True:
        damp = math.exp(-2.0 * math.pi**2 * k * k * (sigma / r) ** 2)
        x = math.pi * k / r
        total += 2.0 * (math.sin(x) / x) ** 2 * damp
        if damp < 1e-18:
            return min(1.0, total / r)
        k += 1


def pstable_law(n: int, distance: float, k: int, w: float) -> float:
    """Exact collision probability ``q^k`` of p-stable LSH with the radix map (checked inputs).

    Args:
        n: buckets, ``n = r^k`` (validated by :class:`lshsim.hashing.PStable`).
        distance: Euclidean distance ``c`` between the two points.
        k: directions.
        w: cell width.
    """
    return pstable_direction_probability(distance, w, radix_of(n, k)) ** k


def jaccard(shared: int, length: int) -> float:
    """Jaccard index ``s / (2l - s)`` of two ``l``-token sets sharing ``s`` tokens."""
    length = check_int("length (l)", length, 1)
    shared = check_int("shared", shared, 0, length)
    return shared / (2 * length - shared)


def tokenid_probability(
    shared: int, length: int, *, n: int | None = None, vocab: int | None = None
) -> float:
    """Per-position Token-ID collision rate of :class:`lshsim.hashing.TokenID`.

    With ``n`` omitted or ``n >= vocab`` every token has its own bucket and the rate is
    ``s / l`` (``= f``) exactly. With ``n < vocab`` (``bucket = id mod n``) a replaced
    position also collides when its two distinct ids, uniform without replacement from
    ``[0, V)``, are congruent mod ``n``: with ``V = q n + r``, that has probability
    ``eps = (r (q + 1) q + (n - r) q (q - 1)) / (V (V - 1))``, and the rate is
    ``s / l + (1 - s / l) eps``.
    """
    length = check_int("length (l)", length, 1)
    base = check_int("shared", shared, 0, length) / length
    if n is None:
        return base
    n = check_buckets(n)
    if vocab is None:
        raise ValueError("vocab (V) is needed with n (buckets)")
    vocab = check_int("vocab (V)", vocab, 2)
    if n >= vocab:
        return base
    q, r = divmod(vocab, n)
    eps = (r * (q + 1) * q + (n - r) * q * (q - 1)) / (vocab * (vocab - 1))
    return base + (1.0 - base) * eps


def minhash_law(n: int, shared: int, length: int, k: int) -> float:
    """Min-hash collision probability of two ``l``-token sets sharing ``s`` tokens.

    Under ideal min-wise hashing ``P = J^k + (1 - J^k) / n`` with ``J`` the Jaccard index:
    all ``k`` minimisers agree with probability ``J^k``; otherwise two distinct combined
    values, spread over ``[0, 2^61 - 1)``, share a residue mod ``n`` with probability
    ``1/n`` up to ``O(n / 2^61)`` (see :mod:`lshsim.hashing.minhash`). ``n`` and ``k`` are
    validated by :class:`lshsim.hashing.MinHash`.
    """
    jk = jaccard(shared, length) ** k
    return jk + (1.0 - jk) / n
