"""Hashed n-grams (issue 19, Engram-style): the exact collision law and its limits, as claims.

Four claims with stable ids, each a :class:`~lshsim.theorems.claim_types.Claim` whose check
calls the library (:mod:`lshsim.laws.ngram`, the :class:`~lshsim.hashing.NGram` kernel) and
a :class:`~lshsim.theorems.claim_types.Mutation` under which the check fails; statements and
proofs in ``proofs/ngram.md``, property tests in ``tests/theorems/test_claims_ngram.py``.

* **B.ng1** (proven): the aligned-window rate is ``q + (1 - q)/m``, ``q = C(s, N) / C(l, N)``.
* **B.ng2** (proven): ``N = 1`` is Token-ID's rate ``s / l`` plus the hash term
  ``(1 - s/l)/m``.
* **B.ng3** (proven): ``q -> f^N`` with ``q (1-f) N(N-1)/(2s) <= f^N - q <=
  (1-f) N(N-1)/(2(l-N+1))`` (``f = s/l``).
* **B.ng4** (proven): the heads' law ``q 1{K=H} + (1-q) PoissonBinomial(1/m_h)``.

The Monte-Carlo parts run the kernel on the sentence model with fixed seeds; a pair's windows
share one function, so their indicators are correlated: the tolerance is ``Z`` standard
errors of a mean over *pairs* (the variance of a mean of ``w`` correlated indicators is at
most ``p (1 - p)``, that of one), which is conservative.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.hashing import NGram
from lshsim.hashing.ngram import ngram_moduli
from lshsim.sentences import sentence_pairs, shared_tokens
from lshsim.theorems.claim_types import (
    EXACT_RESIDUALS,
    MONTE_CARLO,
    SEEDED_THEORY,
    Claim,
    Mutation,
    replacing,
)

__all__ = ["CLAIMS_NGRAM", "MC_POINTS", "Z", "enumerated_shared", "heads_law_enumerated"]

#: standard errors allowed between a Monte-Carlo rate and the exact one (fixed seeds)
Z = 4.5
#: Monte-Carlo points (N, m, f, l, H) of B.ng1 and B.ng4; pairs per point (full, quick)
MC_POINTS = ((2, 3, 0.5, 16, 1), (3, 5, 0.75, 12, 1), (2, 1000, 0.7, 32, 1), (1, 7, 0.25, 8, 1))
HEADS_POINTS = ((2, 3, 0.5, 16, 3), (3, 2, 0.8, 10, 4))
PAIRS = (40_000, 8_000)
#: the exhaustive grid of B.ng1 and B.ng3 (every s and N for each l)
ENUM_LENGTHS = (1, 2, 5, 8, 10)
LIMIT_LENGTHS = (1, 2, 3, 7, 16, 50, 200, 1000)
LIMIT_ORDERS = (1, 2, 3, 4, 6)
#: B.ng3's limit: f, N at l = 10^6 (f l an integer)
ASYMPTOTIC = ((0.3, 2), (0.5, 3), (0.9, 4))
BIG_L = 10**6


def enumerated_shared(ngram: int, shared: int, length: int) -> Fraction:
    """``q`` by brute force, as an exact fraction.

    Over all ``C(l, s)`` placements of the shared positions and all ``l - N + 1`` windows: the
    fraction of (placement, window) with every position of the window shared.
    """
    hit = total = 0
    for placed in itertools.combinations(range(length), shared):
        mask = [False] * length
        for i in placed:
            mask[i] = True
        for t in range(ngram - 1, length):
            total += 1
            hit += all(mask[t - ngram + 1 : t + 1])
    return Fraction(hit, total)


def heads_law_enumerated(q: float, moduli) -> list[float]:
    """``P(K = k)`` by summing over all ``2^H`` sets of colliding heads (independent heads)."""
    law = [0.0] * (len(moduli) + 1)
    for hits in itertools.product((False, True), repeat=len(moduli)):
        p = math.prod(1.0 / m if h else 1.0 - 1.0 / m for h, m in zip(hits, moduli, strict=True))
        law[sum(hits)] += (1.0 - q) * p
    law[-1] += q
    return law


def _mc_rate(point, pairs: int, seed: int) -> dict:
    """The kernel's all-heads rate at ``(N, m, f, l, H)`` against the exact one."""
    ngram, m, f, length, heads = point
    est = estimate_collision(
        "ngram", m, overlap=f, length=length, samples=pairs, seed=seed, ngram=ngram, heads=heads
    )
    exact = theory.ngram_probability(ngram, m, f, length, heads=heads)
    se = math.sqrt(exact * (1.0 - exact) / pairs)
    return {"point": list(point), "estimate": est.estimate, "exact": exact, "z": _z(est, exact, se)}


