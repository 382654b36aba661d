"""Compiled kernels of the spherical laws: the integrands' log-CDFs and inner rules.

The Numba kernels behind :mod:`lshsim.laws.spherical`: ``log Phi2`` (Voronoi) and ``log R``
(cross-polytope) at rotated coordinates, their sliver integrals for cosines near ``-1``, the
``Y``-limit bisection and the inner Gauss-Legendre rule, over scipy.special's own scalar
Owen's T, ``ndtr`` and ``log_ndtr``. :mod:`lshsim.laws.spherical` holds the quadrature that
calls them and its documentation.
"""

from __future__ import annotations

import math

import llvmlite.binding as _llvm
import numba
import numpy as np
from numba.extending import get_cython_function_address

#: Gauss-Legendre nodes per panel
NODES = 16
#: bisection steps of the ``Y`` limits (see :func:`lshsim.laws.spherical._y_limits`)
LIMIT_STEPS = 30

GL_X, GL_W = np.polynomial.legendre.leggauss(NODES)

# -- the integrands' CDFs: Numba kernels over scipy's own special functions ---------------------
#
# Owen's T, ndtr and log_ndtr are scipy.special's scalar C implementations (the ones its ufuncs
# call), reached through scipy.special.cython_special. They are declared to LLVM by symbol name
# (llvmlite's add_symbol) rather than embedded as ctypes addresses, so the kernels stay
# cacheable (``cache=True``): the cached machine code looks the symbols up when it loads.
_CYTHON_SPECIAL = "scipy.special.cython_special"
for _symbol, _export in (
    ("lshsim_owens_t", "owens_t"),
    ("lshsim_ndtr", "__pyx_fuse_1ndtr"),  # the double (not complex) specialisation
    ("lshsim_log_ndtr", "__pyx_fuse_1log_ndtr"),
):
    _llvm.add_symbol(_symbol, get_cython_function_address(_CYTHON_SPECIAL, _export))
# the trailing int is Cython's ``__pyx_skip_dispatch`` flag (0: call the C function directly)
_owens_t = numba.types.ExternalFunction(
    "lshsim_owens_t", numba.float64(numba.float64, numba.float64, numba.intc)
)
_ndtr = numba.types.ExternalFunction("lshsim_ndtr", numba.float64(numba.float64, numba.intc))
_log_ndtr = numba.types.ExternalFunction(
    "lshsim_log_ndtr", numba.float64(numba.float64, numba.intc)
)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
#: below this alpha = sqrt((1 + a)/2) small Phi2 and R values come from the sliver integrals
SLIVER_ALPHA = 0.3
_SLIVER_T, _SLIVER_W = np.polynomial.legendre.leggauss(48)
_BOX_T, _BOX_W = np.polynomial.legendre.leggauss(32)
_CELL_T, _CELL_W = np.polynomial.legendre.leggauss(8)
#: integrand kinds of the compiled kernels (:func:`log_f_at`)
VORONOI, CROSSPOLYTOPE = 0, 1
# error_model="numpy": NumPy's float semantics (a division by zero gives inf or nan, as the
# NumPy rule did; Numba's default would raise ZeroDivisionError inside the rule)
_jit = numba.njit(cache=True, nogil=True, error_model="numpy")


#: length of the scratch array of :func:`_phi2_sliver`: key ``(x, alpha, beta)``, the two
#: half-widths, then ``t_k / kappa`` and ``Phi(x - t_k)`` at its ``2 x 48`` nodes
_SLIVER_MEMO = 5 + 4 * _SLIVER_T.size


def new_memo() -> np.ndarray:
    """A scratch array for :func:`_phi2_sliver`, holding nothing yet (its key is NaN)."""
    return np.full(_SLIVER_MEMO, np.nan)


