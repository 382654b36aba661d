"""Claims on the lookups beyond the paper: product keys and top-k routing.

Each a :class:`~lshsim.theorems.claim_types.Claim` whose check calls the library and a
:class:`~lshsim.theorems.claim_types.Mutation` under which that check must fail; statements and
proofs in ``proofs/lookups_beyond.md``, property tests in ``tests/theorems/test_claims_beyond.py``.

* **B.pk1** (proven): product keys with ``n = s^2`` slots collide with probability
  ``P_vor(s, a1) P_vor(s, a2)``, so ``rho_pk(n, a) = rho_vor(sqrt n, a)``; the kernel's
  Monte-Carlo rate matches at fixed seeds, at a cosine and on the sentence model.
* **B.pk2** (exact theory, numerical on a table): at equal table size ``n = 2^10 ... 2^24``
  product keys collide less than a full softmax router, by a factor that grows with ``n``.
* **B.tk1** (proven): the top-k overlap at ``k = 1`` is ``P_vor``: the multinomial quadrature
  agrees with the Voronoi quadrature, and the kernel's top-k overlap agrees with the exact
  value at ``k = 3``.
* **B.tk2** (proven closed values; numerical bounds): ``O_k(n, 0) = k/n`` exactly (the
  quadrature reproduces it), and on a grid ``k/n < O_k < 1``, increasing in ``k`` and ``a``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from lshsim import theory
from lshsim.estimate import estimate_collision, wilson_interval
from lshsim.estimate_topk import estimate_topk_overlap
from lshsim.theorems.claim_types import Claim, Mutation, replacing
from lshsim.theory.topk import topk_quadrature

__all__ = ["CLAIMS_BEYOND", "PK2_COSINES", "PK2_LOG2", "TK2_GRID"]

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


# -- B.tk1: top-k overlap at k = 1 ---------------------------------------------------------------

TK1_BUCKETS = (3, 64, 2**12, 2**20)
TK1_COSINES = (-0.5, 0.3, 0.8, 0.99)
#: the Monte-Carlo point (n, k, cosine), d = 16
TK1_MC = (64, 3, 0.6)


def _tk1(buckets, cosines, samples: int) -> tuple[bool, dict]:
    worst = 0.0
    for n in buckets:
        for a in cosines:
            p = theory.voronoi_probability(n, a)
            worst = max(worst, abs(topk_quadrature(n, 1, a) / p - 1.0))
    n, k, a = TK1_MC
    exact = theory.voronoi_topk_overlap(n, k, a)
    est = estimate_topk_overlap("voronoi", n, k, cosine=a, dim=16, samples=samples, seed=3)
    half = Z999 * est.std_error
    inside = est.overlap - half <= exact <= est.overlap + half
    return worst <= EXACT_TOL and inside, {
        "max |O_1(n, a) / P_vor(n, a) - 1| (multinomial quadrature)": worst,
        "tolerance": EXACT_TOL,
        "n": list(buckets),
        "cosines": list(cosines),
        "Monte Carlo top-3 overlap (voronoi n=64, a=0.6, d=16)": {
            "estimate": est.overlap,
            "interval 99.9%": [est.overlap - half, est.overlap + half],
            "exact": exact,
            "inside": bool(inside),
            "samples": samples,
        },
    }


def check_tk1() -> tuple[bool, dict]:
    """B.tk1 on the full grid, 8000 Monte-Carlo pairs."""
    return _tk1(TK1_BUCKETS, TK1_COSINES, 8000)


def quick_tk1() -> tuple[bool, dict]:
    """B.tk1 at n = 64, 2^20 and a = 0.3, 0.99, 2000 Monte-Carlo pairs."""
    return _tk1((64, 2**20), (0.3, 0.99), 2000)


def _one_too_many(original: Callable) -> Callable:
    def topk_cells_log(n, k, log_cells):
        return original(n, k + 1, log_cells)

    return topk_cells_log


# -- B.tk2: closed values and bounds of the top-k overlap ---------------------------------------

#: (n, k) where the quadrature at a = 0 must give k / n
TK2_ZERO = ((16, 2), (256, 4), (4096, 3))
#: the grid of the bounds: n, cosines, k
TK2_GRID = ((16, 256, 4096), (0.2, 0.5, 0.8), (1, 2, 4))


def _tk2(zero, grid) -> tuple[bool, dict]:
    worst = max(abs(topk_quadrature(n, k, 0.0) * n / k - 1.0) for n, k in zero)
    ns, cosines, ks = grid
    table = np.array([[[topk_quadrature(n, k, a) for k in ks] for a in cosines] for n in ns])
    floor = np.array(ks)[None, None, :] / np.array(ns)[:, None, None]
    bounded = bool(np.all(table > floor) and np.all(table < 1.0))
    increasing = bool(np.all(np.diff(table, axis=1) > 0) and np.all(np.diff(table, axis=2) > 0))
    return worst <= EXACT_TOL and bounded and increasing, {
        "max |O_k(n, 0) n / k - 1| (quadrature)": worst,
        "(n, k) at a = 0": [list(p) for p in zero],
        "O_k(n, a) [n][a][k]": np.round(table, 6).tolist(),
        "k/n < O_k < 1": bounded,
        "increasing in a and in k": increasing,
        "n, cosines, k": [list(g) for g in grid],
    }


def check_tk2() -> tuple[bool, dict]:
    """B.tk2 on the full grid."""
    return _tk2(TK2_ZERO, TK2_GRID)


def quick_tk2() -> tuple[bool, dict]:
    """B.tk2 at one a = 0 point and n = 64, a in {0.4, 0.8}, k in {1, 2, 3}."""
    return _tk2(TK2_ZERO[:1], ((64,), (0.4, 0.8), (1, 2, 3)))


def _p11_halved(original: Callable) -> Callable:
    def _log_cells(x, y, alpha, beta):
        l11, l10, l01, l00 = original(x, y, alpha, beta)
        return l11 + math.log(0.5), l10, l01, l00

    return _log_cells


def _claim(cid, part, statement, check, quick, mutation) -> Claim:
    test = f"tests/theorems/test_claims_beyond.py::test_{cid[2:]}"
    return Claim(cid, part, " ".join(statement.split()), test, check, mutation, quick)


#: The claims of this module, in id order.
CLAIMS_BEYOND: tuple[Claim, ...] = (
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
    _claim(
        "B.tk1",
        "top-k overlap at k = 1 is the top-1 collision probability",
        """The Voronoi top-k overlap O_k(n, a) = E|T_k(x) ∩ T_k(y)| / k = n E[S(U, V)] / k with
        S the multinomial sum over the other n - 1 score pairs' cells equals P_vor(n, a) at
        k = 1 (proven: only the empty counts remain, S = Phi2^(n-1)). The check integrates the
        multinomial form at k = 1 for n in {3, 64, 2^12, 2^20}, a in {-0.5, 0.3, 0.8, 0.99}
        against the Voronoi quadrature to 1e-8, and the kernel's top-3 overlap (n = 64, a =
        0.6, d = 16) against the exact value inside its 99.9% interval.""",
        check_tk1,
        quick_tk1,
        Mutation(
            "topk-one-too-many",
            "the multinomial sum admits k (not k - 1) beating pairs per coordinate.",
            replacing("lshsim.theory.topk.topk_cells_log", _one_too_many),
        ),
    ),
    _claim(
        "B.tk2",
        "closed values and bounds of the top-k overlap",
        """O_k(n, 0) = k/n, O_k(n, 1) = 1, O_n(n, a) = 1 and O_k(n, -1) = max(0, 2k - n)/k
        (proven); the multinomial quadrature reproduces O_k(n, 0) = k/n to 1e-8 at (n, k) in
        {(16, 2), (256, 4), (4096, 3)}. Numerically, on n in {16, 256, 4096}, a in {0.2, 0.5,
        0.8}, k in {1, 2, 4}: k/n < O_k(n, a) < 1, and O_k increases with a and with k.""",
        check_tk2,
        quick_tk2,
        Mutation(
            "topk-p11-halved",
            "the probability that another pair beats (u, v) in both coordinates is halved.",
            replacing("lshsim.theory.topk._log_cells", _p11_halved),
        ),
    ),
)

#: the registry reads a part's ``CLAIMS`` (:data:`lshsim.theorems.claims.PARTS`)
CLAIMS = CLAIMS_BEYOND
