"""Exact top-k overlap of Voronoi hashing (softmax top-k with a random Gaussian router).

``T_k(x)`` is the set of the ``k`` buckets with the largest scores ``g_i . x`` (``n`` Gaussian
centres ``g_i``). For unit ``x, y`` at cosine ``a`` the score pairs ``(U_i, V_i) =
(g_i . x, g_i . y)`` are i.i.d. standard bivariate normal with correlation ``a``. Bucket ``i``
is in both top-k sets when fewer than ``k`` of the other ``n - 1`` pairs beat it in each
coordinate. Given ``(U_i, V_i) = (u, v)`` each other pair falls in one of four cells, above in
both (``p11 = Phi2(-u, -v)``), above in ``x`` only (``p10 = Q(u) - p11``), in ``y`` only
(``p01 = Q(v) - p11``) or in neither (``p00 = Phi2(u, v)``), and the cell counts are
multinomial, so (``proofs/lookups_beyond.md``, *Top-k overlap*)::

    E|T_k(x) ∩ T_k(y)| = n E[S(U, V)],
    S(u, v) = sum_{a + b < k, a + c < k} (n-1)! / (a! b! c! r!) p11^a p10^b p01^c p00^r,

``r = n - 1 - a - b - c``, and the overlap fraction is ``E|T_k ∩ T_k| / k``. At ``k = 1`` only
``a = b = c = 0`` remains, ``S = Phi2(u, v)^(n-1)``: the Voronoi collision probability.

The expectation is a 2-D integral computed by the adaptive rule of
:mod:`lshsim.laws.spherical` (mode on ``Y = 0``, truncation ``DELTA`` nats below it,
Gauss-Kronrod in ``X`` over Gauss-Legendre in ``Y``). That rule is proven for log-concave
integrands; ``S`` for ``k > 1`` is not proven log-concave, so the value is checked in the
tests against an independent brute-force tensor quadrature and against Monte Carlo.

References:
    A. Andoni et al., "Practical and optimal LSH for angular distance", NeurIPS 2015.
    N. Shazeer et al., "Outrageously large neural networks: the sparsely-gated
    mixture-of-experts layer", ICLR 2017 (top-k routing).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, ndtr

from lshsim._validate import check_buckets, check_float, check_int
from lshsim.laws import spherical as spherical_theory

__all__ = ["MAX_EXACT_TOPK", "topk_cells_log", "voronoi_topk_overlap"]

#: Largest ``k`` of the exact quadrature (``k^3 / 3`` multinomial terms per node).
MAX_EXACT_TOPK = 16


def check_topk(k: int, n: int) -> int:
    """Validate ``k`` in ``[1, n]``; return it."""
    return check_int("topk (k)", k, 1, n)


def _log_cells(x, y, alpha, beta):
    """``log p11, log p10, log p01, log p00`` at rotated ``(x, y)`` (see the module docstring)."""
    u = alpha * x + beta * y
    v = alpha * x - beta * y
    with np.errstate(divide="ignore"):  # a cell of probability 0 has log -inf
        log_p00 = spherical_theory._log_phi2(x, y, alpha, beta)
        p11 = np.exp(spherical_theory._log_phi2(-x, -y, alpha, beta))
        log_p11 = np.log(p11)
        log_p10 = np.log(np.maximum(ndtr(-u) - p11, 0.0))
        log_p01 = np.log(np.maximum(ndtr(-v) - p11, 0.0))
    return log_p11, log_p10, log_p01, log_p00


def _power(count: int, log_p: np.ndarray) -> np.ndarray:
    """``count * log_p`` with ``0 * (-inf) = 0``."""
    return np.zeros_like(log_p) if count == 0 else count * log_p


def topk_cells_log(n: int, k: int, log_cells) -> np.ndarray:
    """``log S``: fewer than ``k`` of ``n - 1`` pairs beat ``(u, v)`` in each coordinate.

    From the cells' log-probabilities ``(log p11, log p10, log p01, log p00)`` (arrays of one
    shape), summing the multinomial terms of the module docstring in log space.

    Args:
        n: the number of buckets.
        k: the top-k size.
        log_cells: the four cell log-probabilities.

    Returns:
        ``log S``, an array of the cells' shape.
    """
    l11, l10, l01, l00 = log_cells
    lg_n = gammaln(n)  # log (n - 1)!
    total = np.full(np.shape(l00), -np.inf)
    for a in range(k):
        for b in range(k - a):
            for c in range(k - a):
                r = n - 1 - a - b - c
                if r < 0:
                    continue
                coef = lg_n - gammaln(a + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(r + 1)
                term = coef + _power(a, l11) + _power(b, l10) + _power(c, l01) + _power(r, l00)
                total = np.logaddexp(total, term)
    return total


def _special_cases(n: int, k: int, a: float) -> float | None:
    if k == n or a >= 1.0:
        return 1.0
    if a <= -1.0:  # T_k(-x) is the bottom k of x: they meet in max(0, 2k - n) buckets
        return max(0, 2 * k - n) / k
    if a == 0.0:  # independent score vectors: each of x's k buckets is in T_k(y) w.p. k/n
        return k / n
    if k == 1:
        return math.exp(spherical_theory.voronoi_log_probability(n, a))
    return None


def voronoi_topk_overlap(
    n: int, k: int, cosine: float, *, rtol: float = spherical_theory.RTOL
) -> float:
    """Exact expected top-k overlap ``E|T_k(x) ∩ T_k(y)| / k`` of Voronoi with ``n`` buckets.

    Args:
        n: buckets, ``>= 2``.
        k: the top-k size, ``1 <= k <= min(n, MAX_EXACT_TOPK)`` (any ``k`` at cosines
            ``-1, 0, 1`` and ``k = n``).
        cosine: the cosine ``a`` of the unit inputs, in ``[-1, 1]``.
        rtol: relative tolerance of the quadrature.

    Returns:
        The overlap fraction in ``[0, 1]``; ``k = 1`` gives ``P_vor(n, a)``.

    Raises:
        ValueError: a parameter out of range.
        QuadratureError: the rule could not reach ``rtol``.
    """
    n = check_buckets(n)
    k = check_topk(k, n)
    a = check_float("cosine", cosine, -1.0, 1.0)
    rtol = check_float("rtol", rtol, 1e-13, 1e-2)
    special = _special_cases(n, k, a)
    if special is not None:
        return special
    if k > MAX_EXACT_TOPK:
        raise ValueError(
            f"topk (k) must be <= {MAX_EXACT_TOPK} for the exact quadrature, got {k}; "
            "estimate it with `lshsim simulate --topk`"
        )
    return topk_quadrature(n, k, a, rtol)


def topk_quadrature(n: int, k: int, a: float, rtol: float = spherical_theory.RTOL) -> float:
    """The overlap fraction by the 2-D quadrature alone, no special case (inputs validated).

    :func:`voronoi_topk_overlap` returns the closed values at ``k = 1`` (``P_vor``), ``k = n``
    and ``a in {-1, 0, 1}``; this function integrates the multinomial sum at every ``-1 < a <
    1``, so the claims can check it against those closed values.
    """
    alpha, beta = spherical_theory._alpha_beta(a)

    def log_f(x, y):
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        cells = _log_cells(x.ravel(), y.ravel(), alpha, beta)
        log_s = topk_cells_log(n, k, cells).reshape(x.shape)
        return -0.5 * (x * x + y * y) + log_s

    itg = spherical_theory._Integrand(log_f, -math.inf, math.inf)
    log_integral = spherical_theory._integrate(itg, rtol)
    log_both = math.log(n) - math.log(2.0 * math.pi) + log_integral
    return min(1.0, math.exp(log_both) / k)
