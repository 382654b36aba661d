"""Claims on top-k routing: the Voronoi top-k overlap at ``k = 1``, its closed values and bounds.

Each a :class:`~lshsim.theorems.claim_types.Claim` whose check calls the library and a
:class:`~lshsim.theorems.claim_types.Mutation` under which that check must fail; statements and
proofs in ``proofs/lookups_beyond.md``, property tests in ``tests/theorems/test_claims_beyond.py``
(beside the product-key claims' tests, :mod:`lshsim.theorems.productkey`).

* **B.tk1** (proven): the top-k overlap at ``k = 1`` is ``P_vor``: the multinomial quadrature
  agrees with the Voronoi quadrature, and the kernel's top-k overlap agrees with the exact
  value at ``k = 3``.
* **B.tk2** (proven closed values; numerical bounds): ``O_k(n, 0) = k/n`` exactly (the
  quadrature reproduces it), and on a grid ``k/n < O_k < 1``, increasing in ``k`` and ``a``.
* **B.tk3** (the reduced samplers are exact in distribution; checked by Monte Carlo): the
  O(k) Voronoi and product-key top-k samplers agree with the quadrature and with the kernel.
* **B.tk4** (numerical law): PKM's top-k overlap of product keys, ``k <= 32``, as ``lshsim
  theory`` computes it, agrees with the kernel within its stated bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from lshsim import theory
from lshsim.estimate_topk import estimate_topk_overlap
from lshsim.hashing import ProductKey, Voronoi
from lshsim.laws.topk import topk_quadrature
from lshsim.laws.topk_reduced import PK_TOPK_TRIALS, productkey_topk_law
from lshsim.theorems.claim_types import (
    EXACT,
    EXACT_RESIDUALS,
    MONTE_CARLO,
    SEEDED_THEORY,
    Claim,
    Mutation,
    replacing,
)

__all__ = ["CLAIMS_TOPK", "TK2_GRID"]

#: two-sided 99.9% normal quantile: the Monte-Carlo check's interval
Z999 = 3.2905267314919255
#: tolerance of the exact identities (the quadratures are accurate to 1e-9 relative)
EXACT_TOL = 1e-8
#: the seed of the reduced samplers' and kernels' draws in B.tk3 and B.tk4
TK_SEED = 7

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


# -- B.tk3: the reduced top-k samplers are exact ----------------------------------------------

#: Voronoi points (n, k, cosine) of the reduced sampler against the quadrature
TK3_VORONOI = ((64, 3, 0.6), (2**20, 4, 0.9), (4096, 8, 0.7))
#: the product-key point (n, k, cosine), reduced against the kernel (d = 16)
TK3_PRODUCTKEY = (64, 3, 0.6)


def _tk3(points, trials: int, kernel_pairs: int) -> tuple[bool, dict]:
    ok, ev = True, {}
    rng = np.random.default_rng(TK_SEED)
    for n, k, a in points:
        c = Voronoi.sample_topk_reduced(n, k, np.full(trials, a), rng) / k
        exact = theory.topk_overlap(Voronoi.name, n, k, a)
        z = (float(c.mean()) - exact) / (float(c.std(ddof=1)) / math.sqrt(trials))
        ok &= abs(z) <= Z999
        ev[f"voronoi n={n},k={k},a={a}"] = {"estimate": float(c.mean()), "exact": exact, "z": z}
    n, k, a = TK3_PRODUCTKEY
    c = ProductKey.sample_topk_reduced(n, k, np.full(trials, a), rng) / k
    full = estimate_topk_overlap(ProductKey.name, n, k, cosine=a, dim=16, samples=kernel_pairs,
                                 seed=TK_SEED)  # fmt: skip
    se = math.hypot(float(c.std(ddof=1)) / math.sqrt(trials), full.std_error)
    z = (float(c.mean()) - full.overlap) / se
    ok &= abs(z) <= Z999
    ev[f"productkey n={n},k={k},a={a}"] = {
        "reduced": float(c.mean()),
        "kernel (d = 16)": full.overlap,
        "z": z,
    }
    return ok, {
        **ev,
        "reduced draws per point": trials,
        "kernel pairs": kernel_pairs,
        "z bound": Z999,
    }


def check_tk3() -> tuple[bool, dict]:
    """B.tk3: 100,000 reduced draws per point, 20,000 kernel pairs."""
    return _tk3(TK3_VORONOI, 100_000, 20_000)


def quick_tk3() -> tuple[bool, dict]:
    """B.tk3 at the first two Voronoi points, 10,000 draws, 2,000 kernel pairs."""
    return _tk3(TK3_VORONOI[:2], 10_000, 2_000)


def _orthant_dropped(original: Callable) -> Callable:
    def upper_orthant(h, k, rho):
        return 0.0 * original(h, k, rho)

    return upper_orthant


# -- B.tk4: PKM's top-k law for product keys ----------------------------------------------------

#: points (n, k, cosine) of the law against the kernel
TK4_POINTS = ((256, 4, 0.8), (1024, 8, 0.5), (4096, 32, 0.9))


def _tk4(points, trials: int, kernel_pairs: int) -> tuple[bool, dict]:
    ok, ev = True, {}
    one, bound1 = ProductKey.topk_law(256, 1, 0.6, 0.8)
    exact1 = theory.productkey_probability(256, 0.6, 0.8)
    ok &= bound1 == 0.0 and abs(one / exact1 - 1.0) <= EXACT_TOL
    for n, k, a in points:
        law, bound = productkey_topk_law(n, k, a, a, trials=trials)
        full = estimate_topk_overlap(ProductKey.name, n, k, cosine=a, dim=16,
                                     samples=kernel_pairs, seed=TK_SEED)  # fmt: skip
        inside = abs(law - full.overlap) <= bound + Z999 * full.std_error
        ok &= inside
        ev[f"n={n},k={k},a={a}"] = {
            "law": law,
            "bound": bound,
            "kernel (d = 16)": full.overlap,
            "kernel se": full.std_error,
            "inside": bool(inside),
        }
    return ok, {
        **ev,
        "law draws": trials,
        "kernel pairs": kernel_pairs,
        "k = 1 law / exact": one / exact1,
    }


def check_tk4() -> tuple[bool, dict]:
    """B.tk4: the law as ``lshsim theory`` computes it (2^15 draws), 20,000 kernel pairs."""
    return _tk4(TK4_POINTS, PK_TOPK_TRIALS, 20_000)


def quick_tk4() -> tuple[bool, dict]:
    """B.tk4 at the first point, 4,096 law draws, 2,000 kernel pairs."""
    return _tk4(TK4_POINTS[:1], 4096, 2_000)


def _rest_dropped(original: Callable) -> Callable:
    def _rest_top_scores(m, k, c, log_below, a, rng):
        return np.full((c.shape[0], k), -np.inf)

    return _rest_top_scores


_TK1_MC = "Monte Carlo top-3 overlap (voronoi n=64, a=0.6, d=16)"
#: What each claim's evidence promises (``lshsim compare``): tk1's Monte-Carlo overlap sits next
#: to exact values; the rest is exact theory.
EVIDENCE_KINDS: dict[str, dict] = {
    "B.tk1": {
        "": EXACT_RESIDUALS,
        f"{_TK1_MC}/estimate": MONTE_CARLO,
        f"{_TK1_MC}/interval 99.9%": MONTE_CARLO,
        f"{_TK1_MC}/inside": MONTE_CARLO,
    },
    "B.tk2": {"": EXACT_RESIDUALS},
    "B.tk3": {"": SEEDED_THEORY, "*/exact": EXACT, "z bound": EXACT},
    "B.tk4": {"": MONTE_CARLO, "k = 1 law / exact": EXACT_RESIDUALS},
}


def _claim(cid, part, statement, check, quick, mutation) -> Claim:
    test = f"tests/theorems/test_claims_beyond.py::test_{cid[2:]}"
    statement = " ".join(statement.split())
    return Claim(cid, part, statement, test, check, mutation, quick, kinds=EVIDENCE_KINDS[cid])


#: The claims of this module, in id order.
CLAIMS_TOPK: tuple[Claim, ...] = (
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
            replacing("lshsim.laws.topk.topk_cells_log", _one_too_many),
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
            replacing("lshsim.laws.topk._log_cells", _p11_halved),
        ),
    ),
    _claim(
        "B.tk3",
        "a top-k overlap at n = 2^20 costs O(k) per trial, exactly",
        """The reduced samplers draw |T_k(x) ∩ T_k(y)| exactly in distribution from O(k) order
        statistics (x's top-k by inversion, their y-scores, nested binomial counts of the
        other n - k pairs above each through bivariate-normal orthants; product keys: the
        others' top-k y-scores by inversion, then PKM's k^2 sums). Checked: Voronoi's mean of
        100,000 reduced draws within 3.29 standard errors of the quadrature at (n, k, a) in
        {(64, 3, 0.6), (2^20, 4, 0.9), (4096, 8, 0.7)}; product keys' reduced mean against the
        kernel's estimate (d = 16, 20,000 pairs) at (64, 3, 0.6), within 3.29 combined
        standard errors.""",
        check_tk3,
        quick_tk3,
        Mutation(
            "topk-reduced-orthant-dropped",
            "the other pairs' y-scores forget that they lie below x's k-th score (the "
            "bivariate orthant is taken as 0).",
            replacing("lshsim.laws.topk_reduced.upper_orthant", _orthant_dropped),
        ),
    ),
    _claim(
        "B.tk4",
        "product keys' top-k overlap under PKM's rule, k <= 32",
        """PKM's top-k overlap of product keys (top-k of each half, then top-k of the k^2 sums)
        at half-cosines a1 = a2 = a equals the numerical law of lshsim theory --family
        productkey --topk k (2^15 exact reduced draws from a fixed seed) within its stated
        99.9% bound plus 3.29 standard errors of the kernel's estimate (d = 16, 20,000 pairs),
        at (n, k, a) in {(256, 4, 0.8), (1024, 8, 0.5), (4096, 32, 0.9)}; at k = 1 the law is
        the exact P_vor(s, a1) P_vor(s, a2) to 1e-8.""",
        check_tk4,
        quick_tk4,
        Mutation(
            "pkm-rest-dropped",
            "y's per-half candidates leave out the pairs outside x's top-k (only x's members "
            "compete in y's sums).",
            replacing("lshsim.laws.topk_reduced._rest_top_scores", _rest_dropped),
        ),
    ),
)

#: the registry reads a part's ``CLAIMS`` (:data:`lshsim.theorems.claims.PARTS`)
CLAIMS = CLAIMS_TOPK
