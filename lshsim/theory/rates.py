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

from lshsim._validate import check_buckets, check_float
from lshsim.theory.families import cosine_family, log_probability

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
    """``lim_{n -> inf} rho(n, a)``, from the family object (:meth:`HashFamily.limit_rho`).

    * simhash: ``-log2(1 - arccos(a)/pi)``, the same at every ``n``;
    * pstable (fixed radix ``r``, ``n = r^k``; give ``n``, default 2): ``-log q / log r``, the
      same at every ``n`` of that radix;
    * voronoi and crosspolytope: ``(1 - a) / (1 + a)`` (Andoni et al. 2015).

    Raises:
        NoLaw: the family has no known limit exponent.
    """
    a = check_float("cosine", cosine, -1.0, 1.0)
    if n is None:  # any valid n: the limit does not depend on it (pstable: radix 2)
        n = 2
    cls, p = cosine_family(family, n, params, law="limit_rho")
    return cls.limit_rho(a, p.pop("n"), **p)


def asymptotic_probability(family: str, n: int, cosine: float, *, refined: bool = False) -> float:
    """The large-``n`` form of a family's collision probability (``a`` in (-1, 1)).

    From the family object (:meth:`HashFamily.asymptotic_probability`): for Voronoi and the
    cross-polytope, Andoni et al.'s ``n^-((1 - a)/(1 + a))`` (``refined=False``) or the Laplace
    form (``refined=True``; :func:`lshsim.laws.spherical.asymptotic_probability`); for simhash
    (and pstable) ``n^-rho`` is exact, and this returns :func:`probability`.

    Raises:
        NoLaw: the family has no known asymptotic form.
    """
    cls, p = cosine_family(family, n, {}, law="asymptotic_probability")
    a = check_float("cosine", cosine, -1.0, 1.0)
    return cls.asymptotic_probability(p["n"], a, refined=refined)
