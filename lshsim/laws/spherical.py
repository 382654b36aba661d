"""Exact collision probabilities of Voronoi and cross-polytope LSH by 2-D quadrature.

**Voronoi** (softmax top-1 with a random Gaussian router, ``T`` buckets). For unit ``x, y``
at cosine ``a`` the score pairs ``(g_i.x, g_i.y)`` are i.i.d. bivariate normal with
correlation ``a``, so (DESIGN §4)::

    P_vor(T, a) = T E[Phi2(U, V; a)^(T-1)],   (U, V) ~ N2(a),

exactly, for every ``T`` and ``d``. **Cross-polytope** (Andoni et al. 2015, ``n = 2m``
buckets, ``rotation="gaussian-projection"``: an ``m x d`` Gaussian matrix, ``m`` possibly
``> d``): the bucket is the signed largest of ``m`` i.i.d. bivariate-normal coordinate pairs,
so, exactly at every input dimension::

    P_cp(m, a) = 2m E[1{U > 0, V > 0} R(U, V)^(m-1)],   R(u, v) = P(|U'| < u, |V'| < v).

The other constructions of :class:`lshsim.hashing.CrossPolytope` have no exact value here:
``orthogonal`` (the first ``m <= d`` rows of a Haar rotation) maps the pair to a uniform pair
on the sphere at cosine ``a``, whose coordinates are dependent; its law depends on ``d``, and
the formula above is its ``d -> inf`` limit at fixed ``m`` (at ``d = m = 2``, ``a = 0`` it is 0,
not ``1/4``). ``hadamard`` (three rounds of random signs and a Walsh-Hadamard transform) has no
known exact law. ``proofs/lsh_exponent.md`` derives the first and measures both.

**How the integrals are computed.** Rotating to ``U = alpha X + beta Y``,
``V = alpha X - beta Y`` with ``alpha = sqrt((1+a)/2)``, ``beta = sqrt((1-a)/2)`` makes ``X``
and ``Y`` independent standard normals. Both integrands are log-concave in ``(X, Y)``
(products of Gaussian densities and of CDFs of log-concave laws, Prékopa's theorem) and
even in ``Y``, so their mode lies on ``Y = 0`` and every super-level set is convex. The code

1. maximises the concave profile ``g(X) = log f(X, 0)`` (bracket, then golden section);
2. truncates to the super-level set ``log f >= g* - DELTA`` (``DELTA = 46``; the mass
   outside a log-concave level set this deep is below ~1e-18 of the total): an
   ``X``-interval from the profile, and for each ``X`` node a ``Y``-interval by bisection;
3. integrates ``exp(log f - g*)`` there: globally adaptive Gauss-Kronrod 7-15 in ``X``
   (until the summed ``|Kronrod - Gauss|`` estimate is below a tenth of the tolerance) over
   composite Gauss-Legendre in ``Y`` (panels doubled until the total moves by less than
   the tolerance); if either cannot converge it raises :class:`QuadratureError` instead of
   returning a number. Each ``X`` interval's ``Y`` limits and inner integrals are computed
   once and reused while the interval is kept (:class:`_NodeValues`).

The two families' integrands are compiled (Numba kernels over scipy's own Owen's T and
normal CDFs, :func:`_log_f_at`): the rule's many small evaluations then cost the special
functions alone, ~4x faster than NumPy on the same numbers (``tests/theory/
test_spherical_fast.py`` holds them to the NumPy implementation's within 1e-13). Any other
integrand (``lshsim.laws.topk``) goes through :class:`_Integrand` with NumPy.

``T = 2`` Voronoi and ``d = 1`` cross-polytope are the one-bit hyperplane hash
``sign(g.x)`` and use its closed form ``1 - arccos(a)/pi``.

Working with ``log f - g*`` gives ``log P`` accurately even where ``P`` underflows (``a``
near ``-1`` at large ``T``). The CDFs use Owen's T function (Owen 1956), which gives
``C = 1 - Phi2`` and ``1 - R`` without cancellation in the upper tail, where the mass is::

    1 - Phi2(u, v) = Q(u)/2 + Q(v)/2 + T(u, a_u) + T(v, a_v) + [uv < 0]/2,
    1 - R(u, v)    = 2 [T(u, b_-) + T(u, b_+) + T(v, c_-) + T(v, c_+)]   (u, v > 0),

with ``a_u = (v - a u)/(u s)``, ``b_± = (v ± a u)/(u s)``, ``c_± = (u ± a v)/(v s)``,
``s = sqrt(1 - a^2)``; in the rotated coordinates ``a_u = (beta X - alpha Y)/u`` and
``a_v = (beta X + alpha Y)/v``, which stay exact as ``a -> ±1``.

References:
    A. Andoni, P. Indyk, T. Laarhoven, I. Razenshteyn, L. Schmidt, "Practical and optimal
    LSH for angular distance", NeurIPS 2015. D. B. Owen, "Tables for computing bivariate
    normal probabilities", Ann. Math. Statist. 1956. A. Prékopa, "Logarithmic concave
    measures and functions", 1973.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import llvmlite.binding as _llvm
import numba
import numpy as np
from numba.extending import get_cython_function_address
from scipy.special import gammaln, ndtri

#: depth of the truncated super-level set, in nats below the mode
DELTA = 46.0
#: Gauss-Legendre nodes per panel
NODES = 16
#: default relative tolerance of :func:`voronoi_log_probability` and friends
RTOL = 1e-9
#: Gauss-Legendre panels of the inner ``Y`` rule: first try, and most before giving up
START_PANELS = 2
MAX_PANELS = 64

_GL_X, _GL_W = np.polynomial.legendre.leggauss(NODES)


class QuadratureError(ArithmeticError):
    """The quadrature could not reach its tolerance; no number is returned."""


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
#: integrand kinds of the compiled kernels (:func:`_log_f_at`)
_VORONOI, _CROSSPOLYTOPE = 0, 1
# error_model="numpy": NumPy's float semantics (a division by zero gives inf or nan, as the
# NumPy rule did; Numba's default would raise ZeroDivisionError inside the rule)
_jit = numba.njit(cache=True, nogil=True, error_model="numpy")


#: length of the scratch array of :func:`_phi2_sliver`: key ``(x, alpha, beta)``, the two
#: half-widths, then ``t_k / kappa`` and ``Phi(x - t_k)`` at its ``2 x 48`` nodes
_SLIVER_MEMO = 5 + 4 * _SLIVER_T.size


def _new_memo() -> np.ndarray:
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
    ``memo`` (:func:`_new_memo`) for the next call at the same ``X`` (the inner rule's ``Y``
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
def _log_f_at(kind, x, y, alpha, beta, a, power, memo):  # pragma: no cover - jit
    """``log f(X, Y) = -(X^2 + Y^2)/2 + power * log C(u, v)`` of one family (scalars).

    ``C`` is ``Phi2`` for ``kind = _VORONOI`` (``power = T - 1``) and ``R`` for
    ``kind = _CROSSPOLYTOPE`` (``power = m - 1``).
    """
    gauss = -0.5 * (x * x + y * y)
    if kind == _VORONOI:
        return gauss + power * _log_phi2_at(x, y, alpha, beta, memo)
    return gauss + power * _log_box_at(x, y, alpha, beta, a)


@_jit
def _log_cdf_kernel(kind, x, y, alpha, beta, a):  # pragma: no cover - jit
    """``log Phi2`` (``kind = _VORONOI``) or ``log R`` at each ``(x[i], y[i])``; 1-D arrays."""
    out = np.empty(x.size)
    memo = np.full(_SLIVER_MEMO, np.nan)
    for i in range(x.size):
        if kind == _VORONOI:
            out[i] = _log_phi2_at(x[i], y[i], alpha, beta, memo)
        else:
            out[i] = _log_box_at(x[i], y[i], alpha, beta, a)
    return out


@_jit
def _y_limits_kernel(kind, alpha, beta, a, power, y_slope, x, target):  # pragma: no cover - jit
    """:func:`_y_limits` of the family integrand ``(kind, power)`` at each ``x[i]`` (1-D)."""
    out = np.empty(x.size)
    memo = np.full(_SLIVER_MEMO, np.nan)
    for i in range(x.size):
        xi = x[i]
        rise = _log_f_at(kind, xi, 0.0, alpha, beta, a, power, memo) - target
        rise = rise if (rise >= 0.0 or rise != rise) else 0.0
        hi = math.sqrt(2.0 * rise) * (1.0 + 1e-9) + 1e-300
        if math.isfinite(y_slope):
            wedge = y_slope * xi
            hi = hi if (hi <= wedge or hi != hi) else wedge
        lo = 0.0
        top_in = _log_f_at(kind, xi, hi, alpha, beta, a, power, memo) >= target
        for _ in range(_LIMIT_STEPS):
            mid = 0.5 * (lo + hi)
            if _log_f_at(kind, xi, mid, alpha, beta, a, power, memo) >= target:
                lo = mid
            else:
                hi = mid
        out[i] = hi if top_in else 0.5 * (lo + hi)
    return out


@_jit
def _inner_kernel(kind, alpha, beta, a, power, x, y_hi, g_star, panels):  # pragma: no cover
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
                y = start + 0.5 * width * (_GL_X[k] + 1.0)
                val = math.exp(_log_f_at(kind, x[i], y, alpha, beta, a, power, memo) - g_star)
                out[i, p * NODES + k] = 0.5 * width * _GL_W[k] * val
    return out


def _flat(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64).ravel()


def _log_phi2(x: np.ndarray, y: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """``log Phi2(u, v; a)`` at ``u = alpha x + beta y``, ``v = alpha x - beta y`` (arrays)."""
    x, y = np.broadcast_arrays(x, y)
    out = _log_cdf_kernel(_VORONOI, _flat(x), _flat(y), float(alpha), float(beta), 0.0)
    return out.reshape(x.shape)


def _log_box(x: np.ndarray, y: np.ndarray, alpha: float, beta: float, a: float) -> np.ndarray:
    """``log R(u, v)``, ``R = P(|U'| < u, |V'| < v)``, at rotated ``u, v > 0`` (arrays)."""
    x, y = np.broadcast_arrays(x, y)
    out = _log_cdf_kernel(_CROSSPOLYTOPE, _flat(x), _flat(y), float(alpha), float(beta), float(a))
    return out.reshape(x.shape)


class _Integrand:
    """``log f(X, Y)`` (up to a constant) on its domain, with the domain's ``Y`` bound.

    The generic form: ``log_f`` maps arrays of ``X`` and ``Y`` to ``log f``; the inner rule
    evaluates it with NumPy (:func:`_y_limits`, :func:`_inner`).
    """

    def __init__(self, log_f: Callable, x_min: float, y_slope: float):
        self.log_f = log_f
        self.x_min = x_min  # the domain is X > x_min (-inf for Voronoi)
        self.y_slope = y_slope  # |Y| < y_slope * X (inf for Voronoi)

    def profile(self, x: float) -> float:
        if x <= self.x_min:
            return -math.inf
        val = float(self.log_f(np.array([x]), np.array([0.0]))[0])
        return val if not math.isnan(val) else -math.inf

    def y_limits(self, x: np.ndarray, target: float) -> np.ndarray:
        return _y_limits(self, x, target)

    def inner_terms(self, x: np.ndarray, y_hi: np.ndarray, g_star: float, panels: int):
        """The terms of the ``Y`` rule on ``[0, y_hi]`` at each ``x``, ``(x.size, 16 panels)``.

        Weights times ``exp(log f - g*)``; each row sums to the half inner integral.
        """
        ys, wy = _gauss_legendre(np.zeros_like(x), y_hi, panels)
        return wy * np.exp(self.log_f(np.broadcast_to(x[:, None], ys.shape), ys) - g_star)


class _FamilyIntegrand(_Integrand):
    """Voronoi's or the cross-polytope's integrand, evaluated by the compiled kernels.

    ``log f = -(X^2 + Y^2)/2 + power * log C`` with ``C = Phi2`` (``kind = _VORONOI``) or
    ``R`` (``kind = _CROSSPOLYTOPE``); the same numbers as the generic form with that
    ``log_f``, without NumPy's per-call cost on the small arrays and scalars the rule uses.
    """

    def __init__(self, kind: int, power: int, a: float, x_min: float, y_slope: float):
        alpha, beta = _alpha_beta(a)
        self.args = (kind, alpha, beta, a, float(power))
        self.memo = _new_memo()  # for the profile's scalar calls
        super().__init__(self._log_f_arrays, x_min, y_slope)

    def _log_f_arrays(self, x, y):
        kind, alpha, beta, a, power = self.args
        x, y = np.broadcast_arrays(x, y)
        out = _log_cdf_kernel(kind, _flat(x), _flat(y), alpha, beta, a).reshape(x.shape)
        return -0.5 * (x * x + y * y) + power * out

    def profile(self, x: float) -> float:
        if x <= self.x_min:
            return -math.inf
        kind, alpha, beta, a, power = self.args
        val = _log_f_at(kind, x, 0.0, alpha, beta, a, power, self.memo)
        return val if not math.isnan(val) else -math.inf

    def y_limits(self, x: np.ndarray, target: float) -> np.ndarray:
        return _y_limits_kernel(*self.args, float(self.y_slope), _flat(x), float(target))

    def inner_terms(self, x: np.ndarray, y_hi: np.ndarray, g_star: float, panels: int):
        return _inner_kernel(*self.args, _flat(x), _flat(y_hi), float(g_star), int(panels))


def _maximise(itg: _Integrand) -> tuple[float, float]:
    """Mode ``X*`` and ``g* = g(X*)`` of the concave profile ``g(X) = log f(X, 0)``."""
    g = itg.profile
    x0 = 1.0 if itg.x_min == 0.0 else 0.0
    step = 1.0
    if g(x0 + step) >= g(x0):
        lo, mid = x0, x0 + step
        while True:
            step *= 2.0
            hi = mid + step
            if g(hi) < g(mid):
                break
            lo, mid = mid, hi
    else:
        hi, mid = x0 + step, x0
        while True:
            lo = max(mid - step, itg.x_min) if itg.x_min > -math.inf else mid - step
            if lo == itg.x_min or g(lo) < g(mid):
                break
            hi, mid = mid, lo
            step *= 2.0
    # golden section on [lo, hi] (g concave; mid is an interior point with g(mid) >= ends)
    invphi = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = hi - invphi * (hi - lo), lo + invphi * (hi - lo)
    gc, gd = g(c), g(d)
    for _ in range(200):
        if hi - lo <= 1e-12 * max(1.0, abs(hi)):
            break
        if gc >= gd:
            hi, d, gd = d, c, gc
            c = hi - invphi * (hi - lo)
            gc = g(c)
        else:
            lo, c, gc = c, d, gd
            d = lo + invphi * (hi - lo)
            gd = g(d)
    x_star = 0.5 * (lo + hi)
    candidates = [(g(x_star), x_star), (gc, c), (gd, d), (g(mid), mid)]
    g_star, x_star = max(candidates)
    if not math.isfinite(g_star):
        raise QuadratureError("could not locate the integrand's mode (all values underflow)")
    return x_star, g_star


def _crossing(g: Callable, inside: float, target: float, direction: float, bound: float) -> float:
    """The ``X`` beyond ``inside`` (towards ``direction``) where ``g`` falls to ``target``.

    Returns ``bound`` when the domain ends first.
    """
    step = 1.0
    outside = inside + direction * step
    while g(outside) >= target:
        if direction < 0 and outside <= bound:
            return bound
        inside, step = outside, step * 2.0
        outside = inside + direction * step
        if abs(outside) > 1e12:
            raise QuadratureError("the integrand does not decay; cannot bound the integral")
    if direction < 0 and outside < bound:
        outside = bound
        if g(bound) >= target:
            return bound
    for _ in range(200):
        mid = 0.5 * (inside + outside)
        if mid in (inside, outside):
            break
        if g(mid) >= target:
            inside = mid
        else:
            outside = mid
    return outside


def _gauss_legendre(lo: np.ndarray, hi: np.ndarray, panels: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite rule on ``[lo, hi]`` (arrays broadcast): nodes and weights, last axis."""
    lo = np.asarray(lo, dtype=float)[..., None]
    width = (np.asarray(hi, dtype=float)[..., None] - lo) / panels
    starts = lo + width * np.arange(panels)
    nodes = starts[..., None] + 0.5 * width[..., None] * (_GL_X + 1.0)
    weights = 0.5 * width[..., None] * _GL_W
    shape = (*nodes.shape[:-2], panels * NODES)
    return nodes.reshape(shape), np.broadcast_to(weights, nodes.shape).reshape(shape)


