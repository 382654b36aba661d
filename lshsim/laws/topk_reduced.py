"""Reduced top-k samplers: the order statistics a top-k overlap needs, not all ``n`` scores.

For unit ``x, y`` at cosine ``a`` and ``n`` Gaussian centres, the score pairs ``(U_i, V_i) =
(g_i . x, g_i . y)`` are i.i.d. standard bivariate normal with correlation ``a``. A trial of the
top-k overlap ``|T_k(x) ∩ T_k(y)|`` draws, exactly in distribution:

1. **x's top-k** ``U_(1) > ... > U_(k)``: the top order statistics of ``n`` normals by
   inversion, ``log F(U_(j)) = sum_{i <= j} log(W_i) / (n - i + 1)`` (``W_i`` uniform), so
   ``U_(j) = -ndtri(-expm1(.))`` keeps its precision in the far tail (``n = 2^62``).
2. **Their y-scores** ``V_j = a U_(j) + sqrt(1 - a^2) Z_j``.
3. **The other ``m = n - k`` pairs** are i.i.d. given ``U < c = U_(k)``; their y-scores have
   survival ``p(w) = P(V > w | U < c) = (Q(w) - L(w, c; a)) / (1 - Q(c))``, ``L`` the upper
   orthant (Owen's T). Voronoi: with x's members sorted by y-score ``w_1 > w_2 > ...``, the
   numbers ``N_r`` of other pairs above ``w_r`` are nested binomials (``N_1 ~ Bin(m, p(w_1))``,
   ``N_r - N_{r-1} ~ Bin(m - N_{r-1}, (p(w_r) - p(w_{r-1})) / (1 - p(w_{r-1})))``), and member
   ``r`` is in ``T_k(y)`` iff ``(r - 1) + N_r < k``: ``k`` binomial draws, no score of the
   other ``m``. Product keys (PKM's rule on each half, ``s = sqrt(n)`` sub-keys): y's top-k of
   the other pairs' y-scores are needed as values (they compete in y's ``k^2`` sums), drawn
   by inverting ``p`` at the top order statistics of ``m`` uniforms (Newton on ``log p``,
   safeguarded by bisection inside the bracket ``(Q(w) - Q(c)) / P(U < c) <= p(w) <= Q(w) /
   P(U < c)``, checked against 40 steps in the tests).

A trial costs ``O(k)`` normal and binomial draws and orthant evaluations (product keys: ``O(k)``
Newton solves per half and the ``k^2`` PKM sums), whatever ``n``.

References:
    H. A. David and H. N. Nagaraja, "Order Statistics", 3rd ed., Wiley 2003 (the top order
    statistics by inversion). D. B. Owen, "Tables for computing bivariate normal
    probabilities", Ann. Math. Statist. 27, 1956 (``T(h, a)``). G. Lample et al., "Large
    memory layers with product keys", NeurIPS 2019 (PKM's top-k).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy.special import ndtr, ndtri, owens_t

__all__ = [
    "MAX_LAW_TOPK",
    "NEWTON_STEPS",
    "PK_TOPK_TRIALS",
    "productkey_topk_law",
    "productkey_topk_reduced",
    "top_order_statistics",
    "upper_orthant",
    "voronoi_topk_reduced",
]

#: Most safeguarded Newton steps of the inversion of ``p`` (bisection where a step leaves the
#: bracket; they stop once every ``log p`` is within 1e-10 of its target or its bracket is
#: 1e-10 wide). Newton converges in about 6 steps for ``|a| <= 0.99``; near ``|a| = 1`` the
#: law is nearly a step at ``c`` and the bisection sets the pace (``1 - a = 1e-6``: about
#: 0.2 of a score left after 32 steps, where the top-k overlap is all but certain).
NEWTON_STEPS = 32
#: Cosines are kept this far inside ``(-1, 1)`` where ``sqrt(1 - a^2)`` divides.
_EDGE = 1e-12


def upper_orthant(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``P(X > h, Y > k)`` for standard bivariate normal ``(X, Y)`` with correlation ``rho``.

    Owen (1956): ``Q(h)/2 + Q(k)/2 - T(h, a_h) - T(k, a_k) - beta``, ``a_h = (k - rho h) / (h
    sqrt(1 - rho^2))``, ``beta = 1/2`` when ``h k < 0`` (or one is 0 and ``h + k < 0``), else 0.
    ``|rho| < 1``; arrays broadcast.
    """
    h, k, rho = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (h, k, rho)))
    r = np.sqrt(1.0 - rho * rho)
    with np.errstate(divide="ignore", invalid="ignore"):
        ah = (k - rho * h) / (h * r)
        ak = (h - rho * k) / (k * r)
    ah = np.where(h == 0, np.copysign(np.inf, k - rho * h), ah)
    ak = np.where(k == 0, np.copysign(np.inf, h - rho * k), ak)
    beta = np.where((h * k > 0) | ((h * k == 0) & (h + k >= 0)), 0.0, 0.5)
    out = 0.5 * (ndtr(-h) + ndtr(-k)) - owens_t(h, ah) - owens_t(k, ak) - beta
    # h = k = 0: Owen's a_h, a_k have no limit there; Sheppard's 1/4 + asin(rho) / (2 pi)
    out = np.where((h == 0) & (k == 0), 0.25 + np.arcsin(rho) / (2.0 * np.pi), out)
    return np.clip(out, 0.0, None)


