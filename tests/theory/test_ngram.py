"""The n-gram theory's other definition (a bucket used anywhere in sentence 2), by Monte Carlo
with the kernel, and the theory functions' bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lshsim import theory
from lshsim.hashing import make_family
from lshsim.sentences import sentence_pairs


@pytest.mark.parametrize(("ngram", "m", "f", "length"), [(1, 7, 0.5, 8), (2, 11, 0.75, 12)])
def test_anywhere_rate_matches_the_kernel(ngram, m, f, length):
    """Fraction of sentence-1 windows whose bucket is used by some window of sentence 2, one
    fresh function per pair (2000 pairs, fixed seed), within 4.5 pair-level standard errors of
    q + (1-q)(1 - (1-1/m)^(l-N+1)); it exceeds the aligned rate by a resolved margin."""
    pairs = 2000
    rng = np.random.default_rng(5)
    sp = sentence_pairs(pairs, f, length=length, vocab=32128, rng=rng, embed=False)
    seeds = rng.integers(0, 2**63, size=pairs)
    hits = 0
    for i in range(pairs):
        h = make_family("ngram", m, 1, int(seeds[i]), ngram=ngram)
        b1, b2 = h.hash(sp.tokens1[i]), h.hash(sp.tokens2[i])
        hits += int(np.isin(b1, b2).sum())
    est = hits / (pairs * (length - ngram + 1))
    exact = theory.ngram_anywhere_probability(ngram, m, f, length)
    se = math.sqrt(exact * (1 - exact) / pairs)
    assert abs(est - exact) <= 4.5 * se
    assert exact - theory.ngram_probability(ngram, m, f, length) > 9 * se


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: theory.ngram_probability(5, 8, 0.5, 4), r"ngram \(N\) must be .*\[1, l = 4\]"),
        (lambda: theory.ngram_probability(0, 8, 0.5, 4), r"ngram \(N\)"),
        (lambda: theory.ngram_probability(2, 1, 0.5, 4), r"n \(buckets\)"),
        (lambda: theory.ngram_probability(2, 2**31 + 1, 0.5, 4), r"n \(buckets\)"),
        (lambda: theory.ngram_probability(2, 8, 1.5, 4), r"overlap \(f\)"),
        (lambda: theory.ngram_heads_law(2, 8, 0.5, 4, heads=0), r"heads \(H\)"),
        (lambda: theory.ngram_shared_probability(2, 5, 4), r"shared \(s\)"),
        (lambda: theory.ngram_limit_bounds(2, -1, 4), r"shared \(s\)"),
    ],
)
def test_bad_input(call, match):
    """Each bad argument raises a one-line ValueError naming it."""
    with pytest.raises(ValueError, match=match):
        call()
