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

import numpy as np
from scipy.special import gammaln, ndtri

from lshsim.laws.spherical_kernels import CROSSPOLYTOPE as _CROSSPOLYTOPE
from lshsim.laws.spherical_kernels import GL_W as _GL_W
from lshsim.laws.spherical_kernels import GL_X as _GL_X
from lshsim.laws.spherical_kernels import LIMIT_STEPS as _LIMIT_STEPS
from lshsim.laws.spherical_kernels import NODES
from lshsim.laws.spherical_kernels import VORONOI as _VORONOI
from lshsim.laws.spherical_kernels import inner_kernel as _inner_kernel
from lshsim.laws.spherical_kernels import log_cdf_kernel as _log_cdf_kernel
from lshsim.laws.spherical_kernels import log_f_at as _log_f_at
from lshsim.laws.spherical_kernels import new_memo as _new_memo
from lshsim.laws.spherical_kernels import y_limits_kernel as _y_limits_kernel

#: depth of the truncated super-level set, in nats below the mode
DELTA = 46.0
#: default relative tolerance of :func:`voronoi_log_probability` and friends
RTOL = 1e-9
#: Gauss-Legendre panels of the inner ``Y`` rule: first try, and most before giving up
START_PANELS = 2
MAX_PANELS = 64


class QuadratureError(ArithmeticError):
    """The quadrature could not reach its tolerance; no number is returned."""


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