# Gauss-Kronrod 7-15 (QUADPACK's qk15): Kronrod nodes on [0, 1] by symmetry, their weights,
# and the 7-point Gauss weights of the nodes with odd index (1, 3, 5, 7)
_K_HALF = np.array(
    [
        0.991455371120812639206854697526329,
        0.949107912342758524526189684047851,
        0.864864423359769072789712788640926,
        0.741531185599394439863864773280788,
        0.586087235467691130294144845693013,
        0.405845151377397166906606412076961,
        0.207784955007898467600689403773245,
        0.0,
    ]
)
_WK_HALF = np.array(
    [
        0.022935322010529224963732008058970,
        0.063092092629978553290700663189204,
        0.104790010322250183839876322541518,
        0.140653259715525918745189590510238,
        0.169004726639267902826583426598550,
        0.190350578064785409913256402421014,
        0.204432940075298892414161999234649,
        0.209482141084727828012999174891714,
    ]
)
_WG_HALF = np.array(
    [
        0.0,
        0.129484966168869693270611432679082,
        0.0,
        0.279705391489276667901467771423780,
        0.0,
        0.381830050505118944950369775488975,
        0.0,
        0.417959183673469387755102040816327,
    ]
)
KRONROD_X = np.concatenate([-_K_HALF[:-1], _K_HALF[::-1]])
KRONROD_W = np.concatenate([_WK_HALF[:-1], _WK_HALF[::-1]])
GAUSS_W = np.concatenate([_WG_HALF[:-1], _WG_HALF[::-1]])
#: bisection steps of each inner ``Y`` limit (:func:`_y_limits`)
_LIMIT_STEPS = 30
#: most X intervals the adaptive outer rule may use
MAX_INTERVALS = 400


