"""Theorem 1 of the paper as executable claims with stable ids.

The paper (Sec. 4.1, Theorem 1 and its supplementary proof) states its rates up to ``O(.)``.
Each :class:`Claim` below is a precise version: explicit constants and ranges, a check that
evaluates it numerically (exact theory on a grid, and seeded Monte Carlo where the claim is
about the hash functions themselves), and the pytest test that property-tests it over its
whole range. ``proofs/theorem1.md`` has the statements, proofs and references; ``lshsim
check`` prints the verdicts.

The idealised model of the paper's proof puts the two sentence representations at cosine
``a = f``; claims c-f are about that model, claim g about how far the finite-``d`` sentence
model is from it.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable

import numpy as np

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.hashing import make_family
from lshsim.sentences import (
    COSINE_MEAN_ERROR,
    COSINE_VAR_ERROR,
    DISTANCE_MEAN_ERROR,
    cosine_moments,
    distance_moments,
    sentence_cosines,
    sentence_pairs,
)
from lshsim.theorems.claim_types import Claim, Verdict

#: SimHash ratio bounds: rho_sh(f) / sqrt(1 - f) lies in [SIMHASH_LO, 1]
SIMHASH_LO = math.sqrt(2.0) / (math.pi * math.log(2.0))
#: p-stable (w = 4, radix 2) ratio bounds and its f -> 1 limit 2 / (sqrt(pi) w ln 2)
PSTABLE_W = 4.0
PSTABLE_LO, PSTABLE_HI = 0.40, 0.48
#: spherical regime (1 - f) ln n >= SPHERICAL_KAPPA, n in [2^4, 2^24]: ratio bounds
SPHERICAL_KAPPA = 1.0
SPHERICAL_LO, SPHERICAL_HI = 0.75, 1.35
SPHERICAL_LOG2N = (4, 24)
#: Laplace form's log error bound at n = 2^24 for f in [0.1, 0.9]
LAPLACE_LOG_ERR = 0.35


def _agrees(est, exact: float, z: float = 4.0) -> bool:
    """Binomial agreement: ``|p_hat - p| <= z sqrt(p (1 - p) / m)`` (plus one count)."""
    sd = math.sqrt(max(exact * (1 - exact), 1e-300) / est.samples)
    return abs(est.estimate - exact) <= z * sd + 1.0 / est.samples


def _mc(est, exact: float) -> dict:
    return {
        "estimate": est.estimate,
        "ci": [est.ci_low, est.ci_high],
        "samples": est.samples,
        "exact": exact,
        "z": (est.estimate - exact) / math.sqrt(max(exact * (1 - exact), 1e-300) / est.samples),
    }


# -- a: softmax = Voronoi ---------------------------------------------------------------------


def _check_a1():
    n, d, m = 257, 48, 4000
    fam = make_family("voronoi", n, d, seed=7)
    x = np.random.default_rng(8).standard_normal((m, d))
    logits = x @ fam.centres.T
    mismatches = 0
    for temp in (0.01, 1.0, 100.0):
        z = logits / temp
        soft = np.exp(z - z.max(axis=1, keepdims=True))
        soft /= soft.sum(axis=1, keepdims=True)
        mismatches += int((soft.argmax(axis=1) != fam.hash(x)).sum())
    return mismatches == 0, {"vectors": m, "temperatures": [0.01, 1.0, 100.0], "mismatches": 0}


def _check_a2():
    ev, ok = {}, True
    for d, a, n in ((3, 0.6, 16), (64, 0.8, 64)):
        exact = theory.probability("voronoi", n, a)
        est = estimate_collision("voronoi", n, cosine=a, dim=d, samples=20000, seed=11)
        ok &= _agrees(est, exact)
        ev[f"d={d},n={n},a={a}"] = _mc(est, exact)
    return ok, ev


# -- b: Token-ID as min-hash ------------------------------------------------------------------


def _check_b1():
    ev, ok = {}, True
    for f, length, n in ((0.5, 20, 2**20), (0.25, 8, 2**20), (0.75, 12, 64)):
        s = round(f * length)
        exact = theory.minhash_probability(n, s, length)
        est = estimate_collision("minhash", n, overlap=f, length=length, samples=20000, seed=3)
        ok &= _agrees(est, exact)
        ev[f"f={f},l={length},n={n}"] = {**_mc(est, exact), "jaccard": s / (2 * length - s)}
    return ok, ev


def _check_b2():
    fs = np.linspace(0.0, 1.0, 1001)
    jac = fs / (2.0 - fs)
    inner = (fs > 0) & (fs < 1)
    ok = bool((fs[inner] > jac[inner]).all() and jac[0] == 0 and jac[-1] == 1)
    gap = fs - jac
    return ok, {"max f - J": float(gap.max()), "at f": float(fs[gap.argmax()])}


# -- c: hyperplane rates ----------------------------------------------------------------------


def _check_c1():
    fs = np.linspace(0.0, 1.0, 20001)[:-1]
    theta = np.arccos(fs) / np.pi
    ratio = -np.log1p(-theta) / math.log(2.0) / np.sqrt(1.0 - fs)
    ok = bool(ratio.min() >= SIMHASH_LO and ratio.max() <= 1.0 + 1e-12)
    ok &= bool((np.diff(ratio) < 0).all())
    return ok, {
        "bounds": [SIMHASH_LO, 1.0],
        "observed": [float(ratio.min()), float(ratio.max())],
        "grid": fs.size,
        "decreasing in f": bool((np.diff(ratio) < 0).all()),
    }


def _check_c2():
    fs = np.linspace(0.0, 1.0, 401)[:-1]
    ratio = np.array([theory.limit_rho("pstable", f, w=PSTABLE_W) / math.sqrt(1 - f) for f in fs])
    limit = 2.0 / (math.sqrt(math.pi) * PSTABLE_W * math.log(2.0))
    near1 = theory.limit_rho("pstable", 1 - 1e-8, w=PSTABLE_W) / math.sqrt(1e-8)
    ok = bool(ratio.min() >= PSTABLE_LO and ratio.max() <= PSTABLE_HI)
    ok &= abs(near1 - limit) < 1e-3
    return ok, {
        "bounds": [PSTABLE_LO, PSTABLE_HI],
        "observed": [float(ratio.min()), float(ratio.max())],
        "limit f->1": limit,
        "ratio at f=1-1e-8": near1,
    }


# -- d: spherical rates -----------------------------------------------------------------------

_D_NS = (2, 3, 4, 7, 16, 100, 2**10, 2**16, 2**20, 2**24)
_D_FS = (0.0, 0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 0.97, 0.995)


def _check_d1():
    worst = math.inf
    for family in ("voronoi", "crosspolytope"):
        for n in _D_NS:
            if family == "crosspolytope" and n % 2:
                continue
            for f in _D_FS:
                gap = theory.rho(family, n, f) - (1 - f) / (1 + f)
                if gap < worst:
                    worst, arg = gap, (family, n, f)
    ok = worst >= -1e-9
    return ok, {"min rho - (1-f)/(1+f)": worst, "at (family, n, f)": list(arg)}


def _spherical_region():
    lo, hi = SPHERICAL_LOG2N
    for k in range(lo, hi + 1, 2):
        n = 2**k
        f_max = 1.0 - SPHERICAL_KAPPA / math.log(n)
        for f in np.linspace(0.0, f_max, 9):
            yield n, float(f)


def _check_d2():
    ratios = [(theory.rho("voronoi", n, f) / (1 - f), n, f) for n, f in _spherical_region()]
    lo, hi = min(ratios), max(ratios)
    ok = lo[0] >= SPHERICAL_LO and hi[0] <= SPHERICAL_HI
    return ok, {
        "bounds": [SPHERICAL_LO, SPHERICAL_HI],
        "observed": [lo[0], hi[0]],
        "argmin (n, f)": [lo[1], lo[2]],
        "argmax (n, f)": [hi[1], hi[2]],
        "points": len(ratios),
    }


def _check_d3():
    n = 2**10
    fs = (0.99, 0.999, 0.9999)
    ratios = [theory.rho("voronoi", n, f) / (1 - f) for f in fs]
    ok = ratios[0] < ratios[1] < ratios[2] and ratios[-1] > SPHERICAL_HI
    return ok, {"n": n, "f": list(fs), "rho/(1-f)": ratios}


def _check_d4():
    ks = (8, 12, 16, 20, 24)
    ev, ok = {}, True
    for f in (0.1, 0.3, 0.5, 0.7, 0.9):
        gaps, errs = [], []
        for k in ks:
            n = 2**k
            log_p = theory.log_probability("voronoi", n, f)
            gaps.append(-log_p / math.log(n) - (1 - f) / (1 + f))
            laplace = theory.asymptotic_probability("voronoi", n, f, refined=True)
            errs.append(abs(log_p - math.log(laplace)))
        ok &= all(x > y > 0 for x, y in itertools.pairwise(gaps))
        ok &= all(x > y for x, y in itertools.pairwise(errs)) and errs[-1] <= LAPLACE_LOG_ERR
        ev[f"f={f}"] = {"gap": gaps, "laplace log error": errs}
    return ok, {"log2 n": list(ks), **ev}


# -- e: Token-ID rate f -----------------------------------------------------------------------


def _check_e1():
    rng = np.random.default_rng(5)
    ev, ok = {}, True
    vocab, length = 5000, 20
    for f in (0.1, 0.45, 0.9):
        pairs = sentence_pairs(500, f, length=length, vocab=vocab, rng=rng, embed=False)
        for n in (vocab, 2 * vocab, 2**40):
            fam = make_family("tokenid", n, 1)
            rate = float((fam.hash(pairs.tokens1) == fam.hash(pairs.tokens2)).mean())
            ok &= rate == pairs.shared / length
            ev[f"f={f},n={n}"] = rate
        n = 64  # n < V: f + (1 - f) eps, by Monte Carlo
        est = estimate_collision("tokenid", n, overlap=f, length=length, vocab=vocab, samples=400)
        exact = theory.tokenid_probability(pairs.shared, length, n=n, vocab=vocab)
        ok &= _agrees(est, exact)
        ev[f"f={f},n={n} (n < V)"] = _mc(est, exact)
    return ok, ev


# -- f: the ordering --------------------------------------------------------------------------


#: sup_n n f_n, attained at n = 3 (f_n: the overlap where Token-ID and Softmax tie)
TIE_CONSTANT = 1.71
_F_NS = (2, 3, 4, 5, 6, 8, 16, 64, 256, 4096, 2**16, 2**20)


def tie_overlap(n: int) -> float:
    """``f_n``: the overlap in (0, 1) where Token-ID and Softmax tie, ``P_vor(n, f_n) = f_n``.

    Token-ID >= Softmax at ``n`` buckets exactly when ``f >= f_n`` (claim T1.f1).
    """
    from scipy.optimize import brentq

    n = int(n)

    def excess(f):
        return theory.probability("voronoi", n, f) - f

    lo, hi = 0.5 / n, min(1.0 - 1e-9, 2.0 / n)
    while excess(hi) > 0:  # the tie lies above 2/n only for tiny n
        hi = 0.5 * (hi + 1.0)
    return brentq(excess, lo, hi, xtol=1e-12, rtol=1e-10)


def crossover(f: float) -> int:
    """``n*(f)``: the least ``n >= 2`` with ``P_vor(n, f) <= f`` (Token-ID >= Softmax)."""
    if not 0.0 < f <= 1.0:
        raise ValueError(f"overlap (f) must be in (0, 1], got {f!r}")
    if theory.probability("voronoi", 2, f) <= f:
        return 2
    lo, hi = 2, 4
    while theory.probability("voronoi", hi, f) > f:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if theory.probability("voronoi", mid, f) > f:
            lo = mid
        else:
            hi = mid
    return hi


def _check_f1():
    ev, ok = {}, True
    ties = {n: tie_overlap(n) for n in _F_NS}
    for n, fn in ties.items():
        ok &= 1.0 <= n * fn <= TIE_CONSTANT
        # the region is f >= f_n: Softmax wins just below the tie, Token-ID just above
        ok &= theory.probability("voronoi", n, fn * 0.99) > fn * 0.99
        ok &= theory.probability("voronoi", n, min(1.0, fn * 1.01)) <= fn * 1.01
    ev["n f_n"] = {str(n): n * fn for n, fn in ties.items()}
    for f in (0.01, 0.1, 0.5, 0.9):
        ns = crossover(f)
        ok &= 1.0 / f <= ns < 1.0 + TIE_CONSTANT / f
        ev[f"n*({f})"] = ns
    counter = theory.probability("voronoi", 3, 0.5)
    ok &= counter > 0.5
    ev["counterexample P_vor(3, 0.5)"] = counter
    return ok, ev


def _check_f2():
    worst, ok = math.inf, True
    for k in (2, 3, 5, 8, 12, 16, 20, 24):
        n = 2**k
        for f in (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99):
            diff = theory.probability("voronoi", n, f) - theory.probability("simhash", n, f)
            ok &= diff > 0
            worst = min(worst, diff)
    p = theory.probability
    eq = [p("voronoi", 2, a) - p("simhash", 2, a) for a in (0.3, 0.8)]
    ok &= max(abs(x) for x in eq) < 1e-12
    neg = theory.probability("voronoi", 4, -0.5) - theory.probability("simhash", 4, -0.5)
    ok &= neg < 0
    return ok, {
        "min P_vor - P_sh (n >= 4, f in (0,1))": worst,
        "n = 2 difference": eq,
        "counterexample P_vor - P_sh at n=4, a=-0.5": neg,
    }


# -- g: the sentence model --------------------------------------------------------------------


def _check_g():
    ev, ok = {}, True
    rng = np.random.default_rng(np.random.SeedSequence(17))
    m = 2**17
    for f, length, d in ((0.1, 32, 64), (0.5, 32, 64), (0.9, 32, 64), (0.5, 8, 256), (0.75, 16, 8)):
        cos = sentence_cosines(m, f, length=length, dim=d, rng=rng)
        mean, var = cosine_moments(f, length, d)
        dist = np.sqrt(np.maximum(0.0, 2.0 - 2.0 * cos))
        dmean, _ = distance_moments(f, length, d)
        se_mean = cos.std() / math.sqrt(m)
        dev = cos - cos.mean()
        se_var = math.sqrt(max((dev**4).mean() - cos.var() ** 2, 0.0) / m)  # of the sample var
        se_dist = dist.std() / math.sqrt(m)
        # the stated errors of the delta method (lshsim.sentences) plus 4 standard errors;
        # evidence: each error as a fraction of its tolerance (<= 1 passes)
        used = {
            "mean": abs(cos.mean() - mean) / (4 * se_mean + COSINE_MEAN_ERROR / d**2),
            "var": abs(cos.var() - var) / (4 * se_var + COSINE_VAR_ERROR / d * var),
            "distance": abs(dist.mean() - dmean)
            / (4 * se_dist + DISTANCE_MEAN_ERROR / d**2 * dmean),
        }
        ok &= max(used.values()) <= 1.0
        ev[f"f={f},l={length},d={d}"] = {
            "mean (sampled, formula)": [float(cos.mean()), mean],
            "var (sampled, formula)": [float(cos.var()), var],
            "distance (sampled, formula, sqrt(2(1-f)))": [
                float(dist.mean()),
                dmean,
                math.sqrt(2 * (1 - f)),
            ],
            "fraction of tolerance used": {k: float(v) for k, v in used.items()},
        }
    return ok, ev


def _claim(cid, part, statement, check):
    test = f"tests/theorems/test_claims.py::test_{cid[3:]}"
    return Claim(cid, part, " ".join(statement.split()), test, check)


CLAIMS: dict[str, Claim] = {
    c.id: c
    for c in (
        _claim(
            "T1.a1",
            "1: Softmax lookup can be viewed as spherical LSH",
            """For any router W in R^{n x d}, input x and temperature tau > 0, the top-1 expert
            argmax_i softmax(W x / tau)_i equals argmax_i <w_i, x>; with W the Voronoi family's
            Gaussian centres it is exactly the Voronoi bucket.""",
            _check_a1,
        ),
        _claim(
            "T1.a2",
            "1: Softmax lookup can be viewed as spherical LSH",
            """With a random router (i.i.d. N(0, sigma^2) entries, any sigma, any d >= 2), the
            probability that unit inputs at cosine a take the same top-1 expert is
            P_vor(n, a) = n E[Phi2(U, V; a)^(n-1)], (U, V) standard bivariate normal with
            correlation a.""",
            _check_a2,
        ),
        _claim(
            "T1.b1",
            "1: Token-ID lookup can be viewed as min-hash",
            """Min-hash of the token sets of two l-token sentences sharing s tokens collides
            with probability J + (1 - J)/n, J = s / (2l - s) = f / (2 - f) when f l is an
            integer (ideal min-wise hashing into n buckets).""",
            _check_b1,
        ),
        _claim(
            "T1.b2",
            "2: Token-ID collides at rate f (set versus token)",
            """The per-token Token-ID rate f and the set-level min-hash rate J = f/(2 - f)
            differ: f > f/(2 - f) for f in (0, 1), with equality only at f = 0 and f = 1.
            The fraction f of the paper is the per-token rate.""",
            _check_b2,
        ),
        _claim(
            "T1.c1",
            "2: hyperplane LSH collides with probability n^-O(sqrt(1-f))",
            f"""SimHash with n = 2^k buckets (every k >= 1) at cosine f in [0, 1):
            {SIMHASH_LO:.4f} = sqrt(2)/(pi ln 2) <= rho_sh(f) / sqrt(1 - f) <= 1, where
            rho_sh(f) = -log2(1 - arccos(f)/pi); the ratio decreases in f, from 1 at f = 0
            to the lower bound as f -> 1.""",
            _check_c1,
        ),
        _claim(
            "T1.c2",
            "2: hyperplane LSH collides with probability n^-O(sqrt(1-f))",
            f"""Datar et al. p-stable hyperplanes (w = 4, radix 2, n = 2^k, every k >= 1) at the
            unit-vector distance sqrt(2(1 - f)), f in [0, 1): {PSTABLE_LO} <= rho / sqrt(1 - f)
            <= {PSTABLE_HI}, with limit 2/(sqrt(pi) w ln 2) = 0.4069 as f -> 1.""",
            _check_c2,
        ),
        _claim(
            "T1.d1",
            "2: Softmax collides with probability n^-O(1-f)",
            """For every n >= 2 and f in [0, 1), Voronoi (softmax, random router) and
            cross-polytope (n = 2m, m the rotated dimension) satisfy rho(n, f) >= (1 - f)/(1 + f)
            >= (1 - f)/2, i.e. P <= n^-((1 - f)/(1 + f)) (Borell's hypercontractivity).""",
            _check_d1,
        ),
        _claim(
            "T1.d2",
            "2: Softmax collides with probability n^-O(1-f)",
            f"""In the spherical regime (1 - f) ln n >= {SPHERICAL_KAPPA:g}, 2^4 <= n <= 2^24:
            {SPHERICAL_LO} <= rho_vor(n, f) / (1 - f) <= {SPHERICAL_HI}.""",
            _check_d2,
        ),
        _claim(
            "T1.d3",
            "2: Softmax collides with probability n^-O(1-f) (where it fails)",
            """Outside that regime the rate n^-O(1-f) fails: at fixed n, P_vor = 1 - Theta(theta)
            as f -> 1, so rho_vor(n, f)/(1 - f) grows without bound (n = 2^10: above the
            regime's upper bound by f = 0.9999).""",
            _check_d3,
        ),
        _claim(
            "T1.d4",
            "2: Softmax collides with probability n^-O(1-f) (limit)",
            f"""rho_vor(n, f) decreases to (1 - f)/(1 + f) as n grows (f in [0.1, 0.9], n = 2^8
            ... 2^24), and the gap is that of the Laplace form
            P_L = Gamma(1/(1+f))^2 exp(f t^2/(1+f)) / (n sqrt(1 - f^2)), n Q(t) = 1: the log
            error |log P - log P_L| decreases in n and is <= {LAPLACE_LOG_ERR} at n = 2^24,
            so rho - (1-f)/(1+f) = Theta(log log n / log n).""",
            _check_d4,
        ),
        _claim(
            "T1.e1",
            "2: Token-ID collides at rate f",
            """Token-ID (bucket = id mod n) routes aligned positions of two sentences sharing
            s = round(f l) tokens to the same bucket at rate exactly s/l = f for every n >= V,
            independent of n; for n < V the rate is f + (1 - f) eps(n, V), eps ~ 1/n.""",
            _check_e1,
        ),
        _claim(
            "T1.f1",
            "3: Token-ID >= Softmax for large n and small f",
            f"""At n >= 2 buckets, Token-ID >= Softmax (f >= P_vor(n, f)) exactly when
            f >= f_n, the unique tie in (0, 1); 1 <= n f_n <= {TIE_CONSTANT} (largest at n = 3)
            and n f_n -> 1. As P_vor decreases in n (checked numerically, not proven), this is
            n >= n*(f), with 1/f <= n*(f) < 1 + {TIE_CONSTANT}/f.
            Below the tie the order reverses (f = 0.5, n = 3: P_vor = 0.535 > 0.5).""",
            _check_f1,
        ),
        _claim(
            "T1.f2",
            "3: Softmax >= hyperplane LSH",
            """For n = 2^k >= 4 and f in (0, 1): P_vor(n, f) > P_sh(n, f); they are equal at
            n = 2 (both are one random hyperplane) and at f in {0, 1}. The order reverses for
            negative cosines (n = 4, a = -0.5).""",
            _check_f2,
        ),
        _claim(
            "T1.g1",
            "proof: the dot product of the two averages is f, distance O(sqrt(1-f))",
            f"""In the sentence model (i.i.d. uniform unit token embeddings in R^d, l tokens,
            s = round(f l) shared, normalised means), with f = s/l: E cos = f - f(1 - f)(1 + f
            - 1/l)/(2d) + e_m with |e_m| <= {COSINE_MEAN_ERROR}/d^2 (d >= 4); Var cos =
            [(1 - f^2)^2 - f(1 - f)(2 - f)/l]/d (1 + e_v) with |e_v| <= {COSINE_VAR_ERROR:g}/d
            (d >= 8); and the distance sqrt(2 - 2 cos) has mean sqrt(2(1 - mu)) - Var/(2 (2(1 -
            mu))^(3/2)) within a relative {DISTANCE_MEAN_ERROR:g}/d^2 (mu the mean above), so
            cosine ~ f and distance ~ sqrt(2(1 - f)) up to O(1/d).""",
            _check_g,
        ),
    )
}


def check(ids: list[str] | None = None, progress: Callable[[str], None] | None = None):
    """Evaluate claims (all by default), in id order; returns a list of :class:`Verdict`."""
    ids = list(CLAIMS) if ids is None else ids
    unknown = [i for i in ids if i not in CLAIMS]
    if unknown:
        raise ValueError(f"unknown claim id(s) {', '.join(unknown)}; known: {', '.join(CLAIMS)}")
    verdicts = []
    for cid in ids:
        claim = CLAIMS[cid]
        if progress is not None:
            progress(cid)
        start = time.perf_counter()
        holds, evidence = claim.check()
        seconds = time.perf_counter() - start
        verdicts.append(Verdict(cid, claim.statement, bool(holds), evidence, seconds, claim.test))
    return verdicts
