"""The sentence-pair model: token structure, embeddings, the cosine samplers, the moments."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

from lshsim import sentences
from lshsim.sentences import (
    COSINE_MEAN_ERROR,
    COSINE_VAR_ERROR,
    DISTANCE_MEAN_ERROR,
    DISTANCE_VAR_ERROR,
    cosine_moments,
    cosine_pairs,
    distance_moments,
    embedding_table,
    sentence_cosines,
    sentence_pairs,
    shared_tokens,
    unit_vectors,
)
from lshsim.testing import reference as ref

SEEDS = st.integers(0, 2**32 - 1)
#: Width of the acceptance interval, in standard errors, of the distribution comparisons.
Z_TOL = 5.0


@st.composite
def models(draw, max_length: int = 40):
    """``(count, f, l, V, s)``: a valid sentence model, V from tight (``2l - s``) to huge."""
    length = draw(st.integers(1, max_length))
    overlap = draw(st.floats(0.0, 1.0))
    s = shared_tokens(overlap, length)
    slack = draw(st.one_of(st.just(0), st.integers(0, 60), st.integers(0, 10**9)))
    return draw(st.integers(0, 25)), overlap, length, 2 * length - s + slack, s


def exact_shared(i: int, q: int, length: int) -> int:
    """``round_half_up(f l)`` for ``f = i / q``, in exact rational arithmetic."""
    return math.floor(Fraction(i, q) * length + Fraction(1, 2))


def normalise(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


# -- tokens -----------------------------------------------------------------------------------


@given(model=models(), seed=SEEDS)
def test_tokens_distinct_within_pair_union(model, seed):
    """Distinct tokens: each sentence has ``l`` distinct ids in ``[0, V)`` and the pair's union
    has exactly ``2l - s`` distinct ids."""
    count, overlap, length, vocab, s = model
    p = sentence_pairs(
        count, overlap, length=length, vocab=vocab, rng=np.random.default_rng(seed), embed=False
    )
    assert p.tokens1.shape == p.tokens2.shape == (count, length)
    assert p.tokens1.dtype == p.tokens2.dtype == np.int64
    assert p.shared == s
    for t1, t2 in zip(p.tokens1.tolist(), p.tokens2.tolist(), strict=True):
        assert len(set(t1)) == len(set(t2)) == length
        assert len(set(t1) | set(t2)) == 2 * length - s
        assert all(0 <= t < vocab for t in t1 + t2)


@given(model=models(), seed=SEEDS)
def test_shared_tokens_sit_at_aligned_positions(model, seed):
    """Alignment: the sentences agree at exactly ``s`` positions and share no other token."""
    count, overlap, length, vocab, s = model
    p = sentence_pairs(
        count, overlap, length=length, vocab=vocab, rng=np.random.default_rng(seed), embed=False
    )
    assert ((p.tokens1 == p.tokens2).sum(axis=1) == s).all()
    for t1, t2 in zip(p.tokens1.tolist(), p.tokens2.tolist(), strict=True):
        assert len(set(t1) & set(t2)) == s


@given(model=models(), seed=SEEDS)
def test_jaccard_of_token_sets(model, seed):
    """Jaccard: the pair's token sets have Jaccard index exactly ``s / (2l - s)``."""
    count, overlap, length, vocab, s = model
    p = sentence_pairs(
        count, overlap, length=length, vocab=vocab, rng=np.random.default_rng(seed), embed=False
    )
    for t1, t2 in zip(p.tokens1.tolist(), p.tokens2.tolist(), strict=True):
        a, b = set(t1), set(t2)
        assert Fraction(len(a & b), len(a | b)) == Fraction(s, 2 * length - s)


@given(
    frac=st.tuples(st.integers(1, 100), st.integers(0, 100)).map(lambda t: (min(t), t[0])),
    length=st.integers(1, 500),
)
@example(frac=(7, 10), length=45)  # 0.7 * 45 rounds to 31.499999999999996 in floating point
@example(frac=(1, 2), length=5)  # 2.5 -> 3 (Python's round gives 2)
@example(frac=(1, 2), length=3)  # 1.5 -> 2
@example(frac=(1, 6), length=3)  # 0.5 -> 1
@example(frac=(1, 10), length=4)  # 0.4 -> 0
def test_shared_count_rounds_half_up(frac, length):
    """Shared count: ``s = round_half_up(f l)`` of the intended rational ``f = i / q``, exact
    even where the floating-point product lands an ulp below a half."""
    i, q = frac
    assert shared_tokens(i / q, length) == exact_shared(i, q, length)


