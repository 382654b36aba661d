"""Theorem 1's families as an LSH researcher reads them: the exponent and equal query cost.

Two claims with stable ids, each a :class:`~lshsim.theorems.claim_types.Claim` with a check that
calls the library and a :class:`~lshsim.theorems.claim_types.Mutation` under which that check
must fail; statements and arguments in ``proofs/lsh_exponent.md``, property tests in
``tests/theorems/test_claims_lsh.py``.

* **T1.h1** (numerical, on a stated grid): at equal query cost in inner products
  (:mod:`lshsim.theory.amplification`), Voronoi (softmax top-1) is never the best of SimHash,
  Voronoi and the Gaussian-projection cross-polytope; the cross-polytope is best except at the
  smallest budget for close pairs, where SimHash is.
* **T1.h2** (proven; checked on a grid): ``rho_lsh = rho ln n / ln(1/P(n, far))`` always, so
  ``rho_lsh(far = 0) = rho`` exactly for SimHash, Voronoi and the Gaussian-projection
  cross-polytope (``P(n, 0) = 1/n``), and not for p-stable hyperplanes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from lshsim import theory
from lshsim.hashing import CrossPolytope, PStable, SimHash, Voronoi
from lshsim.laws import spherical as spherical_theory
from lshsim.theorems.claim_types import EXACT_RESIDUALS, Claim, Mutation, replacing
from lshsim.theory import amplification

__all__ = [
    "CLAIMS_LSH",
    "H1_BUCKETS",
    "H1_BUDGETS",
    "H1_COSINES",
    "H1_POINTS",
    "h1_expected_winner",
]

# -- h1: the best family at equal query cost ---------------------------------------------------

#: the grid G of claim T1.h1: near cosines, query budgets (inner products), buckets searched
H1_COSINES = (0.3, 0.5, 0.7, 0.9)
H1_BUDGETS = tuple(2.0**j for j in range(6, 17, 2))
H1_BUCKETS = tuple(2**j for j in range(3, 11))
#: far points in the data set (at cosine H1_FAR to the query) and the longest key
H1_POINTS = 2**20
H1_FAR = 0.0
H1_MAX_CONCAT = 64
#: the families compared, and the n each may use (SimHash: k one-bit hashes = k-bit codes)
H1_FAMILIES = {SimHash.name: (2,), Voronoi.name: H1_BUCKETS, CrossPolytope.name: H1_BUCKETS}
#: SimHash is best where the budget is below H1_SMALL_BUDGET and the cosine at least H1_CLOSE
H1_SMALL_BUDGET = 2.0**8
H1_CLOSE = 0.7
#: lower bounds on the ratios of ln(miss): cross-polytope / Voronoi everywhere, and
#: cross-polytope / SimHash where the cross-polytope is claimed best
H1_VORONOI_RATIO = 1.1
H1_SIMHASH_RATIO = 1.02


def h1_expected_winner(cosine: float, budget: float) -> str:
    """The best family that claim T1.h1 states at grid point ``(cosine, budget)``."""
    close_and_cheap = budget < H1_SMALL_BUDGET and cosine >= H1_CLOSE
    return SimHash.name if close_and_cheap else CrossPolytope.name


def _check_h1() -> tuple[bool, dict]:
    grid = amplification.best_family_grid(
        H1_COSINES,
        H1_BUDGETS,
        buckets=H1_FAMILIES,
        points=H1_POINTS,
        far=H1_FAR,
        max_concat=H1_MAX_CONCAT,
    )
    fams = grid["families"]
    miss = {f: np.array(grid["log_miss"][f]) for f in fams}
    winners = [[fams[w] for w in row] for row in grid["winner"]]
    expected = [[h1_expected_winner(a, c) for c in H1_BUDGETS] for a in H1_COSINES]
    with np.errstate(divide="ignore", invalid="ignore"):
        vs_voronoi = miss["crosspolytope"] / miss["voronoi"]
        vs_simhash = miss["crosspolytope"] / miss["simhash"]
    claimed_cp = np.array([[w == CrossPolytope.name for w in row] for row in expected])
    mismatches = sum(
        w != e
        for rw, re in zip(winners, expected, strict=True)
        for w, e in zip(rw, re, strict=True)
    )
    ok = mismatches == 0
    ok &= bool(np.all(vs_voronoi >= H1_VORONOI_RATIO))
    ok &= bool(np.all(vs_simhash[claimed_cp] >= H1_SIMHASH_RATIO))
    recall = -np.expm1(np.stack(list(miss.values())).min(axis=0))
    return ok, {
        "winner (rows: cosine, columns: log2 budget)": winners,
        "mismatches with the stated winners": mismatches,
        "min ln-miss ratio cross-polytope / voronoi": float(vs_voronoi.min()),
        "min ln-miss ratio cross-polytope / simhash where claimed best": float(
            vs_simhash[claimed_cp].min()
        ),
        "bounds": [H1_VORONOI_RATIO, H1_SIMHASH_RATIO],
        "best recall range": [float(recall.min()), float(recall.max())],
        "cosines": list(H1_COSINES),
        "log2 budgets": [int(math.log2(c)) for c in H1_BUDGETS],
    }


def _cp_cost_doubled(original: Callable) -> Callable:
    def hash_cost(family, n, **kwargs):
        cost = original(family, n, **kwargs)
        return 2.0 * cost if family == CrossPolytope.name else cost

    return hash_cost


# -- h2: rho_lsh and rho ---------------------------------------------------------------------

#: the grid of claim T1.h2 (n per family, near cosines) and its tolerances
H2_BUCKETS = {
    SimHash.name: (2, 2**4, 2**10, 2**20, 2**40),
    Voronoi.name: (2, 3, 7, 2**20),
    CrossPolytope.name: (2, 4, 10, 2**20),
}
H2_PSTABLE_BUCKETS = (2, 2**10, 2**20)
H2_COSINES = (0.1, 0.5, 0.999)
#: the quadrature's relative accuracy is 1e-9: |ln P(n, 0) + ln n| and |rho_lsh/rho - 1| below
H2_TOL = 1e-8


def _check_h2() -> tuple[bool, dict]:
    ok, worst_p0, worst_rho, worst_identity = True, 0.0, 0.0, 0.0
    for family, ns in H2_BUCKETS.items():
        for n in ns:
            p0_err = abs(theory.log_probability(family, n, 0.0) + math.log(n))
            worst_p0 = max(worst_p0, p0_err)
            for a in H2_COSINES:
                r, r_lsh = theory.rho(family, n, a), theory.rho_lsh(family, n, a)
                worst_rho = max(worst_rho, abs(r_lsh / r - 1.0))
    ok &= worst_p0 <= H2_TOL and worst_rho <= H2_TOL
    ratios = []
    for n in H2_PSTABLE_BUCKETS:  # p-stable: rho_lsh / rho = ln n / ln(1/P(n, 0)) != 1
        p0 = theory.log_probability("pstable", n, 0.0)
        for a in H2_COSINES:
            ratio = theory.rho_lsh("pstable", n, a) / theory.rho("pstable", n, a)
            worst_identity = max(worst_identity, abs(ratio * -p0 / math.log(n) - 1.0))
            ratios.append(ratio)
    ok &= worst_identity <= 1e-12 and min(abs(r - 1.0) for r in ratios) > 0.5
    return ok, {
        "max |ln P(n, 0) + ln n| (simhash, voronoi, crosspolytope)": worst_p0,
        "max |rho_lsh / rho - 1| (same)": worst_rho,
        "tolerance": H2_TOL,
        "pstable rho_lsh / rho (min, max)": [min(ratios), max(ratios)],
        "pstable max |rho_lsh/rho * ln(1/P(n,0))/ln n - 1|": worst_identity,
        "n": {f: list(ns) for f, ns in {**H2_BUCKETS, PStable.name: H2_PSTABLE_BUCKETS}.items()},
        "cosines": list(H2_COSINES),
    }


def _cp_probability_scaled(original: Callable) -> Callable:
    def crosspolytope_log_probability(buckets, cosine, rtol=spherical_theory.RTOL):
        return original(buckets, cosine, rtol) + math.log(1.01)

    return crosspolytope_log_probability


#: What each claim's evidence promises (``lshsim compare``): exact theory, residuals included.
EVIDENCE_KINDS: dict[str, dict] = {"T1.h1": {"": EXACT_RESIDUALS}, "T1.h2": {"": EXACT_RESIDUALS}}


def _claim(cid: str, part: str, statement: str, check, mutation: Mutation) -> Claim:
    test = f"tests/theorems/test_claims_lsh.py::test_{cid[3:]}"
    statement = " ".join(statement.split())
    return Claim(cid, part, statement, test, check, mutation, kinds=EVIDENCE_KINDS[cid])


#: The claims of this module, in id order (registered beside Theorem 1's by the registry).
CLAIMS_LSH: tuple[Claim, ...] = (
    _claim(
        "T1.h1",
        "3 (as LSH): which lookup is best at equal query cost",
        f"""Numerical, on the grid G = cosines a in {{{", ".join(map(str, H1_COSINES))}}} x query
        budgets C in {{2^6, 2^8, ..., 2^16}} inner products: with the cost model of
        lshsim.theory.amplification (one hash function costs log2 n inner products for SimHash,
        n for Voronoi, n/2 for the Gaussian-projection cross-polytope; a query costs L k c to
        hash plus one per far candidate, L N p2^k), N = 2^20 far points at cosine 0, n in
        {{2^3, ..., 2^10}} (Voronoi, cross-polytope; SimHash: k-bit codes), k <= 64 and L =
        floor(C / (k c + N p2^k)), the family of highest recall 1 - (1 - p1^k)^L, each at its
        best (n, k, L), is SimHash where C < 2^8 and a >= {H1_CLOSE} and the cross-polytope
        everywhere else; Voronoi (softmax top-1) is never best: the cross-polytope's ln(miss)
        is >= {H1_VORONOI_RATIO} times Voronoi's at every point, and >= {H1_SIMHASH_RATIO}
        times SimHash's where the cross-polytope is best. Exact theory, not proven.""",
        _check_h1,
        Mutation(
            "crosspolytope-cost-x2",
            "the cost model charges the cross-polytope n inner products per hash (its 2m signed "
            "scores) instead of m = n/2",
            replacing("lshsim.theory.amplification.hash_cost", _cp_cost_doubled),
        ),
    ),
    _claim(
        "T1.h2",
        "2 (as LSH): rho = -ln P / ln n against the LSH exponent",
        """For every cosine family, n >= 2 and far < a: rho_lsh = ln(1/p1)/ln(1/p2) = rho ln n /
        ln(1/P(n, far)), p1 = P(n, a), p2 = P(n, far), rho = -ln p1 / ln n; so rho_lsh = rho
        exactly when P(n, far) = 1/n. At far = 0 this holds for SimHash, Voronoi and the
        Gaussian-projection cross-polytope at every n (the two hashes are independent and
        uniform), hence rho_lsh(a; 0) = rho(a) for them; not for p-stable hyperplanes (w = 4,
        radix 2: P(n, 0) = (2 q)^k / n with q = P(cell | distance sqrt 2) = 0.7189, so
        rho_lsh / rho = ln 2 / ln(1/q) = 2.100 at every n and a). Proven; the check evaluates
        the library on a grid of n (2 to 2^40) and a in {0.1, 0.5, 0.999}.""",
        _check_h2,
        Mutation(
            "crosspolytope-probability-x1.01",
            "the cross-polytope's exact collision probability is scaled by 1.01 at every cosine",
            replacing(
                "lshsim.laws.spherical.crosspolytope_log_probability", _cp_probability_scaled
            ),
        ),
    ),
)

#: the registry reads a part's ``CLAIMS`` (:data:`lshsim.theorems.claims.PARTS`)
CLAIMS = CLAIMS_LSH
