"""Spherical LSH: Voronoi (softmax top-1 with a random router) and cross-polytope.

Voronoi
    ``n`` Gaussian centres ``g_i ~ N(0, I_d)``; ``h(x) = argmax_i g_i . x`` (ties: lowest id).
    This is exactly top-1 softmax routing with a random Gaussian router ``W = [g_1 ... g_n]^T``:
    softmax is monotone, so its top-1 is the argmax of the logits ``W x``. For unit ``x, y``
    at cosine ``a`` the pairs ``(g_i . x, g_i . y)`` are i.i.d. standard bivariate normal with
    correlation ``a``, which is what :meth:`Voronoi.sample_reduced` samples.

Cross-polytope
    ``n = 2m`` buckets. Rotate ``x`` to ``y = A x`` with ``m`` coordinates, and hash to the
    closest of the ``2m`` signed basis vectors ``±e_j``: id ``j`` for ``+e_j`` and ``j + m`` for
    ``-e_j``, ``j = argmax |y_j|``.

    * ``rotation="gaussian"``: ``A`` is an ``m x d`` Gaussian matrix, the setting of the exact
      formula (pairs ``(y_j(x), y_j(y))`` i.i.d. bivariate normal, as for Voronoi).
    * ``rotation="hadamard"``: ``x`` is zero-padded to ``D``, the next power of two
      ``>= max(d, m)``; three rounds of random ±1 signs followed by an (unnormalised) fast
      Walsh-Hadamard transform ``x <- H S_3 H S_2 H S_1 x``, all inside the kernel; the first
      ``m`` coordinates are kept. This is the pseudo-random rotation of FALCONN. It is an
      exact (scaled) orthogonal map, not a Gaussian one: for ``d`` or ``D`` small its
      coordinates are far from i.i.d. Gaussian, so the Voronoi/cross-polytope law (and the
      reduced sampler) holds only approximately; e.g. at ``n = d = 64``, cosine 0 the
      measured collision rate is 0.0130 (95% CI [0.0124, 0.0138], 10^5 pairs) instead of
      ``1/n = 0.0156``.

References:
    A. Andoni, P. Indyk, T. Laarhoven, I. Razenshteyn, L. Schmidt, "Practical and optimal LSH
    for angular distance", NeurIPS 2015.
    A. Andoni, P. Indyk, H. Nguyen, I. Razenshteyn, "Beyond locality-sensitive hashing",
    SODA 2014.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from lshsim._validate import check_buckets
from lshsim.hashing.base import HashFamily, tiled_argmax, weights_like

#: Largest table (rows x d) a family instance may draw: 2^29 float64 = 4 GiB.
MAX_TABLE = 2**29
#: Largest number of bivariate pairs the reduced samplers hold at once.
REDUCED_CHUNK = 2**18
#: Largest n for the reduced samplers (the lazy sampler's cost grows slowly with n; the limit
#: keeps the validated range of the theory and of the tests).
MAX_REDUCED_BUCKETS = 2**30
#: Largest padded dimension of the Hadamard rotation (a D x cols buffer per thread).
MAX_HADAMARD_DIM = 2**26


def _check_table(rows: int, d: int, family: str) -> None:
    if rows * d > MAX_TABLE:
        raise ValueError(
            f"n (buckets) too large for family '{family}' with d={d}: the {rows} x {d} "
            f"Gaussian table would exceed 2^29 entries (4 GiB); mode='reduced' samples only "
            f"the n score pairs per trial"
        )


def _check_reduced(n: int, family: str) -> None:
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


def _reduced_argmax(
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
#: Uniforms one step of the lazy sampler may use (a trial restarts from its first uniform on a
#: fresh, longer buffer when fewer are left, so the result never depends on the buffer size).
_LAZY_STEP_UNIFORMS = 4


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
    """Lazy exact collision indicators of trials ``t0, t0 + 1, ...`` (see :func:`_lazy_sample`).

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