@pytest.mark.parametrize(("length", "shared"), [(4, 2), (7, 3), (16, 0), (5, 5)])
def test_replaced_positions_are_uniform(length, shared):
    """Uniform positions: each position is replaced with probability ``(l - s) / l`` (every
    count within ``Z_TOL`` binomial standard errors)."""
    count = 20000
    p = sentence_pairs(
        count,
        shared / length,
        length=length,
        vocab=10**6,
        rng=np.random.default_rng(3),
        embed=False,
    )
    replaced = (p.tokens1 != p.tokens2).sum(axis=0)
    q = (length - shared) / length
    se = math.sqrt(count * q * (1 - q))
    assert (np.abs(replaced - count * q) <= Z_TOL * se + 1e-9).all(), replaced


def test_token_ids_cover_the_vocabulary_uniformly():
    """Uniform ids: with a tight and a loose vocabulary, every id is used about equally often."""
    for vocab, length in [(12, 8), (50, 3)]:
        p = sentence_pairs(4000, 0.5, length=length, vocab=vocab, rng=np.random.default_rng(4))
        freq = np.bincount(np.concatenate([p.tokens1, p.tokens2]).ravel(), minlength=vocab)
        assert stats.chisquare(freq).pvalue > 1e-3


# -- embeddings -------------------------------------------------------------------------------


