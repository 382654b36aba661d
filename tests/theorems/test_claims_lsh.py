"""Property tests of the LSH claims T1.h1 and T1.h2.

That each claim's check holds on the library and fails under its named mutation is tested
with every other claim's in ``tests/theorems/test_claim_registry.py`` (one run of each check);
the property tests here re-derive the statements independently: T1.h1's winners by a plain
brute force over ``(n, k)`` with the cost model written out here, T1.h2's identity at random
``(n, a, far)``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lshsim import theory
from lshsim.theorems import strategies as lst
from lshsim.theorems.lsh_exponent import (
    CLAIMS_LSH,
    H1_BUCKETS,
    H1_BUDGETS,
    H1_COSINES,
    H1_POINTS,
    h1_expected_winner,
)

CLAIMS = {c.id: c for c in CLAIMS_LSH}


def test_claims_are_well_formed():
    """Stable ids in order, one-line statements, a test node in this file, a named mutation."""
    assert list(CLAIMS) == ["T1.h1", "T1.h2"]
    here = open(__file__).read()
    for claim in CLAIMS_LSH:
        assert "\n" not in claim.statement and claim.mutation is not None
        assert claim.test == f"tests/theorems/test_claims_lsh.py::test_{claim.id[3:]}"
        assert f"def test_{claim.id[3:]}(" in here


# -- T1.h1: the best family at equal query cost, by brute force ------------------------------

#: one hash function's cost in inner products, written out independently of the library
COST = {"simhash": lambda n: math.log2(n), "voronoi": float, "crosspolytope": lambda n: n / 2}
BUCKETS = {"simhash": (2,), "voronoi": H1_BUCKETS, "crosspolytope": H1_BUCKETS}
_P: dict = {}


def _p(family: str, n: int, a: float) -> float:
    key = (family, n, a)
    if key not in _P:
        _P[key] = theory.probability(family, n, a)
    return _P[key]


def _best_ln_miss(family: str, a: float, budget: float) -> float:
    """min over n, k <= 64 of L ln(1 - p1^k), L = floor(C / (k c + N p2^k)) >= 1 (else 0)."""
    best = 0.0
    for n in BUCKETS[family]:
        p1, p2, c = _p(family, n, a), _p(family, n, 0.0), COST[family](n)
        for k in range(1, 65):
            tables = math.floor(budget / (k * c + H1_POINTS * p2**k))
            if tables >= 1:
                best = min(best, tables * math.log1p(-(p1**k)))
    return best


@settings(max_examples=24, deadline=None)
@given(i=st.integers(0, len(H1_COSINES) - 1), j=st.integers(0, len(H1_BUDGETS) - 1))
def test_h1(i, j):
    """At each point of the grid the brute-force best family is the stated one, and Voronoi's
    ln(miss) is at most 1/1.1 of the cross-polytope's."""
    a, budget = H1_COSINES[i], H1_BUDGETS[j]
    best = {family: _best_ln_miss(family, a, budget) for family in BUCKETS}
    assert min(best, key=best.get) == h1_expected_winner(a, budget)
    assert best["crosspolytope"] / best["voronoi"] >= 1.1


# -- T1.h2: rho_lsh = rho ln n / ln(1/P(n, far)) ----------------------------------------------


@settings(max_examples=12, deadline=None)
@given(
    config=st.sampled_from(tuple(theory.COSINE_FAMILIES)).flatmap(
        lambda f: st.tuples(st.just(f), lst.bucket_counts(f, max_log2=24))
    ),
    a=st.floats(0.01, 1.0),
    far=st.floats(-0.9, 0.0),
)
def test_h2(config, a, far):
    """The identity at any far cosine, and rho_lsh(a; 0) = rho(a) where P(n, 0) = 1/n."""
    family, n = config
    r, r_lsh = theory.rho(family, n, a), theory.rho_lsh(family, n, a, far=far)
    p_far = theory.log_probability(family, n, far)
    assert r_lsh == pytest.approx(r * math.log(n) / -p_far, rel=1e-12, abs=1e-300)
    if family != "pstable":
        assert theory.rho_lsh(family, n, a) == pytest.approx(r, rel=1e-8, abs=1e-300)
    else:  # (2q)^k / n with q = 0.7189 > 1/2: P(n, 0) > 1/n, rho_lsh = 2.10 rho
        assert theory.rho_lsh(family, n, a) == pytest.approx(2.1000874480672236 * r, rel=1e-9)