def _lazy_sample(
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


def _reduced_sample(
    cols: int, cosines: np.ndarray, rng: np.random.Generator, signed: bool
) -> np.ndarray:
    """Collision indicators of ``cols`` pairs per trial: lazily when ``cols`` is large."""
    if cols >= LAZY_MIN_COLS:
        return _lazy_sample(cols, cosines, rng, signed)[0]
    return _reduced_argmax(cols, cosines, rng, signed)


class Voronoi(HashFamily):
    """Voronoi spherical LSH = softmax top-1 with a random Gaussian router; any ``n >= 2``.

    ``hash(batch)`` takes float ``(m, d)`` vectors and returns int64[m]; extra memory is one
    score tile plus O(m), never the ``m x n`` score matrix.
    """

    name = "voronoi"
    reduced = True

    @classmethod
    def check_params(cls, n, **params):
        """Validate ``n`` in ``[2, 2^62]``; no other parameters."""
        if params:
            raise ValueError(f"unknown parameter(s) for voronoi: {', '.join(params)}")
        return {"n": check_buckets(n)}

    @classmethod
    def threads_pay_in_full_mode(cls, params):  # noqa: D102 - see HashFamily
        return True

    def _draw(self, rng):
        _check_table(self.n, self.d, self.name)
        self.centres = rng.standard_normal((self.n, self.d))
        self._cast = {}

    def _hash(self, x):
        return tiled_argmax(x, weights_like(self.centres, self._cast, x.dtype))

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """Whether the argmaxes of ``n`` i.i.d. bivariate-normal score pairs agree, per trial.

        Sampled lazily (:func:`_lazy_sample`, exact in distribution, a few dozen steps per
        trial) for ``n >= LAZY_MIN_COLS``, by drawing all pairs below.
        """
        n = cls.check_params(n, **params)["n"]
        _check_reduced(n, cls.name)
        return _reduced_sample(n, cosines, rng, signed=False)


@numba.njit(cache=True, nogil=True)
def _butterfly2(b0, b1, cols):  # pragma: no cover - jit
    """``(b0, b1) <- (b0 + b1, b0 - b1)`` over ``cols`` entries (two row views: SIMD)."""
    for c in range(cols):
        a0 = b0[c]
        a1 = b1[c]
        b0[c] = a0 + a1
        b1[c] = a0 - a1


@numba.njit(cache=True, nogil=True)
def _butterfly4(b0, b1, b2, b3, cols):  # pragma: no cover - jit
    """Two butterfly stages at once: strides ``h`` (b0/b1, b2/b3) then ``2h`` (b0/b2, b1/b3)."""
    for c in range(cols):
        a0 = b0[c]
        a1 = b1[c]
        a2 = b2[c]
        a3 = b3[c]
        p = a0 + a1
        q = a0 - a1
        u = a2 + a3
        w = a2 - a3
        b0[c] = p + u
        b2[c] = p - u
        b1[c] = q + w
        b3[c] = q - w


@numba.njit(cache=True, nogil=True)
def _butterfly2s(b0, b1, s0, s1, cols):  # pragma: no cover - jit
    """:func:`_butterfly2` of the sign-flipped rows ``s0 b0``, ``s1 b1``."""
    for c in range(cols):
        a0 = b0[c] * s0
        a1 = b1[c] * s1
        b0[c] = a0 + a1
        b1[c] = a0 - a1


@numba.njit(cache=True, nogil=True)
def _butterfly4s(b0, b1, b2, b3, s0, s1, s2, s3, cols):  # pragma: no cover - jit
    """:func:`_butterfly4` of the sign-flipped rows ``s_k b_k``."""
    for c in range(cols):
        a0 = b0[c] * s0
        a1 = b1[c] * s1
        a2 = b2[c] * s2
        a3 = b3[c] * s3
        p = a0 + a1
        q = a0 - a1
        u = a2 + a3
        w = a2 - a3
        b0[c] = p + u
        b2[c] = p - u
        b1[c] = q + w
        b3[c] = q - w


@numba.njit(cache=True, nogil=True)
def _butterfly8(b0, b1, b2, b3, b4, b5, b6, b7, cols):  # pragma: no cover - jit
    """Three butterfly stages at once: strides ``h``, ``2h``, ``4h`` on rows ``b_0 .. b_7``."""
    for c in range(cols):
        a0 = b0[c]
        a1 = b1[c]
        a2 = b2[c]
        a3 = b3[c]
        a4 = b4[c]
        a5 = b5[c]
        a6 = b6[c]
        a7 = b7[c]
        e0 = a0 + a1
        e1 = a0 - a1
        e2 = a2 + a3
        e3 = a2 - a3
        e4 = a4 + a5
        e5 = a4 - a5
        e6 = a6 + a7
        e7 = a6 - a7
        f0 = e0 + e2
        f2 = e0 - e2
        f1 = e1 + e3
        f3 = e1 - e3
        f4 = e4 + e6
        f6 = e4 - e6
        f5 = e5 + e7
        f7 = e5 - e7
        b0[c] = f0 + f4
        b4[c] = f0 - f4
        b1[c] = f1 + f5
        b5[c] = f1 - f5
        b2[c] = f2 + f6
        b6[c] = f2 - f6
        b3[c] = f3 + f7
        b7[c] = f3 - f7


@numba.njit(cache=True, nogil=True)
def _fwht_rows(buf, cols, signs, signed):  # pragma: no cover - jit
    """Unnormalised FWHT along axis 0 of ``buf[D, :cols]``, up to three stages per pass.

    With ``signed``, row ``j`` is first multiplied by ``signs[j]`` (folded into the first
    pass). The first pass fuses one or two stages (``log2 D mod 3`` of them, two when that is
    0), then radix-8 passes fuse three (a radix-2 pass ends when ``log2 D`` is a multiple
    of 3); each butterfly runs over a row of ``cols`` contiguous entries (SIMD). Each entry
    sees exactly the
    additions of the radix-2 stages at strides 1, 2, ..., D/2 in that order (stages are
    fused, never reordered), so the result is bitwise that of the one-vector radix-2
    transform.
    """
    dim = buf.shape[0]
    left = 0
    while (1 << left) < dim:
        left += 1
    if left == 0:
        if signed:
            buf[0, :cols] *= signs[0]
        return
    h = 1
    first = 1 if left % 3 == 1 else 2
    while left > 0:
        k = first if h == 1 else (3 if left >= 3 else left)
        if k == 1:
            for i in range(0, dim, 2 * h):
                for j in range(i, i + h):
                    if signed and h == 1:
                        _butterfly2s(buf[j], buf[j + h], signs[j], signs[j + h], cols)
                    else:
                        _butterfly2(buf[j], buf[j + h], cols)
        elif k == 2:
            for i in range(0, dim, 4 * h):
                for j in range(i, i + h):
                    if signed and h == 1:
                        _butterfly4s(
                            buf[j],
                            buf[j + h],
                            buf[j + 2 * h],
                            buf[j + 3 * h],
                            signs[j],
                            signs[j + h],
                            signs[j + 2 * h],
                            signs[j + 3 * h],
                            cols,
                        )
                    else:
                        _butterfly4(buf[j], buf[j + h], buf[j + 2 * h], buf[j + 3 * h], cols)
        else:
            for i in range(0, dim, 8 * h):
                for j in range(i, i + h):
                    _butterfly8(
                        buf[j],
                        buf[j + h],
                        buf[j + 2 * h],
                        buf[j + 3 * h],
                        buf[j + 4 * h],
                        buf[j + 5 * h],
                        buf[j + 6 * h],
                        buf[j + 7 * h],
                        cols,
                    )
        h <<= k
        left -= k


@numba.njit(cache=True, nogil=True)
def fwht_columns(buf):  # pragma: no cover - jit
    """Unnormalised fast Walsh-Hadamard transform of every column of ``buf[D, B]``, in place.

    Butterflies ``(a, b) -> (a + b, a - b)`` with the stride doubling from 1 to ``D/2``
    (``D`` a power of two), up to three stages per pass; each butterfly runs across a contiguous row
    of ``B`` columns, so a block of vectors is transformed with SIMD; each column sees exactly
    the additions of the one-vector transform, in the same order.
    """
    _fwht_rows(buf, buf.shape[1], np.ones(buf.shape[0], dtype=buf.dtype), False)


#: Rows rotated together by the Hadamard kernel (one ``D x 64`` buffer, transposed, in the
#: input's float type). Chosen with the earlier radix-4 passes (D = 1024, float32, one
#: thread: 32 columns 1.7x slower than 64, 128 no faster); not re-measured for radix-8.
HADAMARD_BLOCK = 64
#: Largest buffer (D x cols entries) of one thread: large D rotates fewer rows at a time.
HADAMARD_BUFFER = 2**22


@numba.njit(cache=True, nogil=True)
def _hadamard_cols(rows, dim):  # pragma: no cover - jit
    return max(1, min(HADAMARD_BLOCK, rows, HADAMARD_BUFFER // dim))


@numba.njit(cache=True, nogil=True, inline="always")
def _signed_tile8(x, r, j, s0, buf, c):  # pragma: no cover - jit
    """``buf[j + k, c + i] = x[r + i, j + k] * s0[j + k]`` for ``i, k < 8``: one 8 x 8 tile.

    The eight stores per coordinate are spelled out so that LLVM keeps the tile in registers
    (measured, 4096 x 1024 float32 on one thread: 2.1 ms against 3.4 ms for a staged copy
    and a strided column gather).
    """
    for k in range(8):
        jk = j + k
        g = s0[jk]
        b = buf[jk]
        b[c] = x[r, jk] * g
        b[c + 1] = x[r + 1, jk] * g
        b[c + 2] = x[r + 2, jk] * g
        b[c + 3] = x[r + 3, jk] * g
        b[c + 4] = x[r + 4, jk] * g
        b[c + 5] = x[r + 5, jk] * g
        b[c + 6] = x[r + 6, jk] * g
        b[c + 7] = x[r + 7, jk] * g


@numba.njit(cache=True, nogil=True)
def _signed_transpose(x, r0, nb, s0, buf):  # pragma: no cover - jit
    """``buf[j, c] = x[r0 + c, j] * s0[j]`` for ``c < nb``, ``j < d``: 8 x 8 tiles, then edges."""
    d = x.shape[1]
    nb8 = nb - nb % 8
    d8 = d - d % 8
    for c in range(0, nb8, 8):
        for j in range(0, d8, 8):
            _signed_tile8(x, r0 + c, j, s0, buf, c)
    for j in range(d8, d):  # the last d % 8 coordinates of the full tiles' rows
        for c in range(nb8):
            buf[j, c] = x[r0 + c, j] * s0[j]
    for c in range(nb8, nb):  # the last nb % 8 rows
        for j in range(d):
            buf[j, c] = x[r0 + c, j] * s0[j]


@numba.njit(cache=True, nogil=True)
def _hadamard_block(x, signs, m, out, r0, cols, buf, best, ids):  # pragma: no cover
    """Cross-polytope ids of rows ``r0 .. r0 + cols`` (fewer at the end) of ``x``.

    ``buf[D, cols]`` (input dtype) receives the rows transposed with the first signs applied
    (8 x 8 register tiles); then the rounds (the signs of rounds 2.. folded into their first
    pass), then the signed argmax over the first ``m`` coordinates, vectorised over the
    columns with the lowest-id tie rule.
    """
    rows, d = x.shape
    rounds = signs.shape[0]
    nb = min(cols, rows - r0)
    buf[d:, :] = 0
    for c in range(nb, cols):
        buf[:d, c] = 0
    _signed_transpose(x, r0, nb, signs[0], buf)
    for r in range(rounds):
        _fwht_rows(buf, cols, signs[r], r > 0)  # round 0's signs came with the transpose
    best[:] = -1.0
    ids[:] = 0
    for j in range(m):
        _signed_best(buf[j], j, m, best, ids, cols)
    for c in range(nb):  # -1 flags a non-finite row (NaN / inf reach every coordinate)
        out[r0 + c] = ids[c] if 0.0 <= best[c] < math.inf else -1


@numba.njit(cache=True, nogil=True)
def _signed_best(row, j, half, best, ids, cols):  # pragma: no cover - jit
    """Fold coordinate ``j`` of every column into the running cross-polytope argmax.

    Candidate id ``j`` (value >= 0) or ``j + half``; ties keep the lower id, as
    ``numpy.argmax`` over ``concat([y, -y])``. Branch-free, so it runs with SIMD.
    """
    for c in range(cols):
        v = row[c]
        a = abs(v)
        cand = j if v >= 0 else j + half
        b = best[c]
        upd = (a > b) | ((a == b) & (cand < ids[c]))
        best[c] = a if upd else b
        ids[c] = cand if upd else ids[c]


@numba.njit(cache=True, nogil=True, parallel=True)
def hadamard_crosspolytope(x, signs, m, out, chunks=8):  # pragma: no cover - jit
    """Cross-polytope ids with the pseudo-random rotation ``H S_R ... H S_1``.

    Rows go ``HADAMARD_BLOCK`` at a time through a transposed ``D x B`` buffer of the input's
    float type (float32 in, float32 arithmetic); blocks run in parallel (``prange`` over
    chunks of blocks, one buffer per chunk). Every row's id depends on that row alone, so the
    output is the same for any thread count.

    Args:
        x: float[rows, d], C-contiguous.
        signs: float[R, D] of ±1 in the dtype of ``x``, ``D`` a power of two ``>= d``.
        m: number of kept coordinates (``n = 2m``), ``m <= D``.
        out: int64[rows], written with ``j`` (``+e_j``) or ``j + m`` (``-e_j``); ties keep
            the lower id, as ``numpy.argmax`` over ``concat([y, -y])`` (and the Gaussian path);
            -1 where the rotated row is not finite (every coordinate of ``H S x`` sums every
            entry of ``x``, so a NaN or inf in a row, or a float32 overflow, reaches them all).
        chunks: parallel work items (e.g. 4 per thread); it changes the split, not the ids.
    """
    rows = x.shape[0]
    dim = signs.shape[1]
    cols = _hadamard_cols(rows, dim)
    blocks = (rows + cols - 1) // cols
    chunks = max(1, min(blocks, chunks))
    per = (blocks + chunks - 1) // chunks
    for k in numba.prange(chunks):
        buf = np.empty((dim, cols), dtype=x.dtype)
        best = np.empty(cols, dtype=x.dtype)
        ids = np.empty(cols, dtype=np.int64)
        for b in range(k * per, min(blocks, (k + 1) * per)):
            _hadamard_block(x, signs, m, out, b * cols, cols, buf, best, ids)


@numba.njit(cache=True, nogil=True)
def hadamard_crosspolytope_serial(x, signs, m, out):  # pragma: no cover - jit
    """:func:`hadamard_crosspolytope` on one thread (small batches: no thread start-up)."""
    rows = x.shape[0]
    dim = signs.shape[1]
    cols = _hadamard_cols(rows, dim)
    buf = np.empty((dim, cols), dtype=x.dtype)
    best = np.empty(cols, dtype=x.dtype)
    ids = np.empty(cols, dtype=np.int64)
    for r0 in range(0, rows, cols):
        _hadamard_block(x, signs, m, out, r0, cols, buf, best, ids)


class CrossPolytope(HashFamily):
    """Cross-polytope spherical LSH with ``n = 2m`` buckets (``n`` even).

    Params:
        rotation: ``"gaussian"`` (default; dense ``m x d`` Gaussian, exact-formula setting) or
            ``"hadamard"`` (three rounds of random signs + fast Walsh-Hadamard, as FALCONN).

    ``hash(batch)`` takes float ``(m, d)`` vectors and returns int64[m].
    """

    name = "crosspolytope"
    reduced = True  # exact for rotation="gaussian" only; hadamard raises
    ROUNDS = 3

    @classmethod
    def check_params(cls, n, rotation="gaussian", **params):
        """Validate ``n`` even in ``[2, 2^62]`` and ``rotation`` in {gaussian, hadamard}."""
        if params:
            raise ValueError(f"unknown parameter(s) for crosspolytope: {', '.join(params)}")
        n = check_buckets(n, even=True, family=cls.name)
        if rotation not in ("gaussian", "hadamard"):
            raise ValueError(f"rotation must be 'gaussian' or 'hadamard', got {rotation!r}")
        return {"n": n, "rotation": rotation}

    @classmethod
    def threads_pay_in_full_mode(cls, params):  # noqa: D102 - see HashFamily
        return params.get("rotation", "gaussian") == "gaussian"

    @property
    def m(self) -> int:
        """Number of rotated coordinates, ``n / 2``."""
        return self.n // 2

    def _draw(self, rng):
        self._cast = {}
        # the Hadamard kernel flags non-finite rows itself (no separate pass over the batch)
        self.validates_projections = self.params["rotation"] == "hadamard"
        if self.params["rotation"] == "gaussian":
            _check_table(self.m, self.d, self.name)
            self.rotation = rng.standard_normal((self.m, self.d))
        else:
            dim = 1 << max(self.d - 1, self.m - 1, 0).bit_length()
            if dim > MAX_HADAMARD_DIM:
                raise ValueError(
                    f"n (buckets) too large for rotation='hadamard' with d={self.d}: the "
                    f"padded dimension D = {dim} (a power of two >= max(d, n/2)) exceeds 2^26"
                )
            self.signs = rng.choice(np.array([-1.0, 1.0]), size=(self.ROUNDS, dim))

    def _hash(self, x):
        if self.params["rotation"] == "gaussian":
            a = weights_like(self.rotation, self._cast, x.dtype)
            return tiled_argmax(x, a, signed_half=self.m)
        out = self._hadamard(x)
        bad = out < 0
        if bad.any():
            if not np.isfinite(x).all():
                raise ValueError("batch must be finite (found NaN or inf)")
            if x.dtype == np.float32:  # a float32 sum overflowed: those rows again in float64
                out[bad] = self._hadamard(x[bad].astype(np.float64))
            if (out < 0).any():
                raise ValueError("batch too large: its rotated coordinates overflow float64")
        return out

    def _hadamard(self, x):
        out = np.empty(x.shape[0], dtype=np.int64)
        if out.shape[0] == 0:
            return out
        signs = weights_like(self.signs, self._cast, x.dtype)
        if x.shape[0] > 2 * HADAMARD_BLOCK:
            hadamard_crosspolytope(x, signs, self.m, out, 4 * numba.get_num_threads())
        else:  # one or two blocks: no thread start-up
            hadamard_crosspolytope_serial(x, signs, self.m, out)
        return out

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """Gaussian rotation: ``m = n/2`` i.i.d. bivariate-normal coordinate pairs per trial.

        Sampled lazily (:func:`_lazy_sample`) for ``m >= LAZY_MIN_COLS``, else by drawing all.
        """
        p = cls.check_params(n, **params)
        if p["rotation"] != "gaussian":
            raise ValueError(
                "mode='reduced' is exact only for rotation='gaussian'; use mode='full' for "
                "rotation='hadamard'"
            )
        _check_reduced(p["n"], cls.name)
        return _reduced_sample(p["n"] // 2, cosines, rng, signed=True)