def _y_limits(itg: _Integrand, x: np.ndarray, target: float) -> np.ndarray:
    """For each ``X`` node, the ``Y >= 0`` where ``log f(X, Y)`` falls to ``target``.

    ``log f(X, Y) <= log f(X, 0) - Y^2/2`` (the non-Gaussian factor peaks at ``Y = 0``), so
    the crossing lies below ``sqrt(2 (g(X) - target))``; :data:`_LIMIT_STEPS` bisection steps
    find it to ``2^-30`` of that bound. ``f`` there is ``e^-DELTA`` of its peak, so a tighter
    limit moves the inner integral by less than a rounding error (measured: 60 steps change
    the probabilities of a grid of Voronoi and cross-polytope cases by at most 3.5e-15
    relative, and take 28% longer). :func:`_y_limits_kernel` is the same, compiled.
    """
    g0 = itg.log_f(x, np.zeros_like(x))
    hi = np.sqrt(2.0 * np.maximum(g0 - target, 0.0)) * (1.0 + 1e-9) + 1e-300
    hi = np.minimum(hi, itg.y_slope * x) if math.isfinite(itg.y_slope) else hi
    lo = np.zeros_like(x)
    top_in = itg.log_f(x, hi) >= target
    for _ in range(_LIMIT_STEPS):
        mid = 0.5 * (lo + hi)
        ok = itg.log_f(x, mid) >= target
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return np.where(top_in, hi, 0.5 * (lo + hi))


