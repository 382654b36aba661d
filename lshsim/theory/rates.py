"""The exponents ``rho = -log P / log n`` and ``rho_lsh``, the limit in ``n``, asymptotic forms.

Two exponents of one family at ``n`` buckets and cosine ``a``:

* ``rho = -ln P(n, a) / ln n`` (:func:`rho`): the paper's, so that ``P = n^-rho``;
* ``rho_lsh = ln(1/p1) / ln(1/p2)`` (:func:`rho_lsh`), ``p1 = P(n, a)``, ``p2 = P(n, a2)`` at a
  far cosine ``a2 < a``: the standard LSH exponent (Indyk-Motwani), whose data structure
  answers queries in about ``N^rho_lsh`` hash evaluations over ``N`` points.

They coincide exactly when ``P(n, a2) = 1/n``; at ``a2 = 0`` that holds for SimHash, Voronoi and
the Gaussian-projection cross-polytope at every ``n`` (``proofs/lsh_exponent.md``, claim
T1.h2), not for p-stable hyperplanes nor for the orthogonal or Hadamard cross-polytope.

References:
    A. Andoni et al., "Practical and optimal LSH for angular distance", NeurIPS 2015
    (``rho = (1 - a) / (1 + a)`` for the spherical families). P. Indyk, R. Motwani,
    "Approximate nearest neighbors: towards removing the curse of dimensionality", STOC 1998.
"""

from __future__ import annotations

import math

from scipy.special import gammaln, ndtri

from lshsim._validate import check_buckets, check_float
from lshsim.hashing.hyperplane import radix_of
from lshsim.theory.closed_forms import pstable_direction_probability
from lshsim.theory.families import _cosine_family, log_probability, probability

__all__ = ["asymptotic_probability", "limit_rho", "rho", "rho_lsh"]


def rho(family: str, n: int, cosine: float, **params) -> float:
    """The exponent ``rho = -log P / log n`` at ``n`` buckets, so that ``P = n^-rho``."""
    n = check_buckets(n)
    return -log_probability(family, n, cosine, **params) / math.log(n)


def rho_lsh(family: str, n: int, cosine: float, far: float = 0.0, **params) -> float:
    """The LSH exponent ``rho_lsh = ln(1/p1) / ln(1/p2)``, ``p1 = P(n, a)``, ``p2 = P(n, far)``.

    Computed from ``log P`` (:func:`~lshsim.theory.log_probability`), so it stays accurate where
    ``p1`` or ``p2`` underflow. Equal to :func:`rho` exactly when ``P(n, far) = 1/n``.

    Args:
        family: a cosine family (simhash, pstable, voronoi, crosspolytope).
        n: buckets.
        cosine: the near pair's cosine ``a`` in ``(far, 1]``.
        far: the far pair's cosine ``a2`` in ``[-1, a)`` (default 0: unrelated directions).
        **params: the family's parameters, as for :func:`~lshsim.theory.probability`.

    Returns:
        ``rho_lsh`` in ``[0, 1)`` for these families (their ``P`` increases in the cosine).

    Raises:
        ValueError: ``far`` outside ``[-1, 1]`` or not below ``cosine``, or ``p2`` in ``{0, 1}``
            (``ln(1/p2)`` is infinite or zero).
    """
    a = check_float("cosine", cosine, -1.0, 1.0)
    a2 = check_float("far", far, -1.0, 1.0)
    if a2 >= a:
        raise ValueError(
            f"far must be in [-1, cosine) = [-1, {a!r}): rho_lsh compares the near pair with a "
            f"farther one, got far={a2!r}"
        )
    log_p2 = log_probability(family, n, a2, **params)
    if not -math.inf < log_p2 < 0.0:
        p2 = "0" if log_p2 == -math.inf else "1"
        raise ValueError(
            f"far: P(n, far) = {p2} at far={a2!r}, so ln(1/p2) is "
            f"{'infinite' if p2 == '0' else 'zero'} and rho_lsh is undefined; use far in (-1, a)"
        )
    return log_probability(family, n, a, **params) / log_p2


def limit_rho(family: str, cosine: float, *, n: int | None = None, **params) -> float:
    """``lim_{n -> inf} rho(n, a)``.

    * simhash: ``-log2(1 - arccos(a)/pi)``, the same at every ``n``;
    * pstable (fixed radix ``r``, ``n = r^k``; give ``n``, default 2): ``-log q / log r``, the
      same at every ``n`` of that radix;
    * voronoi and crosspolytope: ``(1 - a) / (1 + a)`` (Andoni et al. 2015).
    """
    a = check_float("cosine", cosine, -1.0, 1.0)
    if n is None:  # any valid n: the limit does not depend on it (pstable: radix 2)
        n = 2
    p = _cosine_family(family, n, params)
    if family == "simhash":
        theta = math.acos(a) / math.pi
        return math.inf if theta == 1.0 else -math.log1p(-theta) / math.log(2.0)
    if family == "pstable":
        r = radix_of(p["n"], p["k"])
        q = pstable_direction_probability(math.sqrt(max(0.0, 2 - 2 * a)), p["w"], r)
        return math.inf if q == 0.0 else -math.log(q) / math.log(r)
    return math.inf if a == -1.0 else (1.0 - a) / (1.0 + a)


def asymptotic_probability(family: str, n: int, cosine: float, *, refined: bool = False) -> float:
    """The large-``n`` form of a spherical family's collision probability (``a`` in (-1, 1)).

    * ``refined=False``: Andoni et al. (2015), ``P ~ n^-((1 - a)/(1 + a))`` (their
      ``ln(1/P) = rho ln n + O(ln ln n)`` without the ``O`` term).
    * ``refined=True``: the Laplace (Gumbel) approximation of the exact integral,
      ``P ~ Gamma(1/(1+a))^2 exp(a t^2 / (1+a)) / (n sqrt(1 - a^2))`` with ``n Q(t) = 1``
      (``Q`` the normal upper tail), whose relative error is ``O(1/log n)`` at fixed ``a``
      and which equals ``1/n`` exactly at ``a = 0``. Cross-polytope with ``n = 2d`` buckets
      has the same forms with ``n``: ``1 - R(u, v) ~ 2 Q(u) + 2 Q(v)`` in the tail, which is
      Voronoi's ``1 - Phi2`` with ``n`` in place of ``T``.

    For simhash (and pstable) ``n^-rho`` is exact, and this returns :func:`probability`.
    """
    n = _cosine_family(family, n, {})["n"]
    a = check_float("cosine", cosine, -1.0, 1.0)
    if family in ("simhash", "pstable"):
        return probability(family, n, a)
    if not -1.0 < a < 1.0:
        raise ValueError(f"cosine must be in (-1, 1) for the asymptotic form, got {cosine!r}")
    if not refined:
        return n ** -((1.0 - a) / (1.0 + a))
    t = -ndtri(1.0 / n)
    log_p = (
        2.0 * gammaln(1.0 / (1.0 + a))
        + a * t * t / (1.0 + a)
        - math.log(n)
        - 0.5 * math.log1p(-a * a)
    )
    return math.exp(log_p)
