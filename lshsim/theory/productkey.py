"""Exact collision probability of product keys (Lample et al. 2019) with random sub-keys.

A product-key table has ``n = s^2`` slots. The input ``x in R^d`` (``d`` even) is cut into its
halves ``x1, x2`` (``d/2`` coordinates each); each half is scored against its own ``s``
i.i.d. Gaussian sub-keys, and the slot is ``i * s + j`` with ``i = argmax_r K1_r . x1`` and
``j = argmax_r K2_r . x2``. The two halves are two independent Voronoi hashes with ``s``
buckets, so for inputs whose halves have cosines ``a1`` and ``a2`` (``proofs/lookups_beyond.md``,
*Product keys*)::

    P_pk(n; a1, a2) = P_vor(s, a1) P_vor(s, a2),        s = sqrt(n),

exactly, at every ``d``. With both halves at the same cosine ``a``, ``ln P_pk(n, a) =
2 ln P_vor(sqrt n, a)`` and ``ln n = 2 ln sqrt n``, so the exponents agree:
``rho_pk(n, a) = rho_vor(sqrt n, a)``.

References:
    G. Lample, A. Sablayrolles, M. Ranzato, L. Denoyer, H. Jégou, "Large memory layers with
    product keys", NeurIPS 2019.
"""

from __future__ import annotations

import math

from lshsim._validate import check_float
from lshsim.hashing import ProductKey
from lshsim.laws import spherical as spherical_theory

__all__ = [
    "productkey_log_probability",
    "productkey_probability",
    "productkey_rho",
]


def productkey_log_probability(
    n: int, a1: float, a2: float | None = None, *, rtol: float = spherical_theory.RTOL
) -> float:
    """``ln P_pk = ln P_vor(s, a1) + ln P_vor(s, a2)``, ``s = sqrt(n)``, exactly.

    Args:
        n: slots, a perfect square ``s^2`` with ``s >= 2``.
        a1: the cosine of the first halves, in ``[-1, 1]``.
        a2: the cosine of the second halves (default: ``a1``, both halves at one cosine).
        rtol: relative tolerance of each Voronoi quadrature.

    Returns:
        ``ln P`` (``-inf`` when a half-cosine is ``-1``).
    """
    rtol = check_float("rtol", rtol, 1e-13, 1e-2)
    return ProductKey.log_probability_halves(n, a1, a1 if a2 is None else a2, rtol=rtol)


def productkey_probability(
    n: int, a1: float, a2: float | None = None, *, rtol: float = spherical_theory.RTOL
) -> float:
    """``P_pk(n; a1, a2) = P_vor(sqrt n, a1) P_vor(sqrt n, a2)`` (see the module docstring)."""
    return math.exp(productkey_log_probability(n, a1, a2, rtol=rtol))


def productkey_rho(n: int, a1: float, a2: float | None = None) -> float:
    """``rho_pk = -ln P_pk / ln n``; equals ``rho_vor(sqrt n, a)`` when ``a1 = a2 = a``."""
    return -productkey_log_probability(n, a1, a2) / math.log(n)