def _inner(itg: _Integrand, xs: np.ndarray, target: float, g_star: float, panels: int):
    """``int exp(log f(X, Y) - g*) dY`` over all ``Y`` (even in ``Y``), for each ``X``."""
    y_hi = itg.y_limits(xs, target)
    return 2.0 * np.sum(itg.inner_terms(xs, y_hi, g_star, panels), axis=1)


class _NodeValues:
    """The inner integrals at the Kronrod nodes of ``X`` intervals, each computed once.

    The adaptive rule re-evaluates every interval it keeps after a bisection, and the panel
    check and each doubling of the panels revisit the same intervals; the ``Y`` limits of an
    interval's nodes do not depend on the panels and its inner integrals depend on nothing
    else, so both are kept per interval (keyed by its end points) and reused: the numbers
    are those of evaluating them afresh.
    """

    def __init__(self, itg: _Integrand, target: float, g_star: float):
        self.itg, self.target, self.g_star = itg, target, g_star
        self.limits: dict[tuple[float, float], np.ndarray] = {}
        self.values: dict[tuple[float, float, int], np.ndarray] = {}

    def __call__(self, lo: np.ndarray, hi: np.ndarray, panels: int) -> np.ndarray:
        """``(lo.size, 15)`` inner integrals at the nodes ``(lo + hi)/2 + (hi - lo)/2 x_k``."""
        keys = list(zip(lo.tolist(), hi.tolist(), strict=True))
        todo = [i for i, key in enumerate(keys) if (*key, panels) not in self.values]
        if todo:
            half = 0.5 * (hi[todo] - lo[todo])
            xs = (0.5 * (lo[todo] + hi[todo]))[:, None] + half[:, None] * KRONROD_X
            fresh = [j for j, i in enumerate(todo) if keys[i] not in self.limits]
            if fresh:
                y_new = self.itg.y_limits(xs[fresh].ravel(), self.target).reshape(-1, xs.shape[1])
                for j, y in zip(fresh, y_new, strict=True):
                    self.limits[keys[todo[j]]] = y
            y_hi = np.stack([self.limits[keys[i]] for i in todo])
            terms = self.itg.inner_terms(xs.ravel(), y_hi.ravel(), self.g_star, panels)
            vals = 2.0 * np.sum(terms, axis=1).reshape(xs.shape)
            for i, row in zip(todo, vals, strict=True):
                self.values[(*keys[i], panels)] = row
        return np.stack([self.values[(*key, panels)] for key in keys])


