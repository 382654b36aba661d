"""Exact collision probability of the cosine families at a cosine: one dispatch per question.

* :func:`log_probability` / :func:`probability` at one cosine, for simhash (closed form,
  Charikar), pstable (:mod:`lshsim.theory.closed_forms`), voronoi and cross-polytope (2-D
  quadrature, :mod:`lshsim.theory.spherical`, relative ``1e-9`` by default);
* :func:`probabilities` at an array of cosines, through a checked Chebyshev table of ``log P``
  in the angle (also used by :mod:`lshsim.theory.sentence`);
* one thin wrapper per family: :func:`simhash_probability`, :func:`voronoi_probability`,
  :func:`crosspolytope_probability`.

References:
    M. Charikar, STOC 2002 (SimHash). A. Andoni et al., "Practical and optimal LSH for angular
    distance", NeurIPS 2015 (Voronoi and cross-polytope LSH).
"""

from __future__ import annotations

import math

import numpy as np

from lshsim._validate import as_floats, check_float
from lshsim.hashing import FAMILIES, get_family
from lshsim.hashing.hyperplane import radix_of
from lshsim.theory import spherical as spherical_theory
from lshsim.theory.closed_forms import pstable_direction_probability
from lshsim.theory.spherical import QuadratureError

__all__ = [
    "COSINE_FAMILIES",
    "crosspolytope_probability",
    "log_probability",
    "probabilities",
    "probability",
    "simhash_probability",
    "voronoi_probability",
]

#: families whose collision probability is a function of the cosine of two unit vectors
COSINE_FAMILIES = ("simhash", "pstable", "voronoi", "crosspolytope")


def simhash_probability(n: int, cosine: float) -> float:
    """``P = (1 - arccos(a)/pi)^k`` for ``n = 2^k`` buckets and unit vectors at cosine ``a``."""
    return probability("simhash", n, cosine)


def voronoi_probability(n: int, cosine: float, *, rtol: float = spherical_theory.RTOL) -> float:
    """Exact ``P = n E[Phi2(U, V; a)^(n-1)]`` of Voronoi LSH (softmax top-1, random router).

    Any ``n >= 2``; relative error below ``rtol`` (default 1e-9, checked by the rule's own
    error estimate; :class:`QuadratureError` when it cannot be met). ``P(0) = 1/n``,
    ``P(1) = 1``, ``P(-1) = 0``; values below ~1e-308 underflow to 0, use
    :func:`log_probability` for those.
    """
    return math.exp(log_probability("voronoi", n, cosine, rtol=rtol))


def crosspolytope_probability(
    n: int, cosine: float, *, rtol: float = spherical_theory.RTOL
) -> float:
    """Exact collision probability of cross-polytope LSH, Gaussian projection, ``n = 2m``.

    ``P = 2d E[1{U > 0, V > 0} R(U, V)^(d-1)]``; accuracy and limits as
    :func:`voronoi_probability`.
    """
    return math.exp(log_probability("crosspolytope", n, cosine, rtol=rtol))


def _check_rtol(rtol: float) -> float:
    return check_float("rtol", rtol, 1e-13, 1e-2)


def _cosine_family(family: str, n: int, params: dict) -> dict:
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    if family not in COSINE_FAMILIES:
        raise ValueError(
            f"family '{family}' is a function of the token sets, not of a cosine; "
            "use collision_probability(..., overlap=f)"
        )
    p = get_family(family).check_params(n, **params)
    rotation = p.get("rotation", "gaussian-projection")
    if rotation != "gaussian-projection":
        raise ValueError(NO_EXACT_THEORY[rotation])
    return p


#: Why the cross-polytope's other constructions have no exact value (``proofs/lsh_exponent.md``).
NO_EXACT_THEORY = {
    "orthogonal": "rotation must be 'gaussian-projection' for exact theory: with "
    "rotation='orthogonal' the rotated pair is a uniform pair on the sphere at cosine a, whose "
    "coordinates are not independent, so the exact law depends on d and has no formula here "
    "(the gaussian-projection value is its d -> inf limit at fixed n); estimate it with "
    "`lshsim simulate`",
    "hadamard": "rotation must be 'gaussian-projection' for exact theory: the hadamard "
    "rotation has no known exact law (it approaches the gaussian-projection value as d "
    "grows); estimate it with `lshsim simulate`",
}