@_jit
def _phi2_sliver(x, y, alpha, beta, memo):  # pragma: no cover - jit
    """``Phi2(u, v; a)`` without cancellation, for ``a`` near ``-1`` (scalars).

    In the rotated coordinates ``U' <= u`` and ``V' <= v`` together say
    ``X'' <= X - kappa |Y'' - Y|`` (``kappa = beta / alpha``), so
    ``Phi2 = (1/kappa) int_0^inf [phi(Y + t/kappa) + phi(Y - t/kappa)] Phi(X - t) dt``:
    a sum of positive terms, computed by 48-point Gauss-Legendre on ``[0, X+]`` and on the
    Gaussian tail beyond it (``Phi(X - t)`` is below ``e^-40`` of its start past the second
    piece). The nodes ``t_k`` and ``Phi(X - t_k)`` depend on ``X`` alone: they are kept in
    ``memo`` (:func:`new_memo`) for the next call at the same ``X`` (the inner rule's ``Y``
    nodes and bisection steps), the same numbers as computing them afresh.

    Args:
        x: rotated coordinate ``X``.
        y: rotated coordinate ``Y``.
        alpha: ``sqrt((1 + a)/2)``.
        beta: ``sqrt((1 - a)/2)``.
        memo: float64 scratch of length :data:`_SLIVER_MEMO`, overwritten for a new key.

    Returns:
        ``Phi2(alpha X + beta Y, alpha X - beta Y; a)``.
    """
    kappa = beta / alpha
    m = _SLIVER_T.size
    if not (memo[0] == x and memo[1] == alpha and memo[2] == beta):
        start = max(x, 0.0)
        tail = 12.0 if x >= 0.0 else math.sqrt(x * x + 80.0) - abs(x)  # |X| t + t^2/2 = 40
        for piece in range(2):
            lo = 0.0 if piece == 0 else start
            hi = start if piece == 0 else start + tail
            half = 0.5 * (hi - lo)
            mid = 0.5 * (lo + hi)
            memo[3 + piece] = half
            for k in range(m):
                t = mid + half * _SLIVER_T[k]
                memo[5 + piece * m + k] = t / kappa
                memo[5 + (2 + piece) * m + k] = _ndtr(x - t, 0)
        memo[0], memo[1], memo[2] = x, alpha, beta
    total = 0.0
    for piece in range(2):
        acc = 0.0
        for k in range(m):
            t_kappa = memo[5 + piece * m + k]
            z1 = y + t_kappa
            z2 = y - t_kappa
            dens = math.exp(-0.5 * (z1 * z1)) + math.exp(-0.5 * (z2 * z2))
            acc += dens * memo[5 + (2 + piece) * m + k] * _SLIVER_W[k]
        total += memo[3 + piece] * acc
    return total / (kappa * _SQRT_2PI)


@_jit
def _log_phi2_at(x, y, alpha, beta, memo):  # pragma: no cover - jit
    """``log Phi2(u, v; a)`` at ``u = alpha x + beta y``, ``v = alpha x - beta y`` (scalars).

    Owen's form ``1 - Phi2 = Q(u)/2 + Q(v)/2 + T(u, a_u) + T(v, a_v) + [uv < 0]/2`` (module
    docstring), ``log1p`` of its negative where ``1 - Phi2 < 1/2``, the direct sum elsewhere,
    :func:`_phi2_sliver` for small values when ``alpha < SLIVER_ALPHA``, and
    ``min(log Phi(u), log Phi(v))`` where both are below ``1e-300`` (``Phi2`` is far below any
    integrand value there).
    """
    u = alpha * x + beta * y
    v = alpha * x - beta * y
    if min(u, v) < -37.0:  # both Phi's below 1e-300
        return min(_log_ndtr(u, 0), _log_ndtr(v, 0))
    num_u, num_v = beta * x - alpha * y, beta * x + alpha * y
    au = math.copysign(math.inf, num_u) if u == 0.0 else num_u / u
    av = math.copysign(math.inf, num_v) if v == 0.0 else num_v / v
    tu = _owens_t(u, au, 0)
    tv = _owens_t(v, av, 0)
    half = 0.5 if (u * v < 0) or ((u * v == 0) and (u + v < 0)) else 0.0
    comp = 0.5 * _ndtr(-u, 0) + 0.5 * _ndtr(-v, 0) + tu + tv + half  # 1 - Phi2
    if comp < 0.5:
        return math.log1p(-comp)
    if alpha < SLIVER_ALPHA and comp >= 0.5:  # a near -1: Owen's form cancels; a thin sliver
        return math.log(_phi2_sliver(x, y, alpha, beta, memo))
    direct = 0.5 * _ndtr(u, 0) + 0.5 * _ndtr(v, 0) - tu - tv - half  # Phi2
    return math.log(direct if (direct >= 0.0 or direct != direct) else 0.0)


