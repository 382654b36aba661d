"""A checked Chebyshev table of ``log P(a)`` in the angle, for a law wanted at many cosines.

``log P`` of the cosine families is smooth in ``theta = arccos(a)`` (not in ``a``:
``P = 1 - c theta + ...`` near ``a = 1``), so a 48-node interpolant on
``[min theta, max theta]`` of the sampled cosines costs about 50 evaluations for a million
cosines; it is checked at interleaved points against direct evaluation, and a miss raises
rather than misleads.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["MAX_SPLITS", "TABLE_NODES", "checked_table", "log_p_table"]

#: Chebyshev nodes of the table.
TABLE_NODES = 48


def log_p_table(direct: Callable[[float], float], cos: np.ndarray, label: str) -> np.ndarray:
    """``log P`` at every cosine in ``cos``, through a Chebyshev interpolant in the angle.

    Where one interpolant misses (a law with a singular end, e.g. the cross-polytope's
    ``log P -> -inf`` as ``a -> -1``), the angle range is halved and each half tabled on its
    own, down to :data:`MAX_SPLITS` halvings; the points of a piece still missed then are
    evaluated directly (never an unchecked value).

    Args:
        direct: ``a -> log P(a)``, the law evaluated directly at one cosine.
        cos: float64[m], cosines in ``[-1, 1]``.
        label: what the law is (e.g. ``"voronoi at n=64"``), for the error message.

    Returns:
        float64[m], ``log P`` at each cosine.

    Raises:
        QuadratureError: a direct evaluation fails.
    """
    theta = np.arccos(np.clip(cos, -1.0, 1.0))

    def at(t):
        return direct(math.cos(t))

    out = np.empty(theta.shape)
    _fill(at, theta, np.arange(theta.size), float(theta.min()), float(theta.max()), out, 0)
    return out


#: Halvings of the angle range before the remaining points are evaluated directly.
MAX_SPLITS = 6


def _fill(at, theta, idx, lo: float, hi: float, out: np.ndarray, depth: int) -> None:
    """Write ``log P`` at ``theta[idx]`` (all in ``[lo, hi]``) into ``out``."""
    if idx.size == 0:
        return
    if hi - lo < 1e-12:
        out[idx] = at(lo)
        return
    cheb = checked_table(at, lo, hi)
    if cheb is not None:
        out[idx] = cheb(theta[idx])
    elif depth >= MAX_SPLITS or idx.size <= TABLE_NODES:
        out[idx] = [at(float(t)) for t in theta[idx]]
    else:
        mid = 0.5 * (lo + hi)
        left = theta[idx] <= mid
        _fill(at, theta, idx[left], lo, mid, out, depth + 1)
        _fill(at, theta, idx[~left], mid, hi, out, depth + 1)


def checked_table(at: Callable[[float], float], lo: float, hi: float):
    """The Chebyshev interpolant of ``at`` on ``[lo, hi]`` (angles), checked at interleaved points.

    Returns:
        A :class:`numpy.polynomial.chebyshev.Chebyshev`, or ``None`` where a node is infinite
        or a check misses by more than ``1e-7 max(1, |log P|)``.
    """
    k = np.arange(TABLE_NODES)
    t_nodes = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / TABLE_NODES)
    vals = np.array([at(float(t)) for t in t_nodes])
    if not np.isfinite(vals).all():  # a cosine of -1 in range
        return None
    cheb = np.polynomial.chebyshev.Chebyshev.fit(t_nodes, vals, TABLE_NODES - 1, domain=[lo, hi])
    checks = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k[:-1:6] + 1.0) / TABLE_NODES)
    for t in checks:
        exact = at(float(t))
        if abs(cheb(t) - exact) > 1e-7 * max(1.0, abs(exact)):
            return None
    return cheb
