"""Checks of Theorem 1's routing claims: softmax = Voronoi (a), Token-ID and min-hash (b, e).

Each ``check_*`` takes ``quick`` (a smaller sample for the test suite) and returns
``(holds, evidence)``; every number in the evidence is computed here from the library's hash
families (:mod:`lshsim.hashing`), sentence sampler (:mod:`lshsim.sentences`) and exact theory
(:mod:`lshsim.theory`).

Monte Carlo here draws ``B`` independent hash functions and hashes a fresh batch of pairs with
each, so the standard error comes from the ``B`` batch rates (no independence assumed inside
a batch). A point agrees with the exact value when ``|estimate - exact| <= z se``, with ``z``
the Bonferroni quantile of a family-wise false-alarm rate :data:`ALPHA` over the points of
the check (about 4.4 for 8 points).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.special import ndtri

from lshsim import theory
from lshsim.hashing import make_family
from lshsim.sentences import cosine_pairs, sentence_pairs

#: family-wise probability that a correct library fails a Monte-Carlo check at its fixed seed
ALPHA = 1e-4
#: root seed of the checks' random numbers
SEED = 20240607


def bonferroni_z(points: int, alpha: float = ALPHA) -> float:
    """Two-sided normal quantile for ``points`` simultaneous tests at family-wise ``alpha``."""
    return float(-ndtri(alpha / (2 * points)))


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([SEED, *key]))


def _batch_rate(rates: np.ndarray) -> tuple[float, float]:
    """Mean of per-function batch rates and its standard error."""
    return float(rates.mean()), float(rates.std(ddof=1) / math.sqrt(rates.size))


def _agreement(points: dict, z: float) -> bool:
    """Record ``z_score`` per point; all agree within ``z`` standard errors.

    The standard error is the batch means' (``se``), but at least the binomial one of the
    exact value over the point's ``trials``: a batch spread of 0 (every batch at the same
    rate, e.g. no collision seen) must not make the tolerance 0.
    """
    ok = True
    for ev in points.values():
        p = ev["exact"]
        se = max(ev["se"], math.sqrt(p * (1.0 - p) / ev["trials"]))
        err = ev["estimate"] - p
        ev["z_score"] = err / se if se > 0 else (0.0 if err == 0 else math.inf)
        ok &= abs(err) <= z * se
    return ok


# -- T1.a1: softmax top-1 = Voronoi bucket -----------------------------------------------------

#: (n, d, seed) of the Voronoi families whose centres are the routers
A1_ROUTERS = ((257, 48, 7), (3, 2, 1), (1000, 8, 2), (16, 300, 3))
A1_SCALES = (1e-3, 1.0, 1e3)
A1_TEMPERATURES = (0.01, 1.0, 100.0)


def softmax_router(x: np.ndarray, w: np.ndarray, temperature: float) -> np.ndarray:
    """Softmax router probabilities ``softmax(W x / tau)`` per row, in float64, from scratch."""
    logits = np.einsum("md,nd->mn", x, w) / temperature
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_a1(quick: bool = False):
    """T1.a1: a softmax router's top expert is the Voronoi family's bucket."""
    rows = 200 if quick else 2000
    compared = mismatches = ties = 0
    for i, (n, d, seed) in enumerate(A1_ROUTERS[: 2 if quick else None]):
        fam = make_family("voronoi", n, d, seed)
        rng = _rng(1, i)
        for scale in A1_SCALES:
            x = rng.standard_normal((rows, d)) * scale
            bucket = fam.hash(x)
            for temp in A1_TEMPERATURES:
                p = softmax_router(x, fam.centres, temp)
                top = p.max(axis=1)
                unique = (p == top[:, None]).sum(axis=1) == 1
                mismatches += int((unique & (p[np.arange(rows), bucket] < top)).sum())
                compared += int(unique.sum())
                ties += int((~unique).sum())
    ok = mismatches == 0 and compared >= 0.9 * (compared + ties)
    return ok, {
        "routers (n, d, seed)": [list(r) for r in A1_ROUTERS[: 2 if quick else None]],
        "input scales": list(A1_SCALES),
        "temperatures": list(A1_TEMPERATURES),
        "rows compared": compared,
        "rows whose top softmax probability is tied in float64": ties,
        "rows where the Voronoi bucket's probability is below the top": mismatches,
    }


# -- T1.a2: the collision probability of a random router -----------------------------------------

#: (d, n, a): routers in R^d with n experts, unit inputs at cosine a
A2_POINTS = (
    (2, 3, -0.5),
    (2, 7, 0.3),
    (3, 16, 0.6),
    (8, 5, 0.9),
    (16, 100, 0.5),
    (64, 64, 0.8),
    (32, 1000, 0.95),
    (5, 2, 0.2),
)


def check_a2(quick: bool = False):
    """T1.a2: Monte Carlo of random routers against the exact ``P_vor(n, a)``."""
    routers, pairs = (150, 100) if quick else (500, 200)
    points = A2_POINTS[:4] if quick else A2_POINTS
    ev = {}
    for i, (d, n, a) in enumerate(points):
        rng = _rng(2, i)
        rates = np.empty(routers)
        for r in range(routers):
            x, y = cosine_pairs(pairs, a, d, rng)
            fam = make_family("voronoi", n, d, np.random.SeedSequence([SEED, 2, i, r]))
            ids = fam.hash(np.concatenate([x, y]))
            rates[r] = np.mean(ids[:pairs] == ids[pairs:])
        est, se = _batch_rate(rates)
        ev[f"d={d},n={n},a={a}"] = {
            "estimate": est,
            "se": se,
            "trials": routers * pairs,
            "exact": theory.probability("voronoi", n, a),
        }
    z = bonferroni_z(len(points))
    ok = _agreement(ev, z)
    return ok, {"routers x pairs per point": [routers, pairs], "z": z, **ev}


# -- T1.b1: min-hash of the token sets ------------------------------------------------------------

#: (l, s, n): sentence length, shared tokens, buckets
B1_POINTS = (
    (20, 10, 2**20),
    (8, 2, 2**20),
    (12, 9, 64),
    (40, 13, 3),
    (5, 0, 7),
    (3, 1, 5),
    (32, 31, 2**62),
    (1, 1, 2),
)


def check_b1(quick: bool = False):
    """T1.b1: min-hash of the sampler's token sets against ``J + (1 - J)/n``."""
    funcs, pairs = (150, 100) if quick else (600, 200)
    points = B1_POINTS[:4] if quick else B1_POINTS
    ev = {}
    for i, (length, s, n) in enumerate(points):
        rng = _rng(3, i)
        rates = np.empty(funcs)
        for r in range(funcs):
            pp = sentence_pairs(pairs, s / length, length=length, rng=rng, embed=False)
            fam = make_family("minhash", n, 1, np.random.SeedSequence([SEED, 3, i, r]))
            rates[r] = np.mean(fam.hash(pp.tokens1) == fam.hash(pp.tokens2))
        est, se = _batch_rate(rates)
        ev[f"l={length},s={s},n={n}"] = {
            "estimate": est,
            "se": se,
            "trials": funcs * pairs,
            "exact": theory.minhash_probability(n, s, length),
            "jaccard s/(2l-s)": s / (2 * length - s),
        }
    z = bonferroni_z(len(points))
    ok = _agreement(ev, z)
    return ok, {"functions x pairs per point": [funcs, pairs], "z": z, **ev}


