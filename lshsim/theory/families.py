"""Exact collision probability of the cosine families at a cosine: one dispatch per question.

* :func:`log_probability` / :func:`probability` at one cosine, for simhash (closed form,
  Charikar), pstable (:mod:`lshsim.laws.closed_forms`), voronoi and cross-polytope (2-D
  quadrature, :mod:`lshsim.laws.spherical`, relative ``1e-9`` by default);
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
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from lshsim._validate import as_floats, check_float
from lshsim.hashing import COSINE_FAMILIES, MinHash, NoLaw, PStable, get_family
from lshsim.hashing.spherical import NO_EXACT_THEORY
from lshsim.laws import spherical as spherical_theory
from lshsim.laws.closed_forms import minhash_law, pstable_law
from lshsim.laws.spherical import QuadratureError

__all__ = [
    "COSINE_FAMILIES",
    "NO_EXACT_THEORY",
    "QuadratureError",
    "cosine_family",
    "crosspolytope_probability",
    "law_or_none",
    "log_probability",
    "minhash_probability",
    "probabilities",
    "probability",
    "pstable_probability",
    "simhash_probability",
    "topk_overlap",
    "voronoi_probability",
]


T = TypeVar("T")


def law_or_none(law: Callable[..., T], *args, **kwargs) -> T | None:
    """``law(*args, **kwargs)``, or None where the family lacks that law.

    For the optional quantities a report adds beside the one asked for (``lshsim theory``'s
    ``limit_rho``, ``hash_cost``, ...): a family without them still gets the rest.

    Args:
        law: a function of this package that raises :class:`~lshsim.hashing.NoLaw` for a family
            without the law (or without it at these parameters).
        *args: its arguments.
        **kwargs: its keyword arguments.

    Returns:
        The law's value, or None.

    Raises:
        ValueError: any other error of ``law`` (bad input is still reported).
    """
    try:
        return law(*args, **kwargs)
    except NoLaw:
        return None


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


def pstable_probability(n: int, distance: float, *, k: int | None = None, w: float = 4.0) -> float:
    """Exact collision probability of :class:`lshsim.hashing.PStable`: ``q^k``.

    Args:
        n: buckets, ``n = r^k``.
        distance: Euclidean distance ``c`` between the two points (``sqrt(2 - 2a)`` for unit
            vectors at cosine ``a``).
        k: directions (default ``log2 n``).
        w: cell width.
    """
    p = PStable.check_params(n, k=k, w=w)
    return pstable_law(p["n"], distance, p["k"], p["w"])


def minhash_probability(n: int, shared: int, length: int, *, k: int = 1) -> float:
    """Min-hash collision probability ``J^k + (1 - J^k) / n`` of two sets sharing ``s`` tokens.

    :func:`lshsim.laws.closed_forms.minhash_law`; ``n`` and ``k`` checked by
    :class:`lshsim.hashing.MinHash`.
    """
    p = MinHash.check_params(n, k=k)
    return minhash_law(p["n"], shared, length, p["k"])


def topk_overlap(family: str, n: int, k: int, cosine: float, **params) -> float:
    """Exact top-k overlap ``E|T_k(x) ∩ T_k(y)| / k`` of a family at cosine ``a``.

    Raises:
        NoLaw: the family has no exact top-k law (today: Voronoi has one, ``k <= 16``).
    """
    cls, p = cosine_family(family, n, params, law="topk_overlap")
    a = check_float("cosine", cosine, -1.0, 1.0)
    return cls.topk_overlap(p.pop("n"), k, a, **p)


def _check_rtol(rtol: float) -> float:
    return check_float("rtol", rtol, 1e-13, 1e-2)


def cosine_family(family: str, n: int, params: dict, law: str = "log_probability"):
    """The family class and its normalised parameters, for a law at a cosine.

    Raises:
        ValueError: unknown family or bad parameters.
        NoLaw: the family has no law ``law`` (or not for these parameters).
    """
    cls = get_family(family)
    if law == "log_probability" and cls.halves:
        raise cls.no_law(
            law,
            "it reads its input in two halves: give the two half-cosines "
            "(lshsim theory --half-cosines a1,a2; theory.productkey_probability)",
        )
    return cls, cls.check_law(law, n, **params)


def log_probability(
    family: str, n: int, cosine: float, *, rtol: float = spherical_theory.RTOL, **params
) -> float:
    """``log P`` of a family at cosine ``a``, from the family object's exact law.

    Accurate where ``P`` itself underflows. ``params`` are the family's (``k``, ``w`` for
    pstable; ``rotation`` must be gaussian-projection, or its alias gaussian, for
    crosspolytope: the orthogonal and hadamard constructions have no exact law). For pstable
    the unit vectors' Euclidean distance ``sqrt(2 - 2a)`` is used.

    Raises:
        ValueError: unknown family, bad parameters or cosine.
        NoLaw: the family has no exact law at a cosine.
    """
    cls, p = cosine_family(family, n, params)
    a = check_float("cosine", cosine, -1.0, 1.0)
    rtol = _check_rtol(rtol)
    return cls.log_probability(p.pop("n"), a, rtol=rtol, **p)


def probability(family: str, n: int, cosine: float, **params) -> float:
    """Exact collision probability of a family at cosine ``a`` (:func:`log_probability`)."""
    return math.exp(log_probability(family, n, cosine, **params))


def probabilities(family: str, n: int, cosines, **params) -> np.ndarray:
    """Exact ``P`` of a family at every cosine of an array (any shape).

    SimHash in closed form; the others through the checked 48-node Chebyshev table of
    ``log P`` in the angle (:mod:`lshsim.laws.tables`), so a million cosines cost about 50
    quadratures. The routing probe uses it for per-position predictions.

    Raises:
        ValueError: unknown family, bad parameters, or a cosine outside ``[-1, 1]`` or not
            finite.
        NoLaw: the family has no exact law at a cosine.
    """
    cls, p = cosine_family(family, n, params)
    cos = as_floats("cosines", cosines)
    if cos.size and not (np.isfinite(cos).all() and np.abs(cos).max() <= 1.0):
        raise ValueError("cosines must be finite and in [-1, 1]")
    if cos.size == 0:
        return np.zeros(cos.shape)
    return cls.probabilities(p.pop("n"), cos.reshape(-1), **p).reshape(cos.shape)