def _integrate(itg: _Integrand, rtol: float) -> float:
    """``log`` of ``int int f(X, Y) dX dY`` (``f`` as given, on its domain).

    The outer ``X`` integral is globally adaptive Gauss-Kronrod 7-15 (the ``Y`` limits can
    bend sharply where a domain edge meets the level set); the inner ``Y`` integrals are
    composite Gauss-Legendre, their panels doubled until the total no longer moves.
    """
    x_star, g_star = _maximise(itg)
    # the integrand's values carry a relative rounding error of about eps |log f|, so a P
    # far below the float range (|log P| >> 1e6) is known to ~64 eps |log P| at best; the
    # log is still exact to ~1e-9 absolute there. Representable P (|log P| < 745) keep rtol.
    rtol = max(rtol, 64.0 * np.finfo(float).eps * abs(g_star))
    target = g_star - DELTA
    x_lo = _crossing(itg.profile, x_star, target, -1.0, itg.x_min)
    x_hi = _crossing(itg.profile, x_star, target, 1.0, math.inf)
    node_values = _NodeValues(itg, target, g_star)
    inner_panels = START_PANELS
    while inner_panels <= MAX_PANELS:
        points = [x_lo, x_star, x_hi]
        if math.isfinite(itg.y_slope) and itg.y_slope > 0:
            # the wedge |Y| < slope X cuts the level set near X = 0 over a width of order
            # 1/slope (tiny as a -> 1): give the outer rule edges at that scale
            points += [k / itg.y_slope for k in (0.25, 1.0, 4.0, 16.0, 64.0)]
        edges = np.unique([p for p in points if x_lo <= p <= x_hi])
        lo, hi = edges[:-1], edges[1:]
        while True:
            half = 0.5 * (hi - lo)
            vals = node_values(lo, hi, inner_panels)
            kron = half * (vals @ KRONROD_W)
            err = np.abs(kron - half * (vals @ GAUSS_W))
            total = float(kron.sum())
            if total > 0 and err.sum() <= 0.1 * rtol * total:
                break
            if lo.size >= MAX_INTERVALS or not math.isfinite(total):
                raise QuadratureError(
                    f"quadrature did not reach relative tolerance {rtol:g} with "
                    f"{MAX_INTERVALS} intervals (estimate {total!r}, error {err.sum()!r})"
                )
            split = err > 0.1 * rtol * total / lo.size  # bisect every interval over its share
            mids = 0.5 * (lo + hi)
            lo = np.sort(np.concatenate([lo, mids[split]]))
            hi = np.sort(np.concatenate([hi, mids[split]]))
        finer = float(np.sum(half * (node_values(lo, hi, 2 * inner_panels) @ KRONROD_W)))
        if abs(finer - total) <= rtol * total:
            return g_star + math.log(finer)
        inner_panels *= 2
    raise QuadratureError(
        f"inner quadrature did not reach relative tolerance {rtol:g} with {MAX_PANELS} panels"
    )