@_jit
def _interval_mass(lo, hi):  # pragma: no cover - jit
    """``P(lo < Z < hi)`` for standard normal ``Z``, accurate for narrow intervals too."""
    lo = min(lo, hi)
    if hi - lo < 0.5:
        narrow = 0.5 * (hi - lo)
        mid = 0.5 * (lo + hi)
        acc = 0.0
        for k in range(_CELL_T.size):
            p = mid + narrow * _CELL_T[k]
            acc += math.exp(-0.5 * p * p) * _CELL_W[k]
        return narrow * acc / _SQRT_2PI
    if lo > 0:
        return _ndtr(-lo, 0) - _ndtr(-hi, 0)
    return _ndtr(hi, 0) - _ndtr(lo, 0)


@_jit
def _box_sliver(u, v, alpha, beta):  # pragma: no cover - jit
    """``R(u, v) = P(|U'| < u, |V'| < v)`` without cancellation, for ``a`` near ``-1``.

    With ``U' = alpha X'' + beta Y''`` and ``V' = alpha X'' - beta Y''``, for each ``X'' = xi``
    the event is ``Y''`` in ``[max(-u - alpha xi, alpha xi - v), min(u - alpha xi,
    alpha xi + v)] / beta``; the mass of that interval is integrated over ``xi`` by 32-point
    Gauss-Legendre on ``[-12, 12]``, split where the bounds switch
    (``xi = ±(u - v)/(2 alpha)``) and where the interval closes (``|xi| = (u + v)/(2 alpha)``).

    Args:
        u: the box half-width in ``U'``, ``> 0``.
        v: the box half-width in ``V'``, ``> 0``.
        alpha: ``sqrt((1 + a)/2)``.
        beta: ``sqrt((1 - a)/2)``.

    Returns:
        ``R(u, v)``.
    """
    kink = min(max(abs(u - v) / (2.0 * alpha), 0.0), 12.0)
    end = min(max((u + v) / (2.0 * alpha), 0.0), 12.0)  # the interval is empty beyond
    edges = (-end, -kink, kink, end)
    total = 0.0
    for e in range(3):
        lo_e, hi_e = edges[e], edges[e + 1]
        half = 0.5 * (hi_e - lo_e)
        acc = 0.0
        for k in range(_BOX_T.size):
            xi = 0.5 * (lo_e + hi_e) + half * _BOX_T[k]
            lo = max(-u - alpha * xi, alpha * xi - v) / beta
            hi = min(u - alpha * xi, alpha * xi + v) / beta
            mass = _interval_mass(lo, hi) if hi > lo else 0.0
            acc += math.exp(-0.5 * xi * xi) * mass * _BOX_W[k]
        total += half * acc
    return total / _SQRT_2PI


@_jit
def _log_box_at(x, y, alpha, beta, a):  # pragma: no cover - jit
    """``log R(u, v)``, ``R = P(|U'| < u, |V'| < v)``, at rotated ``u, v`` (scalars).

    ``1 - R = 2 [T(u, b_-) + T(u, b_+) + T(v, c_-) + T(v, c_+)]`` (module docstring): ``log1p``
    of its negative where it is below ``1/2``, :func:`_box_sliver` for small ``R`` when
    ``alpha < SLIVER_ALPHA``; ``-inf`` outside ``u, v > 0``.
    """
    u = alpha * x + beta * y
    v = alpha * x - beta * y
    if not (u > 0 and v > 0):
        return -math.inf
    s = 2.0 * alpha * beta
    b_minus = (beta * x - alpha * y) / u  # (v - a u) / (u s)
    c_minus = (beta * x + alpha * y) / v  # (u - a v) / (v s)
    b_plus = (v + a * u) / (u * s)
    c_plus = (u + a * v) / (v * s)
    comp = 2.0 * (_owens_t(u, b_minus, 0) + _owens_t(u, b_plus, 0) + _owens_t(v, c_minus, 0))
    comp = comp + 2.0 * _owens_t(v, c_plus, 0)  # 1 - R
    if comp < 0.5:
        return math.log1p(-comp)
    if alpha < SLIVER_ALPHA and comp >= 0.5:  # a near -1: R = 1 - comp cancels
        return math.log(_box_sliver(u, v, alpha, beta))
    rest = 1.0 - comp
    return math.log(rest if (rest >= 0.0 or rest != rest) else 0.0)