def log_probability(
    family: str, n: int, cosine: float, *, rtol: float = spherical_theory.RTOL, **params
) -> float:
    """``log P`` for a cosine family (simhash, pstable, voronoi, crosspolytope) at cosine ``a``.

    Accurate where ``P`` itself underflows. ``params`` are the family's (``k``, ``w`` for
    pstable; ``rotation`` must be gaussian-projection, or its alias gaussian, for
    crosspolytope: the orthogonal and hadamard constructions have no exact law). For pstable
    the unit vectors' Euclidean distance ``sqrt(2 - 2a)`` is used.
    """
    p = _cosine_family(family, n, params)
    a = check_float("cosine", cosine, -1.0, 1.0)
    rtol = _check_rtol(rtol)
    if family == "simhash":
        theta = math.acos(a) / math.pi
        return -math.inf if theta == 1.0 else (p["n"].bit_length() - 1) * math.log1p(-theta)
    if family == "pstable":
        dist = math.sqrt(max(0.0, 2.0 - 2.0 * a))
        q = pstable_direction_probability(dist, p["w"], radix_of(p["n"], p["k"]))
        return -math.inf if q == 0.0 else p["k"] * math.log(q)
    if family == "voronoi":
        return spherical_theory.voronoi_log_probability(p["n"], a, rtol)
    return spherical_theory.crosspolytope_log_probability(p["n"], a, rtol)


def probability(family: str, n: int, cosine: float, **params) -> float:
    """Exact collision probability of a cosine family at cosine ``a`` (:func:`log_probability`)."""
    return math.exp(log_probability(family, n, cosine, **params))


def probabilities(family: str, n: int, cosines, **params) -> np.ndarray:
    """Exact ``P`` of a cosine family at every cosine of an array (any shape).

    SimHash in closed form; the others through the checked 48-node Chebyshev table of
    ``log P`` in the angle (as :func:`collision_probability`), so a million cosines cost
    about 50 quadratures. The routing probe uses it for per-position predictions.

    Raises:
        ValueError: unknown or non-cosine family, bad parameters, or a cosine outside
            ``[-1, 1]`` or not finite.
    """
    p = _cosine_family(family, n, params)
    cos = as_floats("cosines", cosines)
    if cos.size and not (np.isfinite(cos).all() and np.abs(cos).max() <= 1.0):
        raise ValueError("cosines must be finite and in [-1, 1]")
    if cos.size == 0:
        return np.zeros(cos.shape)
    if family == "simhash":
        k = p["n"].bit_length() - 1
        return (1.0 - np.arccos(cos) / np.pi) ** k
    extra = {k: v for k, v in p.items() if k != "n"}
    flat = cos.reshape(-1)
    return np.exp(_log_p_table(family, p["n"], flat, extra)).reshape(cos.shape)


#: Chebyshev nodes for tabulating log P over the sampled cosines (voronoi, cp, pstable)
_TABLE_NODES = 48


def _log_p_table(family: str, n: int, cos: np.ndarray, params: dict) -> np.ndarray:
    """``log P`` at every cosine in ``cos``, through a Chebyshev interpolant in the angle.

    ``log P`` is smooth in ``theta = arccos(a)`` (not in ``a``: ``P = 1 - c theta + ...``
    near ``a = 1``), so the table lives on ``[min theta, max theta]``; it is checked at
    interleaved points against direct evaluation, and a miss raises rather than misleads.
    """
    theta = np.arccos(np.clip(cos, -1.0, 1.0))
    lo, hi = float(theta.min()), float(theta.max())

    def direct(t):
        return log_probability(family, n, math.cos(t), **params)

    if hi - lo < 1e-12:
        return np.full(cos.shape, direct(lo))
    k = np.arange(_TABLE_NODES)
    t_nodes = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / _TABLE_NODES)
    vals = np.array([direct(float(t)) for t in t_nodes])
    if not np.isfinite(vals).all():  # a cosine of -1 in range: evaluate every point
        return np.array([direct(float(t)) for t in theta])
    cheb = np.polynomial.chebyshev.Chebyshev.fit(t_nodes, vals, _TABLE_NODES - 1, domain=[lo, hi])
    checks = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k[:-1:6] + 1.0) / _TABLE_NODES)
    for t in checks:
        exact = direct(float(t))
        if abs(cheb(t) - exact) > 1e-7 * max(1.0, abs(exact)):
            raise QuadratureError(
                f"the log P table of {family} at n={n} misses direct quadrature by "
                f"{abs(cheb(t) - exact):.2e} on angles [{lo:.4f}, {hi:.4f}]"
            )
    return cheb(theta)
