"""Product keys and the top-k kernels against slow NumPy references.

* ``ProductKey.hash`` is the slot of the two halves' argmaxes, and the top-1 of all ``s^2``
  sums (the "exactly that pair" fact), at random ``s``, ``d``, seeds and float32/64 batches;
* PKM's top-k (top-k per half, then of the ``k^2`` sums) equals the brute-force top-k of all
  ``s^2`` sums; the Voronoi and cross-polytope top-k equal a stable argsort; column 0 is the
  hash;
* the reduced sampler (two Voronoi draws) agrees with the exact law (CI-derived tolerance).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lshsim import theory
from lshsim.hashing import ProductKey, make_family
from lshsim.hashing.topk import topk_sets
from lshsim.testing import reference as ref
from tests.stats import assert_agrees


@settings(max_examples=25, deadline=None)
@given(
    s=st.integers(2, 40),
    half=st.integers(1, 12),
    seed=st.integers(0, 2**32),
    m=st.integers(0, 60),
    f32=st.booleans(),
)
def test_productkey_hash_matches_reference(s, half, seed, m, f32):
    """hash = i*s + j of the halves' argmaxes = argmax of all s^2 sums; top-1 column equal."""
    h = ProductKey(s * s, 2 * half, seed)
    x = np.random.default_rng(seed).standard_normal((m, 2 * half))
    x = x.astype(np.float32) if f32 else x
    ids = h.hash(x)
    np.testing.assert_array_equal(ids, ref.reference_for("productkey")(h, x))
    np.testing.assert_array_equal(ids, ref.productkey_topk(h, x, 1)[:, 0])
    np.testing.assert_array_equal(topk_sets(h, x, 1)[:, 0], ids)


@settings(max_examples=25, deadline=None)
@given(s=st.integers(2, 24), k=st.integers(1, 24), seed=st.integers(0, 2**32))
def test_pkm_topk_is_the_topk_of_all_sums(s, k, seed):
    """PKM's top-k of the k^2 candidate sums = the top-k of all s^2 sums, in order."""
    k = min(k, s)
    h = ProductKey(s * s, 8, seed)
    x = np.random.default_rng(seed + 1).standard_normal((40, 8))
    np.testing.assert_array_equal(topk_sets(h, x, k), ref.productkey_topk(h, x, k))


@settings(max_examples=20, deadline=None)
@given(
    name=st.sampled_from(["voronoi", "crosspolytope"]),
    m=st.integers(1, 40),
    k=st.integers(1, 12),
    seed=st.integers(0, 2**32),
)
def test_topk_matches_stable_argsort(name, m, k, seed):
    """Voronoi: argsort of x @ G.T; cross-polytope: of concat(y, -y); column 0 = hash."""
    n = 2 * m
    h = make_family(name, n, 6, seed)
    x = np.random.default_rng(seed).standard_normal((30, 6))
    y = x @ h.matrix.T
    scores = y if name == "voronoi" else np.concatenate([y, -y], axis=1)
    got = topk_sets(h, x, min(k, n))
    np.testing.assert_array_equal(got, ref.topk(scores, min(k, n)))
    np.testing.assert_array_equal(got[:, 0], h.hash(x))


def test_topk_ties_keep_the_lower_id():
    """Equal scores: the lower id first (as numpy.argmax at k = 1)."""
    h = make_family("voronoi", 5, 2, 0)
    h.centres = np.array([[1.0, 0], [2, 0], [2, 0], [0, 1], [2, 0]])
    np.testing.assert_array_equal(topk_sets(h, np.array([[1.0, 0.0]]), 4), [[1, 2, 4, 0]])


def test_reduced_sampler_matches_the_exact_law():
    """Two Voronoi draws at the half-cosines (0.4, 0.8), and both at 0.6, n = 256."""
    rng = np.random.default_rng(5)
    trials = 40_000
    both = ProductKey.sample_reduced(256, np.full(trials, 0.6), rng)
    assert_agrees(int(both.sum()), trials, theory.productkey_probability(256, 0.6))
    halves = np.tile([0.4, 0.8], (trials, 1))
    hits = ProductKey.sample_reduced(256, halves, rng)
    assert_agrees(int(hits.sum()), trials, theory.productkey_probability(256, 0.4, 0.8))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ProductKey(63, 4), r"n \(buckets\) must be a perfect square"),
        (lambda: ProductKey(64, 3), r"d \(dimension\) must be even"),
        (lambda: topk_sets(ProductKey(64, 4), np.ones((1, 4)), 9), r"topk \(k\)"),
        (lambda: topk_sets(make_family("voronoi", 8, 4), np.ones((1, 4)), 0), r"topk \(k\)"),
        (lambda: topk_sets(make_family("simhash", 8, 4), np.ones((1, 4)), 1), r"topk applies"),
        (lambda: ProductKey.sample_reduced(64, np.ones((3, 3)), None), r"cosines must have"),
    ],
)
def test_bad_input(call, match):
    """One-line ValueErrors naming the parameter."""
    with pytest.raises(ValueError, match=match):
        call()