# -- T1.b2: per-token rate f against the set-level Jaccard index ----------------------------------

B2_LENGTHS = (1, 2, 7, 32, 1000)
#: (l, s) of the sampled pairs whose token sets are compared with theory.jaccard
B2_SAMPLED = ((7, 3), (32, 19), (12, 12), (9, 0), (40, 1))


def _rates_and_jaccard(length: int) -> tuple[np.ndarray, np.ndarray]:
    s = range(length + 1)
    rate = np.array([theory.tokenid_probability(k, length) for k in s])
    jac = np.array([theory.jaccard(k, length) for k in s])
    return rate, jac


def check_b2(quick: bool = False):
    """T1.b2: the library's Token-ID rate s/l exceeds its Jaccard index inside (0, l)."""
    ok, order_violations = True, 0
    for length in B2_LENGTHS[:4] if quick else B2_LENGTHS:
        rate, jac = _rates_and_jaccard(length)
        inner = slice(1, length)
        order_violations += int((rate[inner] <= jac[inner]).sum())
        ok &= rate[0] == jac[0] == 0.0 and rate[-1] == jac[-1] == 1.0
    big = 1000
    rate, jac = _rates_and_jaccard(big)
    gap = rate - jac
    closed = 3.0 - 2.0 * math.sqrt(2.0)  # max of f(1 - f)/(2 - f), at f = 2 - sqrt(2)
    ok &= order_violations == 0 and abs(gap.max() - closed) <= 1.0 / big**2
    set_mismatches = token_mismatches = 0
    rng = _rng(4)
    for length, s in B2_SAMPLED:
        pp = sentence_pairs(32, s / length, length=length, vocab=4 * length, rng=rng, embed=False)
        for t1, t2 in zip(pp.tokens1, pp.tokens2, strict=True):
            a, b = set(t1.tolist()), set(t2.tolist())
            set_mismatches += len(a & b) / len(a | b) != theory.jaccard(s, length)
            token_mismatches += np.mean(t1 == t2) != theory.tokenid_probability(s, length)
    ok &= set_mismatches == 0 and token_mismatches == 0
    return ok, {
        "lengths": list(B2_LENGTHS),
        "inner s with rate <= J": order_violations,
        f"max (rate - J) at l={big}": float(gap.max()),
        "at s/l": float(np.argmax(gap) / big),
        "3 - 2 sqrt(2)": closed,
        "sampled pairs (l, s)": [list(p) for p in B2_SAMPLED],
        "pairs whose token sets' Jaccard != theory.jaccard": int(set_mismatches),
        "pairs whose per-position rate != theory.tokenid_probability": int(token_mismatches),
    }


