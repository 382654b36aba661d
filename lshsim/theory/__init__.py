"""Exact collision probabilities of every family, their exponents and asymptotic forms.

Small pure functions shared by proofs, tests, experiments and plots (DESIGN §4):

* closed forms: SimHash, p-stable with the radix mapping, min-hash (Jaccard), Token-ID;
* Voronoi and cross-polytope (Gaussian rotation) by 2-D quadrature
  (:mod:`lshsim.theory.spherical`), accurate to a relative ``1e-9`` by default;
* one entry point per question: :func:`probability` / :func:`log_probability` at a cosine,
  :func:`rho` ``= -log P / log n``, :func:`limit_rho` (``n -> infinity``),
  :func:`asymptotic_probability` (Andoni et al. 2015 and a sharper Laplace form), and
  :func:`collision_probability` for the sentence model at overlap ``f``.

References:
    M. Charikar, STOC 2002 (SimHash). M. Datar et al., SoCG 2004 (p-stable LSH).
    A. Broder, 1997 (min-hash). A. Andoni et al., "Practical and optimal LSH for angular
    distance", NeurIPS 2015 (spherical and cross-polytope asymptotics).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.special import gammaln, ndtr, ndtri

from lshsim._validate import check_buckets, check_float, check_int
from lshsim.hashing import FAMILIES, get_family
from lshsim.hashing.hyperplane import PStable, radix_of
from lshsim.sentences import check_sentence_model, sentence_cosines
from lshsim.theory import spherical as spherical_theory
from lshsim.theory.spherical import QuadratureError

__all__ = [
    "COSINE_FAMILIES",
    "QuadratureError",
    "SentenceProbability",
    "asymptotic_probability",
    "collision_probability",
    "crosspolytope_probability",
    "datar_probability",
    "jaccard",
    "limit_rho",
    "log_probability",
    "minhash_probability",
    "probabilities",
    "probability",
    "pstable_probability",
    "rho",
    "simhash_probability",
    "tokenid_probability",
    "voronoi_probability",
]

#: families whose collision probability is a function of the cosine of two unit vectors
COSINE_FAMILIES = ("simhash", "pstable", "voronoi", "crosspolytope")


def simhash_probability(n: int, cosine: float) -> float:
    """``P = (1 - arccos(a)/pi)^k`` for ``n = 2^k`` buckets and unit vectors at cosine ``a``."""
    return probability("simhash", n, cosine)


def datar_probability(distance: float, w: float) -> float:
    """Datar et al.'s per-direction probability that two points share a cell (no mapping).

    ``p(c) = 1 - 2 Phi(-w/c) - 2 / (sqrt(2 pi) w / c) (1 - exp(-w^2 / (2 c^2)))`` at Euclidean
    distance ``c``; ``p(0) = 1``.
    """
    c = check_float("distance", distance, 0.0, math.inf, hi_open=True)
    w = check_float("w (width)", w, 0.0, 1e300, lo_open=True)
    if c == 0.0:
        return 1.0
    r = w / c
    # 1 - 2 Phi(-r) = erf(r / sqrt 2) and 1 - exp(-x) = -expm1(-x): no cancellation at small r
    tail = 2.0 / (math.sqrt(2.0 * math.pi) * r) * math.expm1(-r * r / 2.0)
    return math.erf(r / math.sqrt(2.0)) + tail


def _triangle_expectation(j: float, sigma: float) -> float:
    """``E[max(0, 1 - |X - j|)]`` for ``X ~ N(0, sigma^2)`` and ``j >= 0``.

    Closed form for ``sigma <= 4`` (with upper-tail CDFs, so terms far in the tail keep their
    relative precision); for wider ``sigma`` the closed form cancels, and 24-point
    Gauss-Legendre on each half of the triangle is exact to rounding (the density is nearly
    polynomial over a window of width 2 << sigma).
    """
    if sigma > 4.0:
        nodes, weights = _gauss_legendre()
        u = 0.5 * (nodes + 1.0)  # [0, 1]
        z_hi = (j + u) / sigma
        z_lo = (j - u) / sigma
        dens = np.exp(-0.5 * z_hi * z_hi) + np.exp(-0.5 * z_lo * z_lo)
        return float(0.5 * np.sum(weights * (1.0 - u) * dens) / (sigma * math.sqrt(2 * math.pi)))

    def dens(x):  # sigma^2 * density of N(0, sigma^2) at x
        z = abs(x) / sigma
        return 0.0 if z > 60.0 else sigma / math.sqrt(2.0 * math.pi) * math.exp(-0.5 * z * z)

    # upper tails Q(x) = P(X > x): P(a < X < b) = Q(a) - Q(b), accurate for a, b >> 0
    q_lo, q_mid, q_hi = ndtr(-(j - 1) / sigma), ndtr(-j / sigma), ndtr(-(j + 1) / sigma)
    left = dens(j - 1) - dens(j) + (1 - j) * (q_lo - q_mid)  # int (x - j + 1) phi, [j-1, j]
    right = (j + 1) * (q_mid - q_hi) + dens(j + 1) - dens(j)  # int (j + 1 - x) phi, [j, j+1]
    return max(0.0, left + right)


@functools.lru_cache(maxsize=1)
def _gauss_legendre() -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(24)


def pstable_direction_probability(distance: float, w: float, radix: int) -> float:
    """Per-direction collision probability of :class:`lshsim.hashing.PStable`.

    With ``D ~ N(0, c^2)`` the projected difference, the cell difference is ``t`` with
    probability ``E[tri(D/w - t)]``; cells collide when congruent mod ``radix``:
    ``q = sum_{t in Z} E[tri(D/w - t radix)]``. The ``t = 0`` term is :func:`datar_probability`.
    """
    c = check_float("distance", distance, 0.0, math.inf, hi_open=True)
    w = check_float("w (width)", w, 0.0, 1e300, lo_open=True)
    r = check_int("radix", radix, 2)
    sigma = c / w
    if sigma == 0.0:  # c = 0, or so small against w that D/w is 0 in floating point
        return 1.0
    if sigma >= 0.5 * r:
        return _pstable_direction_fourier(sigma, r)
    return _pstable_direction_direct(sigma, r)


def _pstable_direction_direct(sigma: float, r: int) -> float:
    """``sum_t E[tri(X - t r)]`` for ``X ~ N(0, sigma^2)``, term by term (small sigma/r)."""
    total = _triangle_expectation(0.0, sigma)
    t = 1
    while True:  # terms decay like exp(-(t r - 1)^2 / (2 sigma^2)); both signs are equal
        term = 2.0 * _triangle_expectation(float(t * r), sigma)
        total += term
        if t * r - 1 > 40.0 * sigma or term < 1e-18 * total:
            break
        t += 1
    return min(1.0, total)


def _pstable_direction_fourier(sigma: float, r: int) -> float:
    """The same sum by Poisson summation (fast for large sigma/r).

    ``F(x) = sum_t tri(x - t r)`` has period ``r`` and Fourier coefficients
    ``sinc^2(k/r) / r``; ``E[exp(2 pi i k X / r)] = exp(-2 pi^2 k^2 sigma^2 / r^2)``, so
    ``q = (1/r) (1 + 2 sum_{k >= 1} sinc^2(k/r) exp(-2 pi^2 k^2 sigma^2 / r^2))``.
    """
    total = 1.0
    k = 1
    while True:
        damp = math.exp(-2.0 * math.pi**2 * k * k * (sigma / r) ** 2)
        x = math.pi * k / r
        total += 2.0 * (math.sin(x) / x) ** 2 * damp
        if damp < 1e-18:
            return min(1.0, total / r)
        k += 1


def pstable_probability(n: int, distance: float, *, k: int | None = None, w: float = 4.0) -> float:
    """Exact collision probability of :class:`lshsim.hashing.PStable`: ``q^k``.

    Args:
        n: buckets, ``n = r^k``.
        distance: Euclidean distance ``c`` between the two points (``sqrt(2 - 2a)`` for unit
            vectors at cosine ``a``).
        k: directions (default ``log2 n``).
        w: cell width.
    """
    p = PStable.check_params(n, k=k, w=w)
    q = pstable_direction_probability(distance, p["w"], radix_of(p["n"], p["k"]))
    return q ** p["k"]


def jaccard(shared: int, length: int) -> float:
    """Jaccard index ``s / (2l - s)`` of two ``l``-token sets sharing ``s`` tokens."""
    length = check_int("length (l)", length, 1)
    shared = check_int("shared", shared, 0, length)
    return shared / (2 * length - shared)


def tokenid_probability(
    shared: int, length: int, *, n: int | None = None, vocab: int | None = None
) -> float:
    """Per-position Token-ID collision rate of :class:`lshsim.hashing.TokenID`.

    With ``n`` omitted or ``n >= vocab`` every token has its own bucket and the rate is
    ``s / l`` (``= f``) exactly. With ``n < vocab`` (``bucket = id mod n``) a replaced
    position also collides when its two distinct ids, uniform without replacement from
    ``[0, V)``, are congruent mod ``n``: with ``V = q n + r``, that has probability
    ``eps = (r (q + 1) q + (n - r) q (q - 1)) / (V (V - 1))``, and the rate is
    ``s / l + (1 - s / l) eps``.
    """
    length = check_int("length (l)", length, 1)
    base = check_int("shared", shared, 0, length) / length
    if n is None:
        return base
    n = check_buckets(n)
    if vocab is None:
        raise ValueError("vocab (V) is needed with n (buckets)")
    vocab = check_int("vocab (V)", vocab, 2)
    if n >= vocab:
        return base
    q, r = divmod(vocab, n)
    eps = (r * (q + 1) * q + (n - r) * q * (q - 1)) / (vocab * (vocab - 1))
    return base + (1.0 - base) * eps


def minhash_probability(n: int, shared: int, length: int, *, k: int = 1) -> float:
    """Min-hash collision probability of two ``l``-token sets sharing ``s`` tokens.

    Under ideal min-wise hashing ``P = J^k + (1 - J^k) / n`` with ``J`` the Jaccard index:
    all ``k`` minimisers agree with probability ``J^k``; otherwise two distinct combined
    values, spread over ``[0, 2^61 - 1)``, share a residue mod ``n`` with probability
    ``1/n`` up to ``O(n / 2^61)`` (see :mod:`lshsim.hashing.minhash`).
    """
    p = get_family("minhash").check_params(n, k=k)
    jk = jaccard(shared, length) ** p["k"]
    return jk + (1.0 - jk) / p["n"]


# -- the spherical families -------------------------------------------------------------------


def voronoi_probability(n: int, cosine: float, *, rtol: float = spherical_theory.RTOL) -> float:
    """Exact ``P = n E[Phi2(U, V; a)^(n-1)]`` of Voronoi LSH (softmax top-1, random router).

    Any ``n >= 2``; relative error below ``rtol`` (default 1e-9, checked by the rule's own
    error estimate; :class:`QuadratureError` when it cannot be met). ``P(0) = 1/n``,
    ``P(1) = 1``, ``P(-1) = 0``; values below ~1e-308 underflow to 0, use
    :func:`log_probability` for those.
    """
    return math.exp(log_probability("voronoi", n, cosine, rtol=rtol))


def crosspolytope_probability(
    n: int, cosine: float, *, rtol: float = spherical_theory.RTOL
) -> float:
    """Exact collision probability of cross-polytope LSH with a Gaussian rotation, ``n = 2d``.

    ``P = 2d E[1{U > 0, V > 0} R(U, V)^(d-1)]``; accuracy and limits as
    :func:`voronoi_probability`.
    """
    return math.exp(log_probability("crosspolytope", n, cosine, rtol=rtol))


def _check_rtol(rtol: float) -> float:
    return check_float("rtol", rtol, 1e-13, 1e-2)


def _cosine_family(family: str, n: int, params: dict) -> dict:
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    if family not in COSINE_FAMILIES:
        raise ValueError(
            f"family '{family}' is a function of the token sets, not of a cosine; "
            "use collision_probability(..., overlap=f)"
        )
    p = get_family(family).check_params(n, **params)
    if p.get("rotation", "gaussian") != "gaussian":
        raise ValueError(
            "rotation must be 'gaussian' for exact theory: the hadamard rotation has no "
            "closed form (it approaches the gaussian value as d grows)"
        )
    return p


def log_probability(
    family: str, n: int, cosine: float, *, rtol: float = spherical_theory.RTOL, **params
) -> float:
    """``log P`` for a cosine family (simhash, pstable, voronoi, crosspolytope) at cosine ``a``.

    Accurate where ``P`` itself underflows. ``params`` are the family's (``k``, ``w`` for
    pstable; ``rotation`` must be gaussian for crosspolytope). For pstable the unit vectors'
    Euclidean distance ``sqrt(2 - 2a)`` is used.
    """
    p = _cosine_family(family, n, params)
    a = check_float("cosine", cosine, -1.0, 1.0)
    rtol = _check_rtol(rtol)
    if family == "simhash":
        theta = math.acos(a) / math.pi
        return -math.inf if theta == 1.0 else (p["n"].bit_length() - 1) * math.log1p(-theta)
    if family == "pstable":
        dist = math.sqrt(max(0.0, 2.0 - 2.0 * a))
        q = pstable_direction_probability(dist, p["w"], radix_of(p["n"], p["k"]))
        return -math.inf if q == 0.0 else p["k"] * math.log(q)
    if family == "voronoi":
        return spherical_theory.voronoi_log_probability(p["n"], a, rtol)
    return spherical_theory.crosspolytope_log_probability(p["n"], a, rtol)


def probability(family: str, n: int, cosine: float, **params) -> float:
    """Exact collision probability of a cosine family at cosine ``a`` (:func:`log_probability`)."""
    return math.exp(log_probability(family, n, cosine, **params))


def probabilities(family: str, n: int, cosines, **params) -> np.ndarray:
    """Exact ``P`` of a cosine family at every cosine of an array (any shape).

    SimHash in closed form; the others through the checked 48-node Chebyshev table of
    ``log P`` in the angle (as :func:`collision_probability`), so a million cosines cost
    about 50 quadratures. The routing probe uses it for per-position predictions.

    Raises:
        ValueError: unknown or non-cosine family, bad parameters, or a cosine outside
            ``[-1, 1]`` or not finite.
    """
    p = _cosine_family(family, n, params)
    cos = np.asarray(cosines, dtype=np.float64)
    if cos.size and not (np.isfinite(cos).all() and np.abs(cos).max() <= 1.0):
        raise ValueError("cosines must be finite and in [-1, 1]")
    if cos.size == 0:
        return np.zeros(cos.shape)
    if family == "simhash":
        k = p["n"].bit_length() - 1
        return (1.0 - np.arccos(cos) / np.pi) ** k
    extra = {k: v for k, v in p.items() if k != "n"}
    flat = cos.reshape(-1)
    return np.exp(_log_p_table(family, p["n"], flat, extra)).reshape(cos.shape)


def rho(family: str, n: int, cosine: float, **params) -> float:
    """The exponent ``rho = -log P / log n`` at ``n`` buckets, so that ``P = n^-rho``."""
    n = check_buckets(n)
    return -log_probability(family, n, cosine, **params) / math.log(n)


def limit_rho(family: str, cosine: float, *, n: int | None = None, **params) -> float:
    """``lim_{n -> inf} rho(n, a)``.

    * simhash: ``-log2(1 - arccos(a)/pi)``, the same at every ``n``;
    * pstable (fixed radix ``r``, ``n = r^k``; give ``n``, default 2): ``-log q / log r``, the
      same at every ``n`` of that radix;
    * voronoi and crosspolytope: ``(1 - a) / (1 + a)`` (Andoni et al. 2015).
    """
    a = check_float("cosine", cosine, -1.0, 1.0)
    if n is None:  # any valid n: the limit does not depend on it (pstable: radix 2)
        n = 2
    p = _cosine_family(family, n, params)
    if family == "simhash":
        theta = math.acos(a) / math.pi
        return math.inf if theta == 1.0 else -math.log1p(-theta) / math.log(2.0)
    if family == "pstable":
        r = radix_of(p["n"], p["k"])
        q = pstable_direction_probability(math.sqrt(max(0.0, 2 - 2 * a)), p["w"], r)
        return math.inf if q == 0.0 else -math.log(q) / math.log(r)
    return math.inf if a == -1.0 else (1.0 - a) / (1.0 + a)


def asymptotic_probability(family: str, n: int, cosine: float, *, refined: bool = False) -> float:
    """The large-``n`` form of a spherical family's collision probability (``a`` in (-1, 1)).

    * ``refined=False``: Andoni et al. (2015), ``P ~ n^-((1 - a)/(1 + a))`` (their
      ``ln(1/P) = rho ln n + O(ln ln n)`` without the ``O`` term).
    * ``refined=True``: the Laplace (Gumbel) approximation of the exact integral,
      ``P ~ Gamma(1/(1+a))^2 exp(a t^2 / (1+a)) / (n sqrt(1 - a^2))`` with ``n Q(t) = 1``
      (``Q`` the normal upper tail), whose relative error is ``O(1/log n)`` at fixed ``a``
      and which equals ``1/n`` exactly at ``a = 0``. Cross-polytope with ``n = 2d`` buckets
      has the same forms with ``n``: ``1 - R(u, v) ~ 2 Q(u) + 2 Q(v)`` in the tail, which is
      Voronoi's ``1 - Phi2`` with ``n`` in place of ``T``.

    For simhash (and pstable) ``n^-rho`` is exact, and this returns :func:`probability`.
    """
    n = _cosine_family(family, n, {})["n"]
    a = check_float("cosine", cosine, -1.0, 1.0)
    if family in ("simhash", "pstable"):
        return probability(family, n, a)
    if not -1.0 < a < 1.0:
        raise ValueError(f"cosine must be in (-1, 1) for the asymptotic form, got {cosine!r}")
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


# -- the sentence model -----------------------------------------------------------------------


@dataclass(frozen=True)
class SentenceProbability:
    """Collision probability of a family on sentence pairs with overlap ``f``.

    Attributes:
        probability: ``E[P(cos)]`` over the sentence model's cosine law (exact for minhash
            and tokenid, whose rate depends on the tokens only).
        std_error: standard error of the average over the ``cosines`` sampled cosines
            (0 when exact).
        rho: ``-log(probability) / log n``.
        cosines: number of cosines averaged over (0 when exact).
        cosine_mean, cosine_sd: mean and standard deviation of those cosines.
        family, n, overlap, dim, length, vocab, seed, params: the inputs.
    """

    family: str
    n: int
    overlap: float
    probability: float
    std_error: float
    rho: float
    cosines: int
    cosine_mean: float
    cosine_sd: float
    dim: int
    length: int
    vocab: int
    seed: int
    params: dict

    def to_dict(self) -> dict:
        """A JSON-ready dict of all fields."""
        return asdict(self)


#: cosines sampled by default for the sentence-model average
SENTENCE_COSINES = 2**16
#: Chebyshev nodes for tabulating log P over the sampled cosines (voronoi, cp, pstable)
_TABLE_NODES = 48


def _log_p_table(family: str, n: int, cos: np.ndarray, params: dict) -> np.ndarray:
    """``log P`` at every cosine in ``cos``, through a Chebyshev interpolant in the angle.

    ``log P`` is smooth in ``theta = arccos(a)`` (not in ``a``: ``P = 1 - c theta + ...``
    near ``a = 1``), so the table lives on ``[min theta, max theta]``; it is checked at
    interleaved points against direct evaluation, and a miss raises rather than misleads.
    """
    theta = np.arccos(np.clip(cos, -1.0, 1.0))
    lo, hi = float(theta.min()), float(theta.max())

    def direct(t):
        return log_probability(family, n, math.cos(t), **params)

    if hi - lo < 1e-12:
        return np.full(cos.shape, direct(lo))
    k = np.arange(_TABLE_NODES)
    t_nodes = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / _TABLE_NODES)
    vals = np.array([direct(float(t)) for t in t_nodes])
    if not np.isfinite(vals).all():  # a cosine of -1 in range: evaluate every point
        return np.array([direct(float(t)) for t in theta])
    cheb = np.polynomial.chebyshev.Chebyshev.fit(t_nodes, vals, _TABLE_NODES - 1, domain=[lo, hi])
    checks = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k[:-1:6] + 1.0) / _TABLE_NODES)
    for t in checks:
        exact = direct(float(t))
        if abs(cheb(t) - exact) > 1e-7 * max(1.0, abs(exact)):
            raise QuadratureError(
                f"the log P table of {family} at n={n} misses direct quadrature by "
                f"{abs(cheb(t) - exact):.2e} on angles [{lo:.4f}, {hi:.4f}]"
            )
    return cheb(theta)


@functools.lru_cache(maxsize=256)
def _sentence_probability(family, n, overlap, dim, length, vocab, cosines, seed, params_items):
    params = dict(params_items)
    s = check_sentence_model(overlap, length, vocab, dim)
    if family == "tokenid":
        get_family("tokenid").check_params(n, **params)
        p = tokenid_probability(s, length, n=n, vocab=vocab)
        se, count, cos_mean, cos_sd = 0.0, 0, math.nan, math.nan
    elif family == "minhash":
        p = minhash_probability(
            n, s, length, k=get_family("minhash").check_params(n, **params)["k"]
        )
        se, count, cos_mean, cos_sd = 0.0, 0, math.nan, math.nan
    else:
        _cosine_family(family, n, params)
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        cos = sentence_cosines(cosines, overlap, length=length, dim=dim, rng=rng)
        if family == "simhash":
            pv = (1.0 - np.arccos(cos) / np.pi) ** (n.bit_length() - 1)
        else:
            pv = np.exp(_log_p_table(family, n, cos, params))
        p = float(pv.mean())
        se = float(pv.std(ddof=1) / math.sqrt(cosines)) if cosines > 1 else math.inf
        count, cos_mean, cos_sd = cosines, float(cos.mean()), float(cos.std())
    r = -math.log(p) / math.log(n) if p > 0 else math.inf
    return SentenceProbability(
        family, n, overlap, p, se, r, count, cos_mean, cos_sd, dim, length, vocab, seed, params
    )


def collision_probability(
    family: str,
    n: int,
    *,
    overlap: float,
    dim: int = 64,
    length: int = 32,
    vocab: int = 32128,
    cosines: int = SENTENCE_COSINES,
    seed: int = 0,
    **params,
) -> SentenceProbability:
    """Collision probability of ``family`` on the sentence model at overlap ``f``.

    The exact target of ``lshsim simulate --overlap``. For the cosine families it is the
    exact ``P(a)`` averaged over the law of the pair's cosine ``a``: ``cosines`` draws from
    the exact sampler :func:`lshsim.sentences.sentence_cosines` (seeded, so the same
    arguments give the same number), with the standard error of that average reported.
    Voronoi and cross-polytope evaluate ``log P`` through a 48-node Chebyshev interpolant
    over the sampled range, checked against direct quadrature to 1e-7. For minhash
    (Jaccard of the token sets) and tokenid (per-position rate) the value is exact.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    n = check_buckets(n)
    overlap = check_float("overlap (f)", overlap, 0.0, 1.0)
    dim = check_int("dim (d)", dim, 2)
    length = check_int("length (l)", length, 1)
    vocab = check_int("vocab (V)", vocab, 1)
    cosines = check_int("cosines", cosines, 2, 2**24)
    seed = check_int("seed", seed, 0)
    return _sentence_probability(
        family, n, overlap, dim, length, vocab, cosines, seed, tuple(sorted(params.items()))
    )
