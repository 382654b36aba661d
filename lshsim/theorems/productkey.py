"""Claims on product keys: their exact law and exponent, and the cost of halving the router.

Each a :class:`~lshsim.theorems.claim_types.Claim` whose check calls the library and a
:class:`~lshsim.theorems.claim_types.Mutation` under which that check must fail; statements and
proofs in ``proofs/lookups_beyond.md``, property tests in ``tests/theorems/test_claims_beyond.py``
(which also holds the top-k claims' tests, :mod:`lshsim.theorems.topk`).

* **B.pk1** (proven): product keys with ``n = s^2`` slots collide with probability
  ``P_vor(s, a1) P_vor(s, a2)``, so ``rho_pk(n, a) = rho_vor(sqrt n, a)``; the kernel's
  Monte-Carlo rate matches at fixed seeds, at a cosine and on the sentence model.
* **B.pk2** (exact theory, numerical on a table): at equal table size ``n = 2^10 ... 2^24``
  product keys collide less than a full softmax router, by a factor that grows with ``n``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from lshsim import theory
from lshsim.estimate import estimate_collision, wilson_interval
from lshsim.theorems.claim_types import (
    EXACT_RESIDUALS,
    MONTE_CARLO,
    Claim,
    Mutation,
    replacing,
)

__all__ = ["CLAIMS_PRODUCTKEY", "PK2_COSINES", "PK2_LOG2"]

#: two-sided 99.9% normal quantile: the Monte-Carlo checks' intervals
Z999 = 3.2905267314919255
#: tolerance of the exact identities (the quadratures are accurate to 1e-9 relative)
EXACT_TOL = 1e-8

# -- B.pk1: the product law and the exponent identity ------------------------------------------

PK1_BUCKETS = (4, 2**10, 2**16, 2**24)
PK1_COSINES = (-0.5, 0.1, 0.5, 0.9)
#: Monte-Carlo points (n, cosine) with d = 16, and the sentence-model point (n, f, d, l)
PK1_MC = ((64, 0.6), (16, 0.3))
PK1_SENTENCE = (64, 0.5, 16, 8)
#: half-cosine pairs of the sentence-model average (its standard error widens the interval)
PK1_COSINE_DRAWS = 2**13


def _mc_point(est, exact: float, extra_se: float = 0.0) -> dict:
    lo, hi = wilson_interval(est.successes, est.samples, Z999)
    pad = Z999 * extra_se
    return {
        "estimate": est.estimate,
        "interval 99.9%": [lo - pad, hi + pad],
        "exact": exact,
        "inside": bool(lo - pad <= exact <= hi + pad),
    }


def _pk1(samples: int) -> tuple[bool, dict]:
    worst = 0.0
    for n in PK1_BUCKETS:
        s = math.isqrt(n)
        for a in PK1_COSINES:
            r_pk, r_vor = theory.productkey_rho(n, a), theory.rho("voronoi", s, a)
            worst = max(worst, abs(r_pk / r_vor - 1.0))
    points = []
    for i, (n, a) in enumerate(PK1_MC):
        est = estimate_collision("productkey", n, cosine=a, dim=16, samples=samples, seed=i + 1)
        points.append({"n": n, "cosine": a, **_mc_point(est, theory.productkey_probability(n, a))})
    n, f, d, length = PK1_SENTENCE
    exact = theory.collision_probability(
        "productkey", n, overlap=f, dim=d, length=length, cosines=PK1_COSINE_DRAWS
    )
    est = estimate_collision("productkey", n, overlap=f, dim=d, length=length, samples=samples)
    points.append({"n": n, "overlap": f, **_mc_point(est, exact.probability, exact.std_error)})
    ok = worst <= EXACT_TOL and all(p["inside"] for p in points)
    return ok, {
        "max |rho_pk(n, a) / rho_vor(sqrt n, a) - 1|": worst,
        "tolerance": EXACT_TOL,
        "n": list(PK1_BUCKETS),
        "cosines": list(PK1_COSINES),
        "Monte Carlo (kernel, d = 16)": points,
        "samples": samples,
    }


def check_pk1() -> tuple[bool, dict]:
    """B.pk1 with 10000 pairs per Monte-Carlo point."""
    return _pk1(10_000)


def quick_pk1() -> tuple[bool, dict]:
    """B.pk1 with 1500 pairs per Monte-Carlo point."""
    return _pk1(1_500)


def _one_half(original: Callable) -> Callable:
    def productkey_log_probability(n, a1, a2=None, *, rtol=1e-9):
        return 0.5 * original(n, a1, a1, rtol=rtol)

    return productkey_log_probability


# -- B.pk2: product keys against a full router at equal table size ------------------------------

PK2_LOG2 = tuple(range(10, 25, 2))
PK2_COSINES = (0.3, 0.5, 0.7, 0.9)
#: the stated range of P_vor(n, a) / P_pk(n, a) on the table
PK2_RANGE = (1.2, 2.0)


def _pk2(log2s, cosines) -> tuple[bool, dict]:
    ratios = np.array(
        [
            [
                math.exp(
                    theory.log_probability("voronoi", 2**e, a)
                    - theory.productkey_log_probability(2**e, a)
                )
                for e in log2s
            ]
            for a in cosines
        ]
    )
    lo, hi = PK2_RANGE
    ok = bool(np.all(ratios > lo) and np.all(ratios < hi) and np.all(np.diff(ratios, axis=1) > 0))
    gap = np.log(ratios) / (np.array(log2s) * math.log(2.0))
    return ok, {
        "P_vor(n, a) / P_pk(n, a) (rows: cosine, columns: log2 n)": np.round(ratios, 4).tolist(),
        "rho_pk - rho_vor at n (same)": np.round(gap, 5).tolist(),
        "stated range": list(PK2_RANGE),
        "log2 n": list(log2s),
        "cosines": list(cosines),
    }


def check_pk2() -> tuple[bool, dict]:
    """B.pk2 on the full table."""
    return _pk2(PK2_LOG2, PK2_COSINES)


def quick_pk2() -> tuple[bool, dict]:
    """B.pk2 at n = 2^10, 2^16, 2^24 and a = 0.5, 0.9."""
    return _pk2((10, 16, 24), (0.5, 0.9))


def _full_router(original: Callable) -> Callable:
    def productkey_log_probability(n, a1, a2=None, *, rtol=1e-9):
        a2 = a1 if a2 is None else a2
        return 0.5 * (
            theory.log_probability("voronoi", n, a1) + theory.log_probability("voronoi", n, a2)
        )

    return productkey_log_probability


#: What each claim's evidence promises (``lshsim compare``): pk1 holds Monte-Carlo rates next
#: to exact values, pk2 is exact theory.
EVIDENCE_KINDS: dict[str, dict] = {
    "B.pk1": {
        "": EXACT_RESIDUALS,
        "Monte Carlo (kernel, d = 16)/*/estimate": MONTE_CARLO,
        "Monte Carlo (kernel, d = 16)/*/interval 99.9%": MONTE_CARLO,
        "Monte Carlo (kernel, d = 16)/*/inside": MONTE_CARLO,
    },
    "B.pk2": {"": EXACT_RESIDUALS},
}


def _claim(cid, part, statement, check, quick, mutation) -> Claim:
    test = f"tests/theorems/test_claims_beyond.py::test_{cid[2:]}"
    statement = " ".join(statement.split())
    return Claim(cid, part, statement, test, check, mutation, quick, kinds=EVIDENCE_KINDS[cid])


#: The claims of this module, in id order.
CLAIMS_PRODUCTKEY: tuple[Claim, ...] = (
    _claim(
        "B.pk1",
        "product keys: the exact law and its exponent",
        """Product keys with n = s^2 slots (s >= 2) and i.i.d. Gaussian sub-keys, at inputs
        whose halves have cosines a1, a2, collide with probability P_vor(s, a1) P_vor(s, a2)
        exactly, at every d; so with a1 = a2 = a, ln P_pk(n, a) = 2 ln P_vor(sqrt n, a) and
        rho_pk(n, a) = -ln P_pk / ln n = rho_vor(sqrt n, a). Proven; the check evaluates the
        identity for n in {4, 2^10, 2^16, 2^24}, a in {-0.5, 0.1, 0.5, 0.9} to 1e-8, and the
        kernel's Monte-Carlo rate (d = 16, fixed seeds) at (n, a) = (64, 0.6), (16, 0.3) and on
        the sentence model (n = 64, f = 0.5, l = 8) inside its 99.9% interval.""",
        check_pk1,
        quick_pk1,
        Mutation(
            "productkey-one-half",
            "the product-key law keeps only one half's factor, sqrt of P_vor(s, a)^2.",
            replacing("lshsim.theory.productkey.productkey_log_probability", _one_half),
        ),
    ),
    _claim(
        "B.pk2",
        "product keys against a softmax router of the same table size",
        f"""At equal table size n = 2^10, 2^12, ..., 2^24 and cosine a in {{0.3, 0.5, 0.7,
        0.9}}, product keys collide less than a full softmax top-1 router (Voronoi) over n
        buckets: P_vor(n, a) / P_pk(n, a) = n^(rho_vor(sqrt n, a) - rho_vor(n, a)) lies in
        ({PK2_RANGE[0]}, {PK2_RANGE[1]}) at every point and grows with n at each a (the largest
        factor near a = 0.5). Exact theory, numerical on the table, not proven.""",
        check_pk2,
        quick_pk2,
        Mutation(
            "productkey-as-full-router",
            "the product-key law is replaced by a full Voronoi router over all n slots.",
            replacing("lshsim.theory.productkey.productkey_log_probability", _full_router),
        ),
    ),
)

#: the registry reads a part's ``CLAIMS`` (:data:`lshsim.theorems.claims.PARTS`)
CLAIMS = CLAIMS_PRODUCTKEY