# -- T1.e1: Token-ID's rate ------------------------------------------------------------------

E1_LENGTH = 20
E1_SHARED = (2, 9, 18)
#: vocabularies for n >= V, and (V, n) with n < V
E1_VOCABS = (64, 5000)
E1_SMALL = ((5000, 3), (5000, 16), (5000, 64), (5000, 2500), (64, 63))


def congruent_fraction(n: int, vocab: int) -> Fraction:
    """Exact fraction of ordered pairs of distinct ids in ``[0, V)`` congruent mod ``n``."""
    counts = np.bincount(np.arange(vocab) % n, minlength=n).astype(object)
    return Fraction(int((counts * (counts - 1)).sum()), vocab * (vocab - 1))


def _tokenid_rates(n: int, vocab: int, s: int, pairs: int, rng) -> np.ndarray:
    """Per-pair fraction of aligned positions Token-ID routes together, on sampled pairs."""
    pp = sentence_pairs(pairs, s / E1_LENGTH, length=E1_LENGTH, vocab=vocab, rng=rng, embed=False)
    fam = make_family("tokenid", n, 1)
    return (fam.hash(pp.tokens1) == fam.hash(pp.tokens2)).mean(axis=1)


def check_e1(quick: bool = False):
    """T1.e1: Token-ID on sampled sentence pairs: exactly s/l for n >= V, f + (1-f) eps below."""
    pairs = 100 if quick else 400
    rng = _rng(5)
    off, exact_ev = 0, {}
    for vocab in E1_VOCABS:
        for n in (vocab, 2 * vocab + 1, 2**40):
            for s in E1_SHARED:
                rates = _tokenid_rates(n, vocab, s, pairs, rng)
                off += int((rates != s / E1_LENGTH).sum())
                exact_ev[f"V={vocab},n={n},s={s}"] = float(rates.mean())
    small = E1_SMALL[:2] if quick else E1_SMALL
    mc, formula_off, mc_pairs = {}, 0.0, 10 * pairs
    for vocab, n in small:
        eps = congruent_fraction(n, vocab)
        for s in E1_SHARED:
            exact = theory.tokenid_probability(s, E1_LENGTH, n=n, vocab=vocab)
            base = Fraction(s, E1_LENGTH)
            formula_off = max(formula_off, abs(exact / float(base + (1 - base) * eps) - 1.0))
            est, se = _batch_rate(_tokenid_rates(n, vocab, s, mc_pairs, rng))
            mc[f"V={vocab},n={n},s={s}"] = {
                "estimate": est,
                "se": se,
                "trials": mc_pairs * E1_LENGTH,
                "exact": exact,
            }
    z = bonferroni_z(len(mc))
    ok = off == 0 and formula_off <= 1e-12
    ok &= _agreement(mc, z)
    return ok, {
        "l": E1_LENGTH,
        "shared s": list(E1_SHARED),
        "pairs per point": pairs,
        "n >= V: mean rate (must be s/l)": exact_ev,
        "n >= V: pairs whose rate != s/l": off,
        "n < V: max relative gap, theory vs exact count of congruent ids": formula_off,
        "n < V: Monte Carlo over pairs (z)": z,
        **mc,
    }
