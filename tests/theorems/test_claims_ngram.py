"""Property tests of the hashed n-gram claims B.ng1-B.ng4, and their checks under their mutations.

Each claim's quick check must hold on the library and fail under its named mutation; the
property tests re-derive the statements independently over the strategy
:func:`lshsim.theorems.strategies.ngram_models`: B.ng1 by enumerating the placements of the
shared positions, B.ng2 against Token-ID, B.ng3 by the bound written out, B.ng4 by a sum over
the sets of colliding heads.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings

from lshsim import theory
from lshsim.hashing import TokenID
from lshsim.hashing.ngram import ngram_moduli
from lshsim.sentences import sentence_pairs
from lshsim.theorems import strategies as lst
from lshsim.theorems.ngram import CLAIMS_NGRAM

CLAIMS = {c.id: c for c in CLAIMS_NGRAM}


def test_claims_are_well_formed():
    """Stable ids in order, one-line statements, a test node in this file, a named mutation."""
    assert list(CLAIMS) == ["B.ng1", "B.ng2", "B.ng3", "B.ng4"]
    here = open(__file__).read()
    for claim in CLAIMS_NGRAM:
        assert "\n" not in claim.statement and claim.mutation is not None
        assert claim.test == f"tests/theorems/test_claims_ngram.py::test_{claim.id[2:]}"
        assert f"def test_{claim.id[2:]}(" in here


@pytest.mark.parametrize("cid", list(CLAIMS))
def test_quick_check_holds_and_fails_under_its_mutation(cid):
    """The quick check holds with JSON evidence; under the mutation it fails; leaving the
    mutation restores the library."""
    claim = CLAIMS[cid]
    before = (theory.ngram_probability, theory.ngram_shared_probability)
    holds, evidence = claim.quick_check()
    assert holds is True, evidence
    json.dumps(evidence)
    with claim.mutation.apply():
        mutated, _ = claim.quick_check()
    assert mutated is False
    assert (theory.ngram_probability, theory.ngram_shared_probability) == before


def _enumerated(ngram: int, shared: int, length: int) -> Fraction:
    hit = total = 0
    for placed in itertools.combinations(range(length), shared):
        for t in range(ngram - 1, length):
            total += 1
            hit += all(i in placed for i in range(t - ngram + 1, t + 1))
    return Fraction(hit, total)


@settings(max_examples=40)
@given(lst.ngram_models(max_length=9, max_heads=1))
def test_ng1(model):
    """B.ng1: q is the fraction of (placement, window) pairs with the window all shared,
    enumerated over every placement; the rate is q + (1 - q)/m."""
    n, s, length, m = model["ngram"], model["shared"], model["length"], model["m"]
    q = theory.ngram_shared_probability(n, s, length)
    assert q == float(_enumerated(n, s, length))
    p = theory.ngram_probability(n, m, model["overlap"], length)
    assert p == pytest.approx(q + (1 - q) / m, rel=1e-15, abs=1e-300)


@settings(max_examples=40)
@given(lst.ngram_models(max_length=10**6, max_heads=1, max_log2=31))
def test_ng2(model):
    """B.ng2: at N = 1, q is Token-ID's s/l exactly and the hashed rate adds (1 - s/l)/m;
    the Token-ID kernel with one bucket per token hits exactly s of l aligned positions."""
    s, length, m = model["shared"], model["length"], model["m"]
    q = theory.ngram_shared_probability(1, s, length)
    assert q == theory.tokenid_probability(s, length) == s / length
    p = theory.ngram_probability(1, m, model["overlap"], length)
    assert abs(p - q - (1 - q) / m) <= 1e-15
    small = min(length, 12)
    small_s = min(s, small)
    pairs = sentence_pairs(
        3, small_s / small, length=small, vocab=64, rng=np.random.default_rng(s), embed=False
    )
    tok = TokenID(64, 1)
    hits = (tok.hash(pairs.tokens1) == tok.hash(pairs.tokens2)).sum(axis=1)
    assert (hits == small_s).all()


@settings(max_examples=60)
@given(lst.ngram_models(max_length=10**5, max_order=12))
def test_ng3(model):
    """B.ng3: q (1-f) N(N-1)/(2s) <= f^N - q <= (1-f) N(N-1)/(2(l-N+1)), f = s/l (lower bound
    for s >= N), written out here; the library's ngram_limit_bounds agree."""
    n, s, length = model["ngram"], model["shared"], model["length"]
    q = theory.ngram_shared_probability(n, s, length)
    f = s / length
    gap = f**n - q
    upper = (1 - f) * n * (n - 1) / (2 * (length - n + 1))
    lower = q * (1 - f) * n * (n - 1) / (2 * s) if s >= n else 0.0
    slack = 1e-15 * max(1.0, f**n)
    assert lower - slack <= gap <= upper + slack
    lo, hi = theory.ngram_limit_bounds(n, s, length)
    assert lo == pytest.approx(lower, rel=1e-12, abs=1e-300)
    assert hi == pytest.approx(upper, rel=1e-12, abs=1e-300)


@settings(max_examples=40)
@given(lst.ngram_models(max_length=40, max_heads=6, max_log2=12))
def test_ng4(model):
    """B.ng4: the heads' law is q 1{k=H} + (1-q) x the sum over the head sets of size k of
    prod 1/m_h prod (1 - 1/m_h); it sums to 1 and its last entry is the all-heads rate."""
    n, m, f, length, heads = (model[k] for k in ("ngram", "m", "overlap", "length", "heads"))
    law = theory.ngram_heads_law(n, m, f, length, heads=heads)
    q = theory.ngram_shared_probability(n, model["shared"], length)
    moduli = ngram_moduli(m, heads)
    brute = [0.0] * (heads + 1)
    for hits in itertools.product((0, 1), repeat=heads):
        brute[sum(hits)] += (1 - q) * math.prod(
            1 / mh if h else 1 - 1 / mh for h, mh in zip(hits, moduli, strict=True)
        )
    brute[-1] += q
    assert law == pytest.approx(brute, rel=1e-12, abs=1e-15)
    assert sum(law) == pytest.approx(1.0, abs=1e-14)
    assert law[-1] == pytest.approx(
        theory.ngram_probability(n, m, f, length, heads=heads), abs=1e-15
    )
