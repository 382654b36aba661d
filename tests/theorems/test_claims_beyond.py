"""Property tests of the claims B.pk1, B.pk2, B.tk1-B.tk4 (lshsim/theorems/productkey.py, topk.py).

The checks themselves, with and without their mutations, run in
``tests/theorems/test_claim_registry.py`` (every claim, quick); here each statement is
re-derived over its range with Hypothesis.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lshsim import theory
from lshsim.hashing import ProductKey, get_family
from lshsim.laws.topk import topk_quadrature
from lshsim.theorems import strategies as lst
from lshsim.theorems.productkey import CLAIMS_PRODUCTKEY, PK2_RANGE
from lshsim.theorems.topk import CLAIMS_TOPK

CLAIMS_BEYOND = CLAIMS_PRODUCTKEY + CLAIMS_TOPK
CLAIMS = {c.id: c for c in CLAIMS_BEYOND}


def test_claims_are_well_formed():
    """Stable ids, one-line statements, a test here and a named mutation each."""
    assert list(CLAIMS) == ["B.pk1", "B.pk2", "B.tk1", "B.tk2", "B.tk3", "B.tk4"]
    for claim in CLAIMS_BEYOND:
        assert "\n" not in claim.statement and claim.mutation is not None
        assert claim.test == f"tests/theorems/test_claims_beyond.py::test_{claim.id[2:]}"
        assert callable(globals()[f"test_{claim.id[2:]}"])


@settings(max_examples=10, deadline=None)
@given(n=lst.square_buckets(max_log2=40), a=lst.cosines(lo=-0.95), seed=st.integers(0, 2**32))
def test_pk1(n, a, seed):
    """B.pk1: rho_pk(n, a) = rho_vor(sqrt n, a); and the kernel's slot is the pair of the
    halves' argmaxes, the top-1 of all s^2 sums (small s: brute force)."""
    s = math.isqrt(n)
    assert theory.productkey_rho(n, a) == pytest.approx(theory.rho("voronoi", s, a), rel=1e-12)
    small = 2 + s % 30
    h = ProductKey(small * small, 6, seed)
    x = np.random.default_rng(seed).standard_normal((20, 6))
    sums = (x[:, :3] @ h.keys1.T)[:, :, None] + (x[:, 3:] @ h.keys2.T)[:, None, :]
    np.testing.assert_array_equal(h.hash(x), sums.reshape(20, -1).argmax(axis=1))


@settings(max_examples=6, deadline=None)
@given(e=st.integers(5, 12), a=st.floats(0.3, 0.9))
def test_pk2(e, a):
    """B.pk2: at n = 4^e = 2^10 ... 2^24 and a in [0.3, 0.9], P_vor(n, a) / P_pk(n, a) lies in
    the stated range, and grows from n to 4n."""
    n = 4**e
    ratio = math.exp(
        theory.log_probability("voronoi", n, a) - theory.productkey_log_probability(n, a)
    )
    assert PK2_RANGE[0] < ratio < PK2_RANGE[1]
    if e < 12:
        bigger = math.exp(
            theory.log_probability("voronoi", 4 * n, a)
            - theory.productkey_log_probability(4 * n, a)
        )
        assert bigger > ratio


@settings(max_examples=6, deadline=None)
@given(n=lst.bucket_counts("voronoi", max_log2=30), a=lst.cosines(lo=-0.9, hi=0.999))
def test_tk1(n, a):
    """B.tk1: the multinomial quadrature at k = 1 is P_vor(n, a)."""
    assert topk_quadrature(n, 1, a) == pytest.approx(theory.voronoi_probability(n, a), rel=1e-8)


@settings(max_examples=4, deadline=None)
@given(
    n=st.integers(4, 300),
    k=st.integers(2, 3),
    a=st.floats(0.1, 0.9),
)
def test_tk2(n, k, a):
    """B.tk2: k/n < O_k(n, a) < 1 and O_k grows with a and with k (exact quadrature)."""
    here = topk_quadrature(n, k, a)
    assert k / n < here < 1.0
    assert topk_quadrature(n, k, min(0.99, a + 0.05)) > here
    assert topk_quadrature(n, k - 1, a) < here


def _brute_scores(rng, count, n, a):
    """``count`` draws of ``n`` score pairs with correlation ``a``: (U, V) float[count, n]."""
    u = rng.standard_normal((count, n))
    return u, a * u + math.sqrt(1 - a * a) * rng.standard_normal((count, n))


def _top(scores, k):
    return np.argsort(-scores, axis=1)[:, :k]


@settings(max_examples=3, deadline=None)
@given(n=st.integers(2, 200), k=st.integers(1, 3), a=st.floats(-0.8, 0.95), seed=st.integers(0, 99))
def test_tk3(n, k, a, seed):
    """B.tk3: the O(k) Voronoi sampler's mean overlap is the brute-force one (all n pairs)."""
    k = min(k, n)
    rng = np.random.default_rng(seed)
    fast = get_family("voronoi").sample_topk_reduced(n, k, np.full(2000, a), rng)
    u, v = _brute_scores(rng, 2000, n, a)
    tu, tv = _top(u, k), _top(v, k)
    slow = np.array([np.intersect1d(x, y).size for x, y in zip(tu, tv, strict=True)])
    se = math.hypot(fast.std(), slow.std()) / math.sqrt(2000) + 1e-12
    assert abs(fast.mean() - slow.mean()) <= 4.5 * se


@settings(max_examples=3, deadline=None)
@given(s=st.integers(2, 10), k=st.integers(1, 4), a=st.floats(-0.5, 0.95), seed=st.integers(0, 99))
def test_tk4(s, k, a, seed):
    """B.tk4: PKM's reduced overlap is the brute-force PKM rule's on explicit half scores."""
    k = min(k, s)
    rng = np.random.default_rng(seed)
    fast = ProductKey.sample_topk_reduced(s * s, k, np.full(3000, a), rng)
    u1, v1 = _brute_scores(rng, 3000, s, a)
    u2, v2 = _brute_scores(rng, 3000, s, a)

    def pkm(h1, h2):
        sums = h1[:, :, None] + h2[:, None, :]
        return _top(sums.reshape(3000, -1), k)

    tx, ty = pkm(u1, u2), pkm(v1, v2)
    slow = np.array([np.intersect1d(x, y).size for x, y in zip(tx, ty, strict=True)])
    se = math.hypot(fast.std(), slow.std()) / math.sqrt(3000) + 1e-12
    assert abs(fast.mean() - slow.mean()) <= 4.5 * se