def _z(est, exact: float, se: float) -> float:
    return abs(est.estimate - exact) / se if se > 0 else abs(est.estimate - exact) * math.inf


def check_ng1(quick: bool = False) -> tuple[bool, dict]:
    """B.ng1: ``q`` by enumeration on a grid; the kernel's rate within Z pair-level errors."""
    worst_q = 0.0
    for length in ENUM_LENGTHS:
        for s in range(length + 1):
            for ngram in range(1, length + 1):
                exact = float(enumerated_shared(ngram, s, length))
                worst_q = max(
                    worst_q, abs(theory.ngram_shared_probability(ngram, s, length) - exact)
                )
    pairs = PAIRS[quick]
    rows = [_mc_rate(p, pairs, seed=i) for i, p in enumerate(MC_POINTS)]
    worst_z = max(r["z"] for r in rows)
    return bool(worst_q == 0.0 and worst_z <= Z), {
        "max |q - enumeration| (l in 1..10, all s, N)": worst_q,
        "monte carlo (N, m, f, l, H)": rows,
        "max z": worst_z,
        "z bound": Z,
        "pairs per point": pairs,
    }


def _drop_hash_term(original: Callable) -> Callable:
    def ngram_probability(ngram, m, overlap, length=32, *, heads=1):
        s = shared_tokens(overlap, length)
        return theory.ngram_shared_probability(ngram, s, length)

    return ngram_probability