def top_order_statistics(n: int, k: int, rng: np.random.Generator, count: int):
    """The top ``k`` of ``n`` i.i.d. standard normals, ``count`` times, by inversion.

    Returns:
        ``(values, log_cdf)``: float64[count, k] descending, and ``log F`` of each value
        (``F`` the normal CDF), so ``Q(U_(j)) = -expm1(log_cdf[:, j])`` without rounding.
    """
    steps = np.log(rng.random((count, k))) / (n - np.arange(k))
    log_cdf = np.cumsum(steps, axis=1)
    values = -ndtri(-np.expm1(log_cdf))
    return values, log_cdf


def _cosines(cosines: np.ndarray) -> np.ndarray:
    return np.clip(np.asarray(cosines, dtype=np.float64), -1.0 + _EDGE, 1.0 - _EDGE)


def _rest_survival(w: np.ndarray, c: np.ndarray, log_below: np.ndarray, a: np.ndarray):
    """``p(w) = P(V > w | U < c)`` (module docstring); ``log_below = log P(U < c)``."""
    joint = ndtr(-w) - upper_orthant(w, c, a)
    return np.clip(joint / np.exp(log_below), 0.0, 1.0)


def voronoi_topk_reduced(
    n: int, k: int, cosines: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Top-k overlaps ``|T_k(x) ∩ T_k(y)|`` of Voronoi hashing, one per cosine, exactly.

    Args:
        n: centres, ``n >= k``.
        k: ``1 <= k <= n``.
        cosines: float64[B], the pairs' cosines.
        rng: the generator.

    Returns:
        int64[B], each in ``[0, k]`` (``k`` at cosine 1).
    """
    a = np.asarray(cosines, dtype=np.float64)
    count = a.size
    u, log_cdf = top_order_statistics(n, k, rng, count)
    ac = _cosines(a)[:, None]
    v = ac * u + np.sqrt(1.0 - ac * ac) * rng.standard_normal((count, k))
    w = -np.sort(-v, axis=1)  # x's members by y-score, descending
    m = n - k
    out = np.zeros(count, dtype=np.int64)
    if m == 0:
        out[:] = k
        return out
    p = _rest_survival(w, u[:, k - 1 : k], log_cdf[:, k - 1 : k], ac)
    above = np.zeros(count, dtype=np.int64)
    left = np.full(count, m, dtype=np.int64)
    prev = np.zeros(count)
    alive = np.ones(count, dtype=bool)
    for r in range(k):
        step = np.clip((p[:, r] - prev) / np.maximum(1.0 - prev, 1e-300), 0.0, 1.0)
        more = rng.binomial(left, step)
        above += more
        left -= more
        prev = np.maximum(prev, p[:, r])
        alive &= r + above < k
        out += alive
    out[a >= 1.0] = k
    return out


def _rest_top_scores(
    m: int, k: int, c: np.ndarray, log_below: np.ndarray, a: np.ndarray, rng
) -> np.ndarray:
    """The top ``k`` y-scores of the ``m`` pairs below ``c`` in x (float64[B, k], descending)."""
    count = c.shape[0]
    kk = min(k, m)
    steps = np.log(rng.random((count, kk))) / (m - np.arange(kk))
    log_s = np.log(-np.expm1(np.cumsum(steps, axis=1)))  # log survival targets, increasing
    below = np.exp(log_below)
    target = np.exp(log_s)
    # a bracket of the root: p(w) <= Q(w) / P(U < c) and p(w) >= (Q(w) - Q(c)) / P(U < c)
    hi = -ndtri(target * below)
    lo = -ndtri(np.minimum(target * below - np.expm1(log_below), 1.0))
    w = hi.copy()
    root = np.sqrt(1.0 - a * a)
    for _ in range(NEWTON_STEPS):
        p = _rest_survival(w, c, log_below, a)
        f = np.log(np.maximum(p, 1e-300)) - log_s
        if np.all((np.abs(f) <= 1e-10) | (hi - lo <= 1e-10)):
            break
        lo = np.where(f > 0, w, lo)  # p decreases: p > s means w is left of the root
        hi = np.where(f > 0, hi, w)
        dens = np.exp(-0.5 * w * w) / np.sqrt(2.0 * np.pi) * ndtr((c - a * w) / root) / below
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            nxt = w + f * np.maximum(p, 1e-300) / dens
        # strictly inside: where p underflows to 0 (far right of the root) the step is about
        # 1e-275 and would leave w where it is for every step; bisect instead
        ok = np.isfinite(nxt) & (nxt > lo) & (nxt < hi)
        w = np.where(ok, nxt, 0.5 * (lo + hi))
    out = np.full((count, k), -np.inf)
    out[:, :kk] = w
    return out


@numba.njit(cache=True, nogil=True)
def _pkm_overlap(x1, x2, y1, y2, id1, id2, k):  # pragma: no cover - jit
    """``|T_k(x) ∩ T_k(y)|`` of PKM's rule from each half's top-k lists, per row.

    ``x1``/``x2``: x's top-k scores of each half (float[B, k], its members ``0..k-1``);
    ``y1``/``y2``: y's candidate scores ([B, 2k]) with member ids ``id1``/``id2`` (x's members
    keep their ids, the other pairs' get ``k..2k-1``). The slots are ``(i, j)``; T_k is the top
    ``k`` of the ``k^2`` sums (ties: never, continuous scores).
    """
    rows = x1.shape[0]
    out = np.zeros(rows, dtype=np.int64)
    sums = np.empty(k * k)
    slots = np.empty(k * k, dtype=np.int64)
    for r in range(rows):
        t = 0
        for i in range(k):
            for j in range(k):
                sums[t] = x1[r, i] + x2[r, j]
                slots[t] = i * 2 * k + j
                t += 1
        order = np.argsort(-sums)
        xs = set()
        for q in range(k):
            xs.add(slots[order[q]])
        # y's per-half top-k among the 2k candidates, then the top-k of their sums
        o1 = np.argsort(-y1[r])[:k]
        o2 = np.argsort(-y2[r])[:k]
        t = 0
        for i in range(k):
            for j in range(k):
                sums[t] = y1[r, o1[i]] + y2[r, o2[j]]
                slots[t] = id1[r, o1[i]] * 2 * k + id2[r, o2[j]]
                t += 1
        order = np.argsort(-sums)
        for q in range(k):
            if slots[order[q]] in xs:
                out[r] += 1
    return out


def _half(s: int, k: int, a: np.ndarray, rng):
    """One half's top-k for x and y's ``2k`` candidates (scores and member ids)."""
    count = a.size
    u, log_cdf = top_order_statistics(s, k, rng, count)
    ac = _cosines(a)[:, None]
    v = ac * u + np.sqrt(1.0 - ac * ac) * rng.standard_normal((count, k))
    rest = _rest_top_scores(s - k, k, u[:, k - 1 : k], log_cdf[:, k - 1 : k], ac, rng)
    y = np.concatenate((v, rest), axis=1)
    ids = np.broadcast_to(np.arange(2 * k), (count, 2 * k)).copy()
    return u, y, ids


def productkey_topk_reduced(
    n: int, k: int, cos1: np.ndarray, cos2: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """PKM top-k overlaps ``|T_k(x) ∩ T_k(y)|`` of product keys, one per pair of half-cosines.

    Args:
        n: slots, a square ``s^2``.
        k: ``1 <= k <= s``.
        cos1: float64[B], the first halves' cosines.
        cos2: float64[B], the second halves'.
        rng: the generator.

    Returns:
        int64[B], each in ``[0, k]``.
    """
    s = math.isqrt(n)
    u1, y1, id1 = _half(s, k, np.asarray(cos1, dtype=np.float64), rng)
    u2, y2, id2 = _half(s, k, np.asarray(cos2, dtype=np.float64), rng)
    out = _pkm_overlap(u1, u2, y1, y2, id1, id2, k)
    both = (np.asarray(cos1) >= 1.0) & (np.asarray(cos2) >= 1.0)
    out[both] = k
    return out


#: Largest ``k`` of the numerical product-key top-k law.
MAX_LAW_TOPK = 32
#: Trials of the numerical product-key top-k law (:func:`productkey_topk_law`).
PK_TOPK_TRIALS = 2**15
#: Its seed (the law is a fixed number for fixed arguments).
PK_TOPK_SEED = 0
#: Its error bound in standard errors (99.9% two-sided).
PK_TOPK_Z = 3.2905267314918945
#: Trials per batch of the law (bounds its memory).
_LAW_BATCH = 2**12


def productkey_topk_law(
    n: int,
    k: int,
    a1: float,
    a2: float,
    *,
    trials: int = PK_TOPK_TRIALS,
    seed: int = PK_TOPK_SEED,
) -> tuple[float, float]:
    """PKM's top-k overlap fraction of product keys at half-cosines ``a1, a2``, numerically.

    No closed form or quadrature is known for PKM's rule (the top-k of ``k^2`` sums of two
    halves' order statistics); this law is the mean of ``trials`` exact draws of
    :func:`productkey_topk_reduced` from a fixed seed, with its error bound: ``PK_TOPK_Z``
    standard errors of that mean (99.9%: the true overlap lies within it but for a 1e-3
    chance, the same for every call). At ``k = 1`` it is the exact ``P_vor(s, a1) P_vor(s,
    a2)`` instead (bound 0).

    Args:
        n: slots ``s^2``.
        k: ``1 <= k <= s``.
        a1: the first halves' cosine.
        a2: the second halves'.
        trials: draws, >= 2.
        seed: their seed.

    Returns:
        ``(overlap fraction, error bound)``.
    """
    rng = np.random.default_rng(seed)
    total = squares = 0.0
    done = 0
    while done < trials:
        b = min(_LAW_BATCH, trials - done)
        c = productkey_topk_reduced(n, k, np.full(b, a1), np.full(b, a2), rng) / k
        total += float(c.sum())
        squares += float(c @ c)
        done += b
    mean = total / trials
    var = max(0.0, (squares - trials * mean * mean) / (trials - 1))
    return mean, PK_TOPK_Z * math.sqrt(var / trials)
