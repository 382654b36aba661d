"""Reduced samplers: Voronoi / cross-polytope collision indicators from the score pairs alone.

For unit ``x, y`` at cosine ``a`` and a Gaussian table, the scores ``(g_j . x, g_j . y)`` of
the ``cols`` rows are i.i.d. standard bivariate normal pairs with correlation ``a``; a trial
collides when the argmax of the first coordinates (signed: the cross-polytope argmax of their
absolute values) is the argmax of the second. Two samplers give exactly that law:

* :func:`reduced_argmax` draws all ``2 cols`` normals of a trial (small ``cols``);
* :func:`lazy_sample` draws only what decides the trial (the winner, then the few pairs that
  could beat it), with :func:`ndtri` (an ``ndtri`` port for Numba) and the truncated-normal
  quantile :func:`_tn_quantile`.

:func:`reduced_sample` picks between them (``LAZY_MIN_COLS``); the families'
``sample_reduced`` (:mod:`lshsim.hashing.spherical`) call it.
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: Largest number of bivariate pairs the reduced samplers hold at once.
REDUCED_CHUNK = 2**18
#: Largest n for the reduced samplers (the lazy sampler's cost grows slowly with n; the limit
#: keeps the validated range of the theory and of the tests).
MAX_REDUCED_BUCKETS = 2**30


def check_reduced(n: int, family: str) -> None:
    """``ValueError`` naming ``n (buckets)`` when reduced mode cannot sample ``n`` columns."""
    if n > MAX_REDUCED_BUCKETS:
        raise ValueError(
            f"n (buckets) must be <= 2^30 for family '{family}' in mode='reduced', got {n}"
        )


@numba.njit(cache=True, nogil=True)
def _pair_argmax_update(z, cosines, t0, signed, bu, iu, bv, iv, c0, half):  # pragma: no cover
    """Fold a chunk of bivariate pairs into running argmaxes of ``u`` and of ``v``.

    ``z[t, j] = (z1, z2)``; ``u = z1``, ``v = a z1 + sqrt(1 - a^2) z2`` with ``a =
    cosines[t0 + t]``. ``signed`` selects the cross-polytope rule (value ``|.|``, id ``j`` or
    ``j + half`` by sign) instead of the plain Voronoi argmax.
    """
    trials, cols, _ = z.shape
    for t in range(trials):
        a = cosines[t0 + t]
        s = math.sqrt(max(0.0, 1.0 - a * a))
        for j in range(cols):
            u = z[t, j, 0]
            v = a * u + s * z[t, j, 1]
            ju = c0 + j
            jv = c0 + j
            if signed:
                if u < 0:
                    u = -u
                    ju += half
                if v < 0:
                    v = -v
                    jv += half
            if u > bu[t] or (u == bu[t] and ju < iu[t]):
                bu[t] = u
                iu[t] = ju
            if v > bv[t] or (v == bv[t] and jv < iv[t]):
                bv[t] = v
                iv[t] = jv


def reduced_argmax(
    cols: int, cosines: np.ndarray, rng: np.random.Generator, signed: bool
) -> np.ndarray:
    """Collision indicators when each trial compares the argmax of ``cols`` i.i.d. pairs."""
    trials = cosines.shape[0]
    out = np.empty(trials, dtype=np.bool_)
    col_chunk = min(cols, REDUCED_CHUNK)
    trial_chunk = max(1, REDUCED_CHUNK // col_chunk)
    for t0 in range(0, trials, trial_chunk):
        t1 = min(trials, t0 + trial_chunk)
        bu = np.full(t1 - t0, -np.inf)
        bv = np.full(t1 - t0, -np.inf)
        iu = np.zeros(t1 - t0, dtype=np.int64)
        iv = np.zeros(t1 - t0, dtype=np.int64)
        for c0 in range(0, cols, col_chunk):
            z = rng.standard_normal((t1 - t0, min(col_chunk, cols - c0), 2))
            _pair_argmax_update(z, cosines, t0, signed, bu, iu, bv, iv, c0, cols)
        out[t0:t1] = iu == iv
    return out


# --------------------------------------------------------------------------- lazy reduced sampler

_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)
#: Added to ``Generator.random()``'s multiples of 2^-53 in [0, 1) to land strictly in (0, 1).
_HALF_ULP = 2.0**-54
#: Uniforms drawn per trial up front by the lazy sampler (more are drawn when a trial needs them).
LAZY_UNIFORMS_PER_TRIAL = 24
#: Uniforms one step of the lazy sampler may use: a new largest ``z`` (1), the popped extreme's
#: ``u``, holder test and ``z`` (3) and, signed, the sign coin (1). A trial restarts from its
#: first uniform on a fresh, longer buffer when fewer are left, so the result never depends on
#: the buffer size. (It was 4: a signed step could then read one element past the buffer, so
#: cross-polytope estimates depended on whatever memory followed it.)
_LAZY_STEP_UNIFORMS = 5


@numba.njit(cache=True, nogil=True)
def ndtri(p):  # pragma: no cover - jit
    """Inverse standard normal CDF ``Phi^-1(p)`` to about machine precision.

    Acklam's rational approximation (relative error < 1.2e-9) refined by one Halley step on
    ``Phi(x) - p`` computed with ``erf`` (near the centre, where ``p - 1/2`` is exact) or
    ``erfc`` (in the tail, where it keeps relative precision down to ``p ~ 1e-300``). For
    ``p > 1/2`` it returns ``-ndtri(1 - p)``, so pass the smaller tail probability for
    accuracy: ``x = -ndtri(Q)`` for an upper tail ``Q``.

    Args:
        p: probability in [0, 1] (0 -> -inf, 1 -> inf, else nan).

    References:
        P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
        function", 2003.
    """
    if not (p > 0.0 and p < 1.0):
        if p == 0.0:
            return -math.inf
        if p == 1.0:
            return math.inf
        return math.nan
    flip = p > 0.5
    if flip:
        p = 1.0 - p
    if p < 0.02425:
        q = math.sqrt(-2.0 * math.log(p))
        x = (
            (
                (
                    (
                        (-7.784894002430293e-03 * q - 3.223964580411365e-01) * q
                        - 2.400758277161838e00
                    )
                    * q
                    - 2.549732539343734e00
                )
                * q
                + 4.374664141464968e00
            )
            * q
            + 2.938163982698783e00
        ) / (
            (
                ((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e00) * q
                + 3.754408661907416e00
            )
            * q
            + 1.0
        )
    else:
        q = p - 0.5
        r = q * q
        x = (
            (
                (
                    (
                        (
                            (-3.969683028665376e01 * r + 2.209460984245205e02) * r
                            - 2.759285104469687e02
                        )
                        * r
                        + 1.383577518672690e02
                    )
                    * r
                    - 3.066479806614716e01
                )
                * r
                + 2.506628277459239e00
            )
            * q
        ) / (
            (
                (
                    ((-5.447609879822406e01 * r + 1.615858368580409e02) * r - 1.556989798598866e02)
                    * r
                    + 6.680131188771972e01
                )
                * r
                - 1.328068155288572e01
            )
            * r
            + 1.0
        )
    if x > -37.5:  # Halley step (below, exp(x^2/2) overflows: p < ~1e-306 keeps Acklam)
        if p > 0.25:
            e = 0.5 * math.erf(x / _SQRT2) - (p - 0.5)
        else:
            e = 0.5 * math.erfc(-x / _SQRT2) - p
        u = e * _SQRT2PI * math.exp(0.5 * x * x)
        x = x - u / (1.0 + 0.5 * x * u)
    return -x if flip else x


@numba.njit(cache=True, nogil=True)
def _tn_quantile(lo, hi, w, wc):  # pragma: no cover - jit
    """Quantile of the standard normal truncated to ``(lo, hi)`` at lower fraction ``w``.

    ``wc = 1 - w`` is passed separately (both accurate): the point splits the truncated mass
    into ``w`` below and ``wc`` above. It is found from whichever tail probability is smaller,
    ``Phi(lo) + w M`` or ``Q(hi) + wc M`` (``M`` the mass of the interval), so far-tail
    intervals keep relative precision. The result is clamped to ``[lo, hi]``.
    """
    plo = 0.5 * math.erfc(-lo / _SQRT2)
    qhi = 0.5 * math.erfc(hi / _SQRT2)
    if abs(lo) < 1.0 and abs(hi) < 1.0:
        mass = 0.5 * (math.erf(hi / _SQRT2) - math.erf(lo / _SQRT2))
    elif lo >= 0.0:
        mass = 0.5 * math.erfc(lo / _SQRT2) - qhi
    elif hi <= 0.0:
        mass = 0.5 * math.erfc(-hi / _SQRT2) - plo
    else:
        mass = 0.5 * (math.erf(-lo / _SQRT2) + math.erf(hi / _SQRT2))
    lower = plo + w * mass
    upper = qhi + wc * mass
    x = ndtri(lower) if lower <= upper else -ndtri(upper)
    return min(max(x, lo), hi)


@numba.njit(cache=True, nogil=True)
def _max_of(lo, hi, count, unif):  # pragma: no cover - jit
    """The largest of ``count`` i.i.d. normals truncated to ``(lo, hi)``, from one uniform."""
    el = math.log(unif) / count  # P(max <= x) = F(x)^count = unif
    return _tn_quantile(lo, hi, math.exp(el), -math.expm1(el))


@numba.njit(cache=True, nogil=True)
def _min_of(lo, hi, count, unif):  # pragma: no cover - jit
    """The smallest of ``count`` i.i.d. normals truncated to ``(lo, hi)``, from one uniform."""
    el = math.log(unif) / count  # P(min > x) = (1 - F(x))^count = unif
    return _tn_quantile(lo, hi, -math.expm1(el), math.exp(el))


@numba.njit(cache=True, nogil=True)
def _lazy_trials(cosines, cols, signed, unif, out, steps, t0):  # pragma: no cover - jit
    """Lazy exact collision indicators of trials ``t0, t0 + 1, ...`` (see :func:`lazy_sample`).

    Returns ``(t, pos)``: ``t == len(cosines)`` when every trial is done (``pos`` uniforms
    used); otherwise trial ``t`` ran out of uniforms and must be restarted from ``unif[pos]``.
    """
    total = unif.shape[0]
    pos = 0
    inf = math.inf
    for t in range(t0, cosines.shape[0]):
        start = pos
        if pos + 2 * _LAZY_STEP_UNIFORMS > total:
            return t, start
        a = cosines[t]
        s = math.sqrt(max(0.0, 1.0 - a * a))
        # the winner of u: (the absolute value of) the largest of `cols`, and its partner z*
        if signed:
            lo = 0.0
            hi = _max_of(0.0, inf, cols, unif[pos] + _HALF_ULP)
        else:
            lo = -inf
            hi = _max_of(-inf, inf, cols, unif[pos] + _HALF_ULP)
        w = unif[pos + 1] + _HALF_ULP
        vstar = a * hi + s * _tn_quantile(-inf, inf, w, 1.0 - w)
        pos += 2
        ca = abs(a) if signed else a
        zlo = 0.0 if signed else -inf
        r = cols - 1
        mz = inf
        holder = False
        hit = vstar > 0.0 if signed else True
        k = 0
        while hit and r > 0:
            if pos + _LAZY_STEP_UNIFORMS > total:
                return t, start
            k += 1
            if not holder:  # the largest remaining z (|z| when signed), uniformly placed
                mz = _max_of(zlo, mz, r, unif[pos] + _HALF_ULP)
                pos += 1
                holder = True
            zterm = s * mz if s > 0.0 else 0.0
            uterm = ca * hi if ca >= 0.0 else ca * lo
            if uterm + zterm < vstar:  # every remaining v is below v*: collision
                break
            # refine: pop the extreme-u element, or evaluate the holder of the largest z
            if k % 2 == 1 or s == 0.0:
                if ca >= 0.0:
                    hi = _max_of(lo, hi, r, unif[pos] + _HALF_ULP)
                    uval = hi
                else:
                    lo = _min_of(lo, hi, r, unif[pos] + _HALF_ULP)
                    uval = lo
                if (unif[pos + 1] + _HALF_ULP) * r < 1.0:  # it holds the largest z
                    zval = mz
                    holder = False
                else:
                    w = unif[pos + 2] + _HALF_ULP
                    zval = _tn_quantile(zlo, mz, w, 1.0 - w)
                pos += 3
            else:
                w = unif[pos] + _HALF_ULP
                uval = _tn_quantile(lo, hi, w, 1.0 - w)
                zval = mz
                holder = False
                pos += 1
            r -= 1
            if signed:  # |v| = | |a| |u| +- s |z| |, the sign a fair coin
                v = ca * uval + s * zval if unif[pos] < 0.5 else ca * uval - s * zval
                pos += 1
                if abs(v) >= vstar:
                    hit = False
            elif a * uval + s * zval >= vstar:
                hit = False
        out[t] = hit
        steps[t] = k
    return cosines.shape[0], pos


def lazy_sample(
    cols: int, cosines: np.ndarray, rng: np.random.Generator, signed: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Exact collision indicators of the reduced model without drawing all ``cols`` pairs.

    Each trial compares ``argmax_j u_j`` with ``argmax_j v_j`` (``signed``: the signed
    cross-polytope argmax of ``|.|``) over ``cols`` i.i.d. pairs ``u = z_0``,
    ``v = a z_0 + s z_1``, ``s = sqrt(1 - a^2)``, but samples only what decides it:

    1. the winner ``u*`` of ``u`` (the maximum of ``cols`` normals, by inversion in the upper
       tail) and its ``v* = a u* + s z*``; given ``u*`` the other ``r = cols - 1`` pairs are
       i.i.d. with ``u`` truncated to ``(lo, hi) = (-inf, u*)`` (signed: ``|u|`` on
       ``(0, u*)``) and ``z`` independent standard normal;
    2. repeat: if no remaining ``z`` is known to be the largest, draw the largest ``Mz`` of
       the ``r`` remaining (truncated below the previous one) and mark one element, uniformly
       placed and independent of the ``u``'s, as its holder. Every remaining ``v`` is at most
       ``a hi + s Mz`` (``a < 0``: ``a lo + s Mz``; signed: ``|a| hi + s Mz``): below ``v*``
       means a collision. Otherwise remove one element and check its ``v``: alternately the
       extreme-``u`` element (the new ``hi`` is the largest of ``r`` truncated normals, or the
       new ``lo`` the smallest; it is the holder with probability ``1/r``, else its ``z`` is a
       normal truncated below ``Mz``), and the holder (its ``u`` a fresh truncated normal,
       its ``z = Mz``). ``v >= v*`` ends the trial without a collision; ``r = 0`` with one.

    Every conditional law is exact, so the indicators have exactly the brute-force
    distribution (not its stream). Uniforms come from ``rng.random`` in buffers; a trial that
    runs out restarts on a longer buffer from its first uniform, so the indicators are a
    function of the generator's stream alone.

    Returns:
        ``(bool[T] indicators, int64[T] steps)``: steps = bound checks per trial.
    """
    cosines = np.ascontiguousarray(cosines, dtype=np.float64)
    trials = cosines.shape[0]
    out = np.empty(trials, dtype=np.bool_)
    steps = np.zeros(trials, dtype=np.int64)
    unif = rng.random(LAZY_UNIFORMS_PER_TRIAL * trials + 64)
    t = 0
    while True:
        t, pos = _lazy_trials(cosines, cols, signed, unif, out, steps, t)
        if t == trials:
            return out, steps
        unif = np.concatenate((unif[pos:], rng.random(max(unif.shape[0], 1024))))


#: Fewest pairs per trial sampled lazily: below, drawing all ``2 cols`` normals is faster
#: (measured: 0.42 vs 0.62 us per trial at 16 pairs, 0.81 vs 0.76 at 32, 2.8 vs 1.2 at 128).
LAZY_MIN_COLS = 32


def reduced_sample(
    cols: int, cosines: np.ndarray, rng: np.random.Generator, signed: bool
) -> np.ndarray:
    """Collision indicators of ``cols`` pairs per trial: lazily when ``cols`` is large."""
    if cols >= LAZY_MIN_COLS:
        return lazy_sample(cols, cosines, rng, signed)[0]
    return reduced_argmax(cols, cosines, rng, signed)