def check_ng2(quick: bool = False) -> tuple[bool, dict]:
    """B.ng2: at ``N = 1``, ``q`` is Token-ID's ``s/l`` and the hash adds ``(1 - s/l)/m``.

    The Token-ID kernel (``n >= V``) hits exactly ``s/l``, the n-gram kernel the hashed rate.
    """
    mismatches, worst = 0, 0.0
    for length in (1, 2, 3, 10, 32, 1000, 10**6 + 3):
        for s in sorted({0, 1, length // 3, length - 1, length}):
            q = theory.ngram_shared_probability(1, s, length)
            mismatches += q != theory.tokenid_probability(s, length)
            for m in (2, 7, 2**20):
                p = theory.ngram_probability(1, m, s / length, length)
                worst = max(worst, abs(p - q - (1.0 - s / length) / m))
    pairs = PAIRS[quick]
    f, length, vocab = 0.25, 8, 64
    tok = estimate_collision("tokenid", vocab, overlap=f, length=length, vocab=vocab, samples=200)
    hashed = _mc_rate((1, 7, f, length, 1), pairs, seed=17)
    ok = mismatches == 0 and worst <= 1e-15 and tok.estimate == shared_tokens(f, length) / length
    return bool(ok and hashed["z"] <= Z), {
        "q(N=1) != tokenid_probability (grid)": mismatches,
        "max |P(N=1) - q - (1 - s/l)/m|": worst,
        "tokenid kernel (n = V = 64, f = 0.25, l = 8)": tok.estimate,
        "ngram kernel N = 1, m = 7": hashed,
    }


def _shifted(original: Callable) -> Callable:
    def ngram_shared_probability(ngram, shared, length):
        if shared == 0 or length == 1:
            return original(ngram, shared, length)
        return float(Fraction(math.perm(shared - 1, ngram), math.perm(length - 1, ngram)))

    return ngram_shared_probability


def limit_bounds(ngram: int, shared: int, length: int, q: float) -> tuple[float, float]:
    """B.ng3's bounds on ``f^N - q`` (``f = s/l``), written out from the statement."""
    f, pairs = shared / length, ngram * (ngram - 1) / 2
    upper = (1 - f) * pairs / (length - ngram + 1)
    lower = q * (1 - f) * pairs / shared if shared >= ngram else 0.0
    return lower, upper


def check_ng3(quick: bool = False) -> tuple[bool, dict]:
    """The two-sided bound on every (N, s) of the grid; the limit and its 1/l rate at l = 10^6."""
    violations, cases, tight = 0, 0, math.inf
    for length in LIMIT_LENGTHS[: 6 if quick else None]:
        for ngram in (n for n in LIMIT_ORDERS if n <= length):
            for s in range(length + 1):
                q = theory.ngram_shared_probability(ngram, s, length)
                gap = (s / length) ** ngram - q
                lower, upper = limit_bounds(ngram, s, length, q)
                cases += 1
                violations += not (lower - 1e-15 <= gap <= upper + 1e-15)
                if upper > 0 and gap > 0:
                    tight = min(tight, upper / gap)
    rates = []
    for f, ngram in ASYMPTOTIC:
        s = round(f * BIG_L)
        gap = f**ngram - theory.ngram_shared_probability(ngram, s, BIG_L)
        rates.append(gap * BIG_L / ((1 - f) * f ** (ngram - 1) * ngram * (ngram - 1) / 2))
    worst_rate = max(abs(r - 1.0) for r in rates)
    return bool(violations == 0 and worst_rate <= 1e-4), {
        "bound violations": violations,
        "cases (l, N, s)": cases,
        "min upper / gap where gap > 0": tight,
        "(f^N - q) l / ((1-f) f^(N-1) N(N-1)/2) at l = 10^6": rates,
        "max |ratio - 1|": worst_rate,
    }


def _with_replacement(original: Callable) -> Callable:
    def ngram_shared_probability(ngram, shared, length):
        original(ngram, shared, length)  # the same validation
        return (shared / length) ** ngram

    return ngram_shared_probability


def _mc_heads(point, pairs: int, seed: int) -> dict:
    """The kernel's head-count histogram at ``(N, m, f, l, H)`` against the exact law."""
    ngram, m, f, length, heads = point
    rng = np.random.default_rng(seed)
    pairs_ = sentence_pairs(pairs, f, length=length, vocab=32128, rng=rng, embed=False)
    counts = NGram.pair_collisions(m, pairs_.tokens1, pairs_.tokens2, rng, ngram=ngram, heads=heads)
    freq = counts / counts.sum()
    law = theory.ngram_heads_law(ngram, m, f, length, heads=heads)
    z = [
        abs(a - b) / math.sqrt(b * (1 - b) / pairs) if 0 < b < 1 else abs(a - b) * math.inf
        for a, b in zip(freq, law, strict=True)
    ]
    return {"point": list(point), "frequencies": freq.tolist(), "law": law, "max z": float(max(z))}


def check_ng4(quick: bool = False) -> tuple[bool, dict]:
    """The law against enumeration over the 2^H head sets; the kernel's histogram against it."""
    worst, worst_all = 0.0, 0.0
    for ngram, m, f, length, heads in itertools.product(
        (1, 2, 3), (2, 5, 1000), (0.0, 0.4, 1.0), (3, 12), (1, 2, 5)
    ):
        law = theory.ngram_heads_law(ngram, m, f, length, heads=heads)
        q = theory.ngram_shared_probability(ngram, shared_tokens(f, length), length)
        brute = heads_law_enumerated(q, ngram_moduli(m, heads))
        worst = max(worst, max(abs(a - b) for a, b in zip(law, brute, strict=True)))
        p_all = theory.ngram_probability(ngram, m, f, length, heads=heads)
        worst_all = max(worst_all, abs(law[-1] - p_all), abs(sum(law) - 1.0))
    rows = [_mc_heads(p, PAIRS[quick], seed=i) for i, p in enumerate(HEADS_POINTS)]
    worst_z = max(r["max z"] for r in rows)
    return bool(worst <= 1e-14 and worst_all <= 1e-14 and worst_z <= Z), {
        "max |law - enumeration|": worst,
        "max |P(K=H) - probability|, |sum - 1|": worst_all,
        "monte carlo (N, m, f, l, H)": rows,
        "max z": worst_z,
        "z bound": Z,
    }


def _correlated_heads(original: Callable) -> Callable:
    def poisson_binomial(probs):
        probs = list(probs)  # every head decided by the first: all agree or none
        return [1.0 - probs[0]] + [0.0] * (len(probs) - 1) + [probs[0]]

    return poisson_binomial


#: The Monte-Carlo rows: the kernel's estimate (seeded), its z-score against the exact value
_MC_ROWS = {
    "monte carlo (N, m, f, l, H)/*/estimate": MONTE_CARLO,
    "monte carlo (N, m, f, l, H)/*/z": SEEDED_THEORY,
    "max z": SEEDED_THEORY,
}
#: What each claim's evidence promises (``lshsim compare``): exact laws and their residuals,
#: and Monte-Carlo rows of the kernel next to the exact values (their z-scores).
EVIDENCE_KINDS: dict[str, dict] = {
    "B.ng1": {"": EXACT_RESIDUALS, **_MC_ROWS},
    "B.ng2": {
        "": EXACT_RESIDUALS,
        "tokenid kernel (n = V = 64, f = 0.25, l = 8)": MONTE_CARLO,
        "ngram kernel N = 1, m = 7/estimate": MONTE_CARLO,
        "ngram kernel N = 1, m = 7/z": SEEDED_THEORY,
    },
    "B.ng3": {"": EXACT_RESIDUALS},
    "B.ng4": {  # its rows are histograms over the heads that agree, not one estimate
        "": EXACT_RESIDUALS,
        "monte carlo (N, m, f, l, H)/*/frequencies": MONTE_CARLO,
        "monte carlo (N, m, f, l, H)/*/max z": SEEDED_THEORY,
        "max z": SEEDED_THEORY,
    },
}


def _claim(cid: str, part: str, statement: str, check, mutation: Mutation) -> Claim:
    test = f"tests/theorems/test_claims_ngram.py::test_{cid[2:]}"
    quick = functools.partial(check, quick=True)
    statement = " ".join(statement.split())
    return Claim(cid, part, statement, test, check, mutation, quick, kinds=EVIDENCE_KINDS[cid])


#: The claims of this module, in id order (registered by :data:`lshsim.theorems.claims.PARTS`).
CLAIMS_NGRAM: tuple[Claim, ...] = (
    _claim(
        "B.ng1",
        "issue 19: the exact hashed n-gram rate on the sentence model",
        """Sentences of l tokens sharing s = round(f l) aligned positions placed uniformly at
        random (other ids fresh, all distinct); an n-gram hash of order N into m buckets, ideal
        (distinct n-grams get independent uniform buckets). For every full window t >= N - 1,
        P[bucket_1(t) = bucket_2(t)] = q + (1 - q)/m with q = s(s-1)...(s-N+1) /
        (l(l-1)...(l-N+1)) = C(s, N)/C(l, N). Proven; checked against enumeration of all
        placements (l <= 10) and against the NGram kernel by Monte Carlo (fixed seeds, within
        4.5 pair-level standard errors).""",
        check_ng1,
        Mutation(
            "ngram-no-hash-term",
            "the n-gram rate drops the hash-collision term (1 - q)/m and returns q alone.",
            replacing("lshsim.laws.ngram.ngram_probability", _drop_hash_term),
        ),
    ),
    _claim(
        "B.ng2",
        "issue 19: N = 1 is Token-ID",
        """At N = 1, q = s/l, Token-ID's aligned-position rate (tokenid_probability, exactly,
        as floats), and the hashed rate is s/l + (1 - s/l)/m: two distinct tokens share a
        hashed bucket with probability 1/m, where Token-ID with n >= V (one bucket per token)
        is injective. As m -> infinity both are f. Proven; checked on a grid, with the
        Token-ID kernel (exactly s/l) and the NGram kernel at N = 1 (Monte Carlo).""",
        check_ng2,
        Mutation(
            "ngram-falling-factorial-shifted",
            "q starts the falling factorials one step late, (s-1)...(s-N) / ((l-1)...(l-N)).",
            replacing("lshsim.laws.ngram.ngram_shared_probability", _shifted),
        ),
    ),
    _claim(
        "B.ng3",
        "issue 19: the f^N limit",
        """With f = s/l: 0 <= q (1 - f) N(N-1) / (2s) <= f^N - q <= (1 - f) N(N-1) /
        (2(l - N + 1)) (the lower bound for s >= N; q = 0 < f^N otherwise), so q -> f^N as
        l -> infinity at fixed f and N (with the requested f, |round(f l)/l - f| <= 1/(2l) adds
        N/(2l)), and (f^N - q) l -> (1 - f) f^(N-1) N(N-1)/2. Proven; checked for every s and
        N <= 6 at l up to 1000, and the rate to 1e-4 at l = 10^6.""",
        check_ng3,
        Mutation(
            "ngram-with-replacement",
            "q is computed as f^N, as if the shared positions were drawn with replacement.",
            replacing("lshsim.laws.ngram.ngram_shared_probability", _with_replacement),
        ),
    ),
    _claim(
        "B.ng4",
        "issue 19: the heads' law (Engram's multi-head hashing)",
        """With H independent heads of moduli m_1..m_H (H = 1: m; H >= 2: the H smallest
        primes >= m), the number K of heads in which an aligned window collides has law
        P(K = k) = q 1{k = H} + (1 - q) PB(k; 1/m_1, ..., 1/m_H) (Poisson-binomial: a shared
        n-gram collides in every head, a distinct one in each head independently with
        probability 1/m_h), so a distinct pair collides in every head with probability
        prod_h 1/m_h and P(K = H) = q + (1 - q) prod_h 1/m_h. Proven; checked against a sum over
        the 2^H head sets and against the kernel's histogram (Monte Carlo).""",
        check_ng4,
        Mutation(
            "ngram-heads-correlated",
            "the heads' law treats the heads as one hash (a distinct pair agrees in all heads "
            "or in none), as heads sharing one mix and one modulus would.",
            replacing("lshsim.laws.ngram.poisson_binomial", _correlated_heads),
        ),
    ),
)

#: the registry reads a part's ``CLAIMS`` (:data:`lshsim.theorems.claims.PARTS`)
CLAIMS = CLAIMS_NGRAM