def _alpha_beta(a: float) -> tuple[float, float]:
    return math.sqrt(0.5 * (1.0 + a)), math.sqrt(0.5 * (1.0 - a))


def voronoi_log_probability(buckets: int, cosine: float, rtol: float = RTOL) -> float:
    """``log P_vor(T, a)``; ``-inf`` at ``a = -1``. Inputs are assumed validated."""
    t, a = int(buckets), float(cosine)
    if a >= 1.0:
        return 0.0
    if a <= -1.0:
        return -math.inf
    if a == 0.0:
        return -math.log(t)  # the T scores of x and of y are independent
    if t == 2:  # argmax(g1.x, g2.x) = sign((g1 - g2).x): one random hyperplane
        return math.log1p(-math.acos(a) / math.pi)
    log_integral = _integrate(_FamilyIntegrand(_VORONOI, t - 1, a, -math.inf, math.inf), rtol)
    return min(0.0, math.log(t) - math.log(2.0 * math.pi) + log_integral)


def crosspolytope_log_probability(buckets: int, cosine: float, rtol: float = RTOL) -> float:
    """``log P_cp(n/2, a)`` for ``n = 2m`` buckets (Gaussian projection); ``-inf`` at ``a = -1``."""
    d, a = int(buckets) // 2, float(cosine)
    if a >= 1.0:
        return 0.0
    if a <= -1.0:
        return -math.inf
    if d == 1:  # buckets ±e_1: the sign of one Gaussian projection
        return math.log1p(-math.acos(a) / math.pi)
    alpha, beta = _alpha_beta(a)
    itg = _FamilyIntegrand(_CROSSPOLYTOPE, d - 1, a, 0.0, alpha / beta)
    log_integral = _integrate(itg, rtol)
    return min(0.0, math.log(2 * d) - math.log(2.0 * math.pi) + log_integral)


