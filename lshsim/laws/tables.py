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

from lshsim.laws.spherical import QuadratureError

__all__ = ["TABLE_NODES", "log_p_table"]

#: Chebyshev nodes of the table.
TABLE_NODES = 48


def log_p_table(direct: Callable[[float], float], cos: np.ndarray, label: str) -> np.ndarray:
    """``log P`` at every cosine in ``cos``, through a Chebyshev interpolant in the angle.

    Args:
        direct: ``a -> log P(a)``, the law evaluated directly at one cosine.
        cos: float64[m], cosines in ``[-1, 1]``.
        label: what the law is (e.g. ``"voronoi at n=64"``), for the error message.

    Returns:
        float64[m], ``log P`` at each cosine.

    Raises:
        QuadratureError: the table misses direct evaluation by more than ``1e-7``.
    """
    theta = np.arccos(np.clip(cos, -1.0, 1.0))
    lo, hi = float(theta.min()), float(theta.max())

    def at(t):
        return direct(math.cos(t))

    if hi - lo < 1e-12:
        return np.full(cos.shape, at(lo))
    k = np.arange(TABLE_NODES)
    t_nodes = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / TABLE_NODES)
    vals = np.array([at(float(t)) for t in t_nodes])
    if not np.isfinite(vals).all():  # a cosine of -1 in range: evaluate every point
        return np.array([at(float(t)) for t in theta])
    cheb = np.polynomial.chebyshev.Chebyshev.fit(t_nodes, vals, TABLE_NODES - 1, domain=[lo, hi])
    checks = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k[:-1:6] + 1.0) / TABLE_NODES)
    for t in checks:
        exact = at(float(t))
        if abs(cheb(t) - exact) > 1e-7 * max(1.0, abs(exact)):
            raise QuadratureError(
                f"the log P table of {label} misses direct quadrature by "
                f"{abs(cheb(t) - exact):.2e} on angles [{lo:.4f}, {hi:.4f}]"
            )
    return cheb(theta)