@given(model=models(max_length=12), dim=st.integers(2, 40), seed=SEEDS)
def test_representations_are_unit_vectors(model, dim, seed):
    """Unit norm: both sentence representations have norm 1 (to 1e-12)."""
    count, overlap, length, vocab, _ = model
    p = sentence_pairs(
        count, overlap, length=length, vocab=vocab, dim=dim, rng=np.random.default_rng(seed)
    )
    assert p.x1.shape == p.x2.shape == (count, dim)
    np.testing.assert_allclose(np.linalg.norm(p.x1, axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(p.x2, axis=1), 1.0, rtol=0, atol=1e-12)


@given(
    overlap=st.floats(0.0, 1.0),
    length=st.integers(1, 12),
    dim=st.integers(2, 16),
    seed=SEEDS,
)
def test_representations_are_normalised_mean_embeddings(overlap, length, dim, seed):
    """Mean embedding: with a table, ``x_i`` is the normalised mean of ``table[tokens_i]``."""
    table = embedding_table(2 * length + 5, dim, seed=seed)
    np.testing.assert_allclose(np.linalg.norm(table, axis=1), 1.0, rtol=0, atol=1e-12)
    p = sentence_pairs(20, overlap, length=length, table=table, rng=np.random.default_rng(seed))
    np.testing.assert_allclose(p.x1, normalise(table[p.tokens1].mean(axis=1)), atol=1e-12)
    np.testing.assert_allclose(p.x2, normalise(table[p.tokens2].mean(axis=1)), atol=1e-12)


def test_full_overlap_gives_identical_representations():
    """``f = 1``: the sentences are equal, and so are their representations (cosine 1)."""
    p = sentence_pairs(50, 1.0, length=8, dim=5, vocab=100, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(p.tokens1, p.tokens2)
    np.testing.assert_array_equal(p.x1, p.x2)
    q = sentence_pairs(50, 0.5, length=8, dim=5, vocab=100, rng=np.random.default_rng(0))
    assert ((q.x1 * q.x2).sum(axis=1) < 1 - 1e-9).all()


@given(overlap=st.floats(0.0, 1.0), length=st.integers(1, 20), seed=SEEDS)
def test_same_seed_same_pairs(overlap, length, seed):
    """Reproducibility: equal generator seeds give equal pairs; tokens do not depend on
    ``embed``; another seed gives other pairs."""
    kw = {"length": length, "vocab": 2 * length + 3, "dim": 6}
    a = sentence_pairs(10, overlap, rng=np.random.default_rng(seed), **kw)
    b = sentence_pairs(10, overlap, rng=np.random.default_rng(seed), **kw)
    c = sentence_pairs(10, overlap, rng=np.random.default_rng(seed), embed=False, **kw)
    for name in ("tokens1", "tokens2", "x1", "x2"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.tokens1, c.tokens1)
    np.testing.assert_array_equal(a.tokens2, c.tokens2)
    assert c.x1 is None and c.x2 is None
    other = sentence_pairs(10, overlap, rng=np.random.default_rng(seed + 1), **kw)
    assert not np.array_equal(other.x1, a.x1)


# -- cosine_pairs -------------------------------------------------------------------------------


@given(
    cosine=st.floats(-1.0, 1.0),
    dim=st.integers(2, 200),
    count=st.integers(0, 30),
    seed=SEEDS,
)
@example(cosine=1.0, dim=2, count=5, seed=0)
@example(cosine=-1.0, dim=3, count=5, seed=0)
@example(cosine=0.0, dim=2, count=5, seed=0)
def test_cosine_pairs_exact_cosine_and_unit_norms(cosine, dim, count, seed):
    """Exact cosine: ``x . y = a`` and ``|x| = |y| = 1``, each to 1e-12, for ``d >= 2``."""
    x, y = cosine_pairs(count, cosine, dim, np.random.default_rng(seed))
    assert x.shape == y.shape == (count, dim)
    np.testing.assert_allclose((x * y).sum(axis=1), cosine, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1.0, rtol=0, atol=1e-12)


def test_cosine_pairs_are_isotropic():
    """Isotropy: ``x`` and the orthogonal part of ``y`` have mean zero coordinates (not a fixed
    direction), each within ``Z_TOL`` standard errors of 0."""
    count, dim = 20000, 5
    x, y = cosine_pairs(count, 0.3, dim, np.random.default_rng(8))
    orth = y - 0.3 * x
    se = math.sqrt(1 / dim / count)  # a coordinate of a uniform unit vector has variance 1/d
    assert (np.abs(x.mean(axis=0)) < Z_TOL * se).all()
    assert (np.abs(orth.mean(axis=0)) < Z_TOL * se).all()


def test_cosine_pairs_dimension_one_rule():
    """``d = 1``: only cosines ±1 exist (``y = ±x``, unit); any other cosine is a ValueError."""
    for a in (1.0, -1.0):
        x, y = cosine_pairs(7, a, 1, np.random.default_rng(0))
        np.testing.assert_array_equal(np.abs(x), 1.0)
        np.testing.assert_array_equal(y, a * x)
    for a in (0.0, 0.5, -0.999):
        with pytest.raises(ValueError, match=r"cosine must be -1 or 1 when dim \(d\) = 1"):
            cosine_pairs(3, a, 1, np.random.default_rng(0))


# -- sentence_cosines: the reduced (norm-walk) sampler ------------------------------------------

#: (f, l, d) -> s, K = 2l - s: d < 3 (the three-direction Bartlett factor has q = d rows), s = 0
#: (no shared sum), s = l - 1 (one-token walks for the unshared sums), l = 1.
DISTRIBUTION_CASES = [
    (0.5, 16, 8),  # s = 8, K = 24 > d
    (0.25, 4, 64),  # s = 1, K = 7 < d: a one-token shared sum
    (0.75, 8, 3),  # s = 6, K = 10 > d = 3: the smallest d with a full 3 x 3 factor
    (0.0, 3, 2),  # s = 0, d = 2
    (0.9, 10, 30),  # s = 9 = l - 1
    (0.5, 2, 2),  # s = 1 = l - 1, d = 2: few tokens in few dimensions
    (0.75, 4, 2),  # s = 3 = l - 1, d = 2: arcsine walk steps
    (0.0, 1, 2),  # l = 1, s = 0, d = 2: the cosine of two independent unit vectors
    (0.0, 1, 7),  # l = 1, s = 0
    (0.0, 24, 5),  # s = 0, long unshared walks
]
SAMPLES = 20000


def _explicit_cosines(overlap, length, dim, samples=SAMPLES):
    full = sentence_pairs(
        samples, overlap, length=length, dim=dim, vocab=10**6, rng=np.random.default_rng(101)
    )
    return (full.x1 * full.x2).sum(axis=1)


def _both_samplers(overlap, length, dim, dim_reduced=None):
    cos_reduced = sentence_cosines(
        SAMPLES, overlap, length=length, dim=dim_reduced or dim, rng=np.random.default_rng(202)
    )
    return _explicit_cosines(overlap, length, dim), cos_reduced


def _moment_z_scores(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """z-scores of the differences of the means and of the variances of two samples."""

    def var_se2(v):
        m4 = ((v - v.mean()) ** 4).mean()
        return (m4 - v.var(ddof=1) ** 2) / v.size

    z_mean = (a.mean() - b.mean()) / math.sqrt(a.var() / a.size + b.var() / b.size)
    z_var = (a.var(ddof=1) - b.var(ddof=1)) / math.sqrt(var_se2(a) + var_se2(b))
    return float(z_mean), float(z_var)


def _assert_same_distribution(a: np.ndarray, b: np.ndarray) -> None:
    z_mean, z_var = _moment_z_scores(a, b)
    assert abs(z_mean) < Z_TOL, (z_mean, a.mean(), b.mean())
    assert abs(z_var) < Z_TOL, (z_var, a.var(), b.var())
    assert stats.ks_2samp(a, b).pvalue > 1e-3


@pytest.mark.parametrize(("overlap", "length", "dim"), DISTRIBUTION_CASES)
def test_sentence_cosines_matches_sentence_pairs(overlap, length, dim):
    """Same distribution as explicit pairs: the norm-walk sampler's cosines and the cosines of
    explicit sentence pairs agree in mean and variance (within ``Z_TOL`` standard errors) and
    pass a two-sample Kolmogorov-Smirnov test (p > 1e-3), at fixed seeds."""
    cos_full, cos_reduced = _both_samplers(overlap, length, dim)
    assert cos_reduced.shape == (SAMPLES,)
    assert cos_reduced.dtype == np.float64
    assert ((cos_reduced >= -1) & (cos_reduced <= 1)).all()
    _assert_same_distribution(cos_full, cos_reduced)


@pytest.mark.parametrize(("overlap", "length", "dim"), DISTRIBUTION_CASES)
def test_sentence_cosines_matches_bartlett_reference(overlap, length, dim):
    """Same distribution as the ``K x K`` Bartlett reference (a third, independent route): mean,
    variance and KS as above."""
    cos_reduced = sentence_cosines(
        SAMPLES, overlap, length=length, dim=dim, rng=np.random.default_rng(303)
    )
    cos_ref = ref.sentence_cosines_bartlett(
        SAMPLES, overlap, length=length, dim=dim, rng=np.random.default_rng(404)
    )
    _assert_same_distribution(cos_ref, cos_reduced)


def test_bartlett_reference_matches_sentence_pairs():
    """The reference itself against explicit pairs, where its ``K x K`` factor is truncated
    (``d < K``) and where it is not: mean, variance and KS as above."""
    for overlap, length, dim in [(0.5, 16, 8), (0.25, 4, 64)]:
        cos_ref = ref.sentence_cosines_bartlett(
            SAMPLES, overlap, length=length, dim=dim, rng=np.random.default_rng(505)
        )
        _assert_same_distribution(_explicit_cosines(overlap, length, dim), cos_ref)


@pytest.mark.parametrize(
    ("overlap", "length", "dim", "wrong_dim"), [(0.5, 16, 8, 12), (0.25, 4, 64, 48)]
)
def test_distribution_comparison_detects_a_wrong_dimension(overlap, length, dim, wrong_dim):
    """Control for the tests above: the same comparison rejects a sampler run at another ``d``
    (mean or variance off by more than ``Z_TOL`` standard errors, and KS p < 1e-3)."""
    cos_full, cos_reduced = _both_samplers(overlap, length, dim, dim_reduced=wrong_dim)
    z_mean, z_var = _moment_z_scores(cos_full, cos_reduced)
    assert max(abs(z_mean), abs(z_var)) > Z_TOL
    assert stats.ks_2samp(cos_full, cos_reduced).pvalue < 1e-3


def test_distribution_comparison_detects_a_wrong_overlap():
    """Control: the comparison also rejects a sampler run at a neighbouring ``s`` (8 vs 9 of
    16 shared tokens)."""
    cos_full = _explicit_cosines(0.5, 16, 16)
    cos_reduced = sentence_cosines(
        SAMPLES, 9 / 16, length=16, dim=16, rng=np.random.default_rng(202)
    )
    z_mean, _ = _moment_z_scores(cos_full, cos_reduced)
    assert abs(z_mean) > Z_TOL
    assert stats.ks_2samp(cos_full, cos_reduced).pvalue < 1e-3


@pytest.mark.parametrize(("k", "dim"), [(1, 5), (2, 2), (5, 3), (12, 2), (20, 50)])
def test_norm_walk_matches_explicit_sums(k, dim):
    """Norm walk: the squared norm of a sum of ``k`` uniform unit vectors has mean ``k`` and
    variance ``2k(k - 1)/d`` (exactly: ``|P|^2 = k + 2 sum_{i<j} G_ij``), and the walk's norms
    match explicit sums in a two-sample KS test (p > 1e-3)."""
    count = 2**16
    r2 = sentences._sum_norms(k, (count,), dim, np.random.default_rng(808)) ** 2
    var = 2 * k * (k - 1) / dim
    assert abs(r2.mean() - k) <= Z_TOL * math.sqrt(var / count) + 1e-12
    if k == 1:  # one unit vector: norm exactly 1
        np.testing.assert_array_equal(r2, 1.0)
        return
    se_var = math.sqrt((((r2 - r2.mean()) ** 4).mean() - r2.var() ** 2) / count)
    assert abs(r2.var(ddof=1) - var) <= Z_TOL * se_var, (r2.var(), var)
    explicit = unit_vectors((20000, k), dim, np.random.default_rng(909)).sum(axis=1)
    assert stats.ks_2samp(np.sqrt(r2), np.linalg.norm(explicit, axis=1)).pvalue > 1e-3


def test_sentence_cosines_concentrate_at_s_over_l_for_huge_d():
    """Cost independent of ``d``: at ``d = 10^12`` the embeddings are nearly orthonormal and
    the cosine is ``s / l`` up to ``O(1/sqrt(d))`` (here within 1e-4)."""
    cos = sentence_cosines(200, 0.3, length=10, dim=10**12, rng=np.random.default_rng(5))
    np.testing.assert_allclose(cos, 3 / 10, rtol=0, atol=1e-4)


def test_sentence_cosines_full_overlap_is_one():
    """``f = 1``: both representations are the same vector, cosine exactly 1."""
    for length, dim in [(6, 4), (1, 2)]:
        cos = sentence_cosines(100, 1.0, length=length, dim=dim, rng=np.random.default_rng(0))
        np.testing.assert_array_equal(cos, 1.0)


@given(
    overlap=st.floats(0.0, 1.0),
    length=st.integers(1, 40),
    dim=st.one_of(st.integers(2, 8), st.integers(2, 10**15)),
    count=st.integers(0, 40),
    seed=SEEDS,
)
def test_sentence_cosines_are_finite_cosines(overlap, length, dim, count, seed):
    """Range: every sampled cosine is a finite float64 in [-1, 1], for any valid model and
    ``d`` up to 10^15."""
    cos = sentence_cosines(count, overlap, length=length, dim=dim, rng=np.random.default_rng(seed))
    assert cos.shape == (count,) and cos.dtype == np.float64
    assert np.isfinite(cos).all()
    assert ((cos >= -1) & (cos <= 1)).all()


def test_sentence_cosines_chunks_are_seamless(monkeypatch):
    """Chunking: the chunks draw from one generator in turn, so a count spanning several chunks
    gives fresh cosines in each (no repeated chunk) with the same distribution."""
    monkeypatch.setattr(sentences, "COSINE_CHUNK", 1000)
    cos = sentence_cosines(3500, 0.5, length=8, dim=16, rng=np.random.default_rng(12))
    assert cos.shape == (3500,)
    assert len(np.unique(cos)) == 3500
    whole = sentence_cosines(3500, 0.5, length=8, dim=16, rng=np.random.default_rng(13))
    assert stats.ks_2samp(cos, whole).pvalue > 1e-3


def test_sentence_cosines_same_seed_same_values():
    """Reproducibility: equal generator seeds give equal cosines; another seed does not."""
    a = sentence_cosines(50, 0.5, length=8, dim=6, rng=np.random.default_rng(9))
    b = sentence_cosines(50, 0.5, length=8, dim=6, rng=np.random.default_rng(9))
    c = sentence_cosines(50, 0.5, length=8, dim=6, rng=np.random.default_rng(10))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(("overlap", "length", "dim"), [(0.5, 8, 16), (0.0, 5, 2), (0.9, 40, 64)])
def test_sentence_sums_are_the_cosines_draws(overlap, length, dim):
    """sentence_sums: from the same seed, <S1, S2>/(|S1||S2|) is sentence_cosines bit for bit
    (across a chunk boundary), and E|S1|^2 = E|S2|^2 = l, E<S1, S2> = s (sums of unit vectors
    with uncorrelated cross terms) within 4 standard errors."""
    count = sentences.COSINE_CHUNK + 100
    sums = sentences.sentence_sums(
        count, overlap, length=length, dim=dim, rng=np.random.default_rng(31)
    )
    cos = sentence_cosines(count, overlap, length=length, dim=dim, rng=np.random.default_rng(31))
    np.testing.assert_array_equal(
        np.clip(sums[:, 2] / np.sqrt(sums[:, 0] * sums[:, 1]), -1.0, 1.0), cos
    )
    s = shared_tokens(overlap, length)
    for col, mean in zip(sums.T, (length, length, s), strict=True):
        assert abs(col.mean() - mean) <= 4 * col.std() / math.sqrt(count) + 1e-12


def test_sentence_sums_full_overlap():
    """s = l: both sums are the same vector (all three entries equal, not a constant)."""
    sums = sentences.sentence_sums(50, 1.0, length=6, dim=5, rng=np.random.default_rng(2))
    np.testing.assert_array_equal(sums[:, 0], sums[:, 1])
    np.testing.assert_allclose(sums[:, 2], sums[:, 0], rtol=1e-12)
    assert sums[:, 0].std() > 0


# -- cosine_moments / distance_moments: the delta method ------------------------------------------

#: (f, l, d) checked against the exact sampler, inside the domain where the bounds are stated
#: (d >= 8, or d >= 4 on the fitting grid l <= 64): s = 0, s = l - 1, l = 1, small and large d.
MOMENT_CASES = [
    (0.5, 16, 4),
    (0.8, 4, 4),  # s = 3 = l - 1: the largest mean error seen
    (0.9, 64, 4),  # the largest relative variance error on the grid
    (0.0, 8, 4),  # s = 0: exact
    (0.5, 1, 4),  # l = 1: exact
    (15 / 16, 16, 8),  # s = l - 1 at d = 8
    (0.25, 4, 16),  # s = 1
    (0.8, 16, 16),
    (0.75, 4, 64),
    (0.5, 32, 64),
    (0.1, 16, 256),
]
MOMENT_SAMPLES = 2**18


def _sample_moments(x: np.ndarray) -> tuple[float, float, float, float]:
    """Mean, variance and their standard errors."""
    m, v = x.mean(), x.var(ddof=1)
    se_var = math.sqrt(max(((x - m) ** 4).mean() - v * v, 0.0) / x.size)
    return float(m), float(v), math.sqrt(v / x.size), se_var


@pytest.mark.parametrize(("overlap", "length", "dim"), MOMENT_CASES)
def test_moments_agree_with_the_exact_sampler_within_the_stated_error(overlap, length, dim):
    """Stated error: the delta-method mean and variance of the cosine and of the distance are
    within their documented bounds (``C / d^2`` for the mean, relative ``C / d`` for the
    variance) plus 4 standard errors of the Monte-Carlo estimate, at fixed seeds."""
    cos = sentence_cosines(
        MOMENT_SAMPLES, overlap, length=length, dim=dim, rng=np.random.default_rng(606)
    )
    dist = np.sqrt(np.maximum(2.0 - 2.0 * cos, 0.0))
    z = 4.0
    mean, var = cosine_moments(overlap, length, dim)
    m, v, se_m, se_v = _sample_moments(cos)
    assert abs(mean - m) <= COSINE_MEAN_ERROR / dim**2 + z * se_m, (mean, m, se_m)
    assert abs(var - v) <= COSINE_VAR_ERROR / dim * var + z * se_v, (var, v, se_v)
    mean, var = distance_moments(overlap, length, dim)
    m, v, se_m, se_v = _sample_moments(dist)
    assert abs(mean - m) <= DISTANCE_MEAN_ERROR / dim**2 * mean + z * se_m, (mean, m, se_m)
    assert abs(var - v) <= DISTANCE_VAR_ERROR / dim * var + z * se_v, (var, v, se_v)


def test_moment_check_detects_a_first_order_formula():
    """Control for the test above: its tolerance rejects the first-order approximations, mean
    ``= f`` at ``d = 4`` (dropping the ``1/d`` bias) and variance ``= (1 - f^2)^2 / d`` at
    ``d = 256`` (dropping the ``1/l`` term; at small ``d`` the relative tolerance
    ``COSINE_VAR_ERROR / d`` is too wide to see it)."""
    overlap, length = 0.5, 4
    for dim in (4, 256):
        cos = sentence_cosines(
            MOMENT_SAMPLES, overlap, length=length, dim=dim, rng=np.random.default_rng(707)
        )
        m, v, se_m, se_v = _sample_moments(cos)
        if dim == 4:
            assert abs(overlap - m) > COSINE_MEAN_ERROR / dim**2 + 4 * se_m
        else:
            var1 = (1 - overlap**2) ** 2 / dim
            assert abs(var1 - v) > COSINE_VAR_ERROR / dim * var1 + 4 * se_v


@given(overlap=st.floats(0.0, 1.0), length=st.integers(1, 10**6), dim=st.integers(2, 10**15))
def test_cosine_moments_ranges(overlap, length, dim):
    """Ranges: the mean is in [0, 1] (within [-1, 1]) and the variance in [0, 1/d]."""
    mean, var = cosine_moments(overlap, length, dim)
    assert 0.0 <= mean <= 1.0
    assert 0.0 <= var <= 1.0 / dim


@given(overlap=st.floats(0.0, 1.0), length=st.integers(1, 1000), dim=st.integers(2, 10**6))
def test_cosine_moments_converge_as_d_grows(overlap, length, dim):
    """Large ``d``: as ``d`` grows the mean moves monotonically to ``f = s / l`` and the variance
    to 0 (within ``1/d`` at ``d``, and within 1e-11 at ``d = 10^12``)."""
    f = shared_tokens(overlap, length) / length
    mean, var = cosine_moments(overlap, length, dim)
    mean2, var2 = cosine_moments(overlap, length, 2 * dim)
    assert abs(mean2 - f) <= abs(mean - f) <= 1.0 / dim
    assert var2 <= var
    mean, var = cosine_moments(overlap, length, 10**12)
    assert abs(mean - f) < 1e-11 and var < 1e-11


@given(length=st.integers(1, 10**6), dim=st.integers(2, 10**15))
def test_cosine_moments_exact_at_the_ends(length, dim):
    """Exact ends: ``f = 0`` gives mean 0 and variance ``1/d`` (two independent uniform
    directions); ``f = 1`` gives mean 1 and variance 0; distance ``(0, 0)`` at ``f = 1``."""
    assert cosine_moments(0.0, length, dim) == (0.0, 1.0 / dim)
    assert cosine_moments(1.0, length, dim) == (1.0, 0.0)
    assert distance_moments(1.0, length, dim) == (0.0, 0.0)


@given(overlap=st.floats(0.0, 1.0), length=st.integers(1, 200))
def test_cosine_moments_use_the_realised_ratio(overlap, length):
    """Realised ``f``: the moments depend on ``overlap`` only through ``s = round_half_up(f l)``,
    and ``l = 1`` (``f`` rounds to 0 or 1) is always exact."""
    s = shared_tokens(overlap, length)
    assert cosine_moments(overlap, length, 16) == cosine_moments(s / length, length, 16)
    if length == 1:
        assert cosine_moments(overlap, 1, 16) in ((0.0, 1 / 16), (1.0, 0.0))


@given(overlap=st.floats(0.0, 1.0), length=st.integers(1, 1000), dim=st.integers(4, 10**12))
def test_distance_moments_consistent_with_cosine_moments(overlap, length, dim):
    """Distance: the mean is in [0, 2], the variance is >= 0, and ``E D^2 = 2 - 2 E cos`` holds
    to the expansion's order (``mean^2 + var`` within ``v^2 / (4 a^3)`` of ``a = 2(1 - mu)``,
    ``v`` the cosine variance)."""
    mu, v = cosine_moments(overlap, length, dim)
    mean, var = distance_moments(overlap, length, dim)
    assert 0.0 <= mean <= 2.0 and var >= 0.0
    a = 2.0 * (1.0 - mu)
    if a > 0:
        assert math.isclose(mean**2 + var, a + v * v / (4 * a**3), rel_tol=1e-9, abs_tol=1e-300)


# -- bad input ----------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
BAD_INPUT = [
    (lambda: sentence_pairs(5, 0.5, length=4, dim=1, rng=RNG), r"dim \(d\)"),
    (lambda: sentence_cosines(5, 0.5, length=4, dim=1, rng=RNG), r"dim \(d\)"),
    (lambda: sentence_pairs(5, 0.5, length=4, vocab=5, rng=RNG), r"vocab \(V\) must be >= .*6"),
    (lambda: sentence_pairs(5, 1.5, length=4, rng=RNG), r"overlap \(f\)"),
    (lambda: sentence_pairs(5, -0.1, length=4, rng=RNG), r"overlap \(f\)"),
    (lambda: sentence_pairs(5, float("nan"), length=4, rng=RNG), r"overlap \(f\)"),
    (lambda: sentence_cosines(5, 1.5, length=4, dim=3, rng=RNG), r"overlap \(f\)"),
    (lambda: sentence_pairs(5, 0.5, length=0, rng=RNG), r"length \(l\)"),
    (lambda: sentence_cosines(5, 0.5, length=0, dim=3, rng=RNG), r"length \(l\)"),
    (lambda: sentence_pairs(-1, 0.5, length=4, rng=RNG), r"count"),
    (lambda: sentence_cosines(-1, 0.5, length=4, dim=3, rng=RNG), r"count"),
    (lambda: sentence_pairs(5, 0.5, length=4, table=np.ones(8), rng=RNG), r"table"),
    (lambda: cosine_pairs(5, 1.5, 3, RNG), r"cosine"),
    (lambda: cosine_pairs(5, 0.5, 0, RNG), r"dim \(d\)"),
    (lambda: cosine_pairs(-2, 0.5, 3, RNG), r"count"),
    (lambda: embedding_table(0, 3), r"vocab \(V\)"),
    (lambda: embedding_table(5, 0), r"dim \(d\)"),
    (lambda: cosine_moments(1.5, 4, 8), r"overlap \(f\) must be in \[0, 1\]"),
    (lambda: cosine_moments(-0.1, 4, 8), r"overlap \(f\) must be in \[0, 1\]"),
    (lambda: cosine_moments(float("nan"), 4, 8), r"overlap \(f\)"),
    (lambda: cosine_moments(0.5, 0, 8), r"length \(l\) must be an integer >= 1"),
    (lambda: cosine_moments(0.5, 2.5, 8), r"length \(l\) must be an integer"),
    (lambda: cosine_moments(0.5, 4, 1), r"dim \(d\) must be an integer >= 2"),
    (lambda: cosine_moments(0.5, 4, 0), r"dim \(d\) must be an integer >= 2"),
    (lambda: cosine_moments(0.5, 4, "8"), r"dim \(d\) must be an integer"),
    (lambda: distance_moments(1.01, 4, 8), r"overlap \(f\) must be in \[0, 1\]"),
    (lambda: distance_moments(-1.0, 4, 8), r"overlap \(f\) must be in \[0, 1\]"),
    (lambda: distance_moments(0.5, 0, 8), r"length \(l\) must be an integer >= 1"),
    (lambda: distance_moments(0.5, 4, 1), r"dim \(d\) must be an integer >= 2"),
    (lambda: sentence_cosines(5, -0.5, length=4, dim=3, rng=RNG), r"overlap \(f\)"),
    (lambda: sentence_cosines(5, 0.5, length=4, dim=2.5, rng=RNG), r"dim \(d\)"),
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_raises_value_error_naming_parameter(call, match):
    """Validation: each bad input raises ValueError whose message names the parameter."""
    with pytest.raises(ValueError, match=match):
        call()