def limit_rho(cosine: float) -> float:
    """``(1 - a) / (1 + a)``: the spherical families' exponent as ``n -> inf`` (Andoni et al.)."""
    return math.inf if cosine == -1.0 else (1.0 - cosine) / (1.0 + cosine)


def asymptotic_probability(buckets: int, cosine: float, *, refined: bool = False) -> float:
    """The large-``n`` form of Voronoi's (and the cross-polytope's) ``P`` (``a`` in (-1, 1)).

    * ``refined=False``: Andoni et al. (2015), ``P ~ n^-((1 - a)/(1 + a))`` (their
      ``ln(1/P) = rho ln n + O(ln ln n)`` without the ``O`` term).
    * ``refined=True``: the Laplace (Gumbel) approximation of the exact integral,
      ``P ~ Gamma(1/(1+a))^2 exp(a t^2 / (1+a)) / (n sqrt(1 - a^2))`` with ``n Q(t) = 1``
      (``Q`` the normal upper tail), whose relative error is ``O(1/log n)`` at fixed ``a``
      and which equals ``1/n`` exactly at ``a = 0``. Cross-polytope with ``n = 2d`` buckets
      has the same forms with ``n``: ``1 - R(u, v) ~ 2 Q(u) + 2 Q(v)`` in the tail, which is
      Voronoi's ``1 - Phi2`` with ``n`` in place of ``T``. Inputs are assumed validated.
    """
    n, a = int(buckets), float(cosine)
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