@_jit
def log_f_at(kind, x, y, alpha, beta, a, power, memo):  # pragma: no cover - jit
    """``log f(X, Y) = -(X^2 + Y^2)/2 + power * log C(u, v)`` of one family (scalars).

    ``C`` is ``Phi2`` for ``kind = VORONOI`` (``power = T - 1``) and ``R`` for
    ``kind = CROSSPOLYTOPE`` (``power = m - 1``).
    """
    gauss = -0.5 * (x * x + y * y)
    if kind == VORONOI:
        return gauss + power * _log_phi2_at(x, y, alpha, beta, memo)
    return gauss + power * _log_box_at(x, y, alpha, beta, a)


@_jit
def log_cdf_kernel(kind, x, y, alpha, beta, a):  # pragma: no cover - jit
    """``log Phi2`` (``kind = VORONOI``) or ``log R`` at each ``(x[i], y[i])``; 1-D arrays."""
    out = np.empty(x.size)
    memo = np.full(_SLIVER_MEMO, np.nan)
    for i in range(x.size):
        if kind == VORONOI:
            out[i] = _log_phi2_at(x[i], y[i], alpha, beta, memo)
        else:
            out[i] = _log_box_at(x[i], y[i], alpha, beta, a)
    return out


@_jit
def y_limits_kernel(kind, alpha, beta, a, power, y_slope, x, target):  # pragma: no cover - jit
    """:func:`_y_limits` of the family integrand ``(kind, power)`` at each ``x[i]`` (1-D)."""
    out = np.empty(x.size)
    memo = np.full(_SLIVER_MEMO, np.nan)
    for i in range(x.size):
        xi = x[i]
        rise = log_f_at(kind, xi, 0.0, alpha, beta, a, power, memo) - target
        rise = rise if (rise >= 0.0 or rise != rise) else 0.0
        hi = math.sqrt(2.0 * rise) * (1.0 + 1e-9) + 1e-300
        if math.isfinite(y_slope):
            wedge = y_slope * xi
            hi = hi if (hi <= wedge or hi != hi) else wedge
        lo = 0.0
        top_in = log_f_at(kind, xi, hi, alpha, beta, a, power, memo) >= target
        for _ in range(LIMIT_STEPS):
            mid = 0.5 * (lo + hi)
            if log_f_at(kind, xi, mid, alpha, beta, a, power, memo) >= target:
                lo = mid
            else:
                hi = mid
        out[i] = hi if top_in else 0.5 * (lo + hi)
    return out


@_jit
def inner_kernel(kind, alpha, beta, a, power, x, y_hi, g_star, panels):  # pragma: no cover
    """The terms ``w_j exp(log f(x_i, y_j) - g*)`` of :func:`_inner`'s ``Y`` rule, ``(n, 16 p)``.

    ``y_j, w_j``: ``panels`` Gauss-Legendre panels of :data:`NODES` nodes on ``[0, y_hi[i]]``
    (as :func:`_gauss_legendre`).
    """
    out = np.empty((x.size, panels * NODES))
    memo = np.full(_SLIVER_MEMO, np.nan)
    for i in range(x.size):
        width = y_hi[i] / panels
        for p in range(panels):
            start = width * p
            for k in range(NODES):
                y = start + 0.5 * width * (GL_X[k] + 1.0)
                val = math.exp(log_f_at(kind, x[i], y, alpha, beta, a, power, memo) - g_star)
                out[i, p * NODES + k] = 0.5 * width * GL_W[k] * val
    return out
