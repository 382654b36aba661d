"""The routing probe for product keys and hashed n-grams (`lshsim.t5.lookups.probe_theory`).

The theory's two ingredients are checked on synthetic inputs against Monte Carlo over
re-drawn lookups (product keys: the Voronoi product at the half-cosines; n-grams: sharing plus
the 1/m hash term), the pieces against slow obvious references, and the whole probe at
initialisation against its own intervals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from lshsim import theory  # noqa: E402
from lshsim.t5 import probe  # noqa: E402
from lshsim.t5.lookups import probe_theory  # noqa: E402

from .conftest import MICRO, probe_at_initialisation  # noqa: E402

PROBED = MICRO.replace(name="probed", num_encoder_layers=2, num_decoder_layers=2)


def _half_cos(a, b):
    return np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def _at_cosine(x: np.ndarray, a: float, rng) -> np.ndarray:
    """Rows at cosine exactly ``a`` to the rows of ``x``."""
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    z = rng.standard_normal(x.shape)
    z -= np.sum(z * u, axis=1, keepdims=True) * u
    return a * u + math.sqrt(1 - a * a) * z / np.linalg.norm(z, axis=1, keepdims=True)


def test_productkey_top1_redrawn_mean_is_the_voronoi_product():
    """Under fresh Gaussian sub-keys, the top-1 slots collide with probability
    P_vor(s, a1) P_vor(s, a2): half-cosines exactly (0.3, 0.8) on 400 pairs, the mean over
    300 draws is within 4 standard errors of the product."""
    rng = np.random.default_rng(0)
    qa = rng.standard_normal((400, 24))
    qb = np.concatenate([_at_cosine(qa[:, :12], 0.3, rng), _at_cosine(qa[:, 12:], 0.8, rng)], 1)
    np.testing.assert_allclose(_half_cos(qa[:, 12:], qb[:, 12:]), 0.8)
    rates = probe_theory.redrawn_productkey(8, 1, qa, qb, 300, np.random.SeedSequence(1)).mean(1)
    predicted = theory.probability("voronoi", 8, 0.3) * theory.probability("voronoi", 8, 0.8)
    se = rates.std(ddof=1) / math.sqrt(rates.size)
    assert abs(rates.mean() - predicted) <= 4 * se


@pytest.mark.parametrize("k", [1, 3, 8])
def test_topk_slots_are_the_sets_of_a_full_sort(k):
    rng = np.random.default_rng(k)
    q = rng.standard_normal((50, 10))
    keys = rng.standard_normal((2, 6, 5))
    got = probe_theory._topk_slots(q, keys, k)
    for i in range(50):
        sums = np.add.outer(keys[0] @ q[i, :5], keys[1] @ q[i, 5:]).ravel()
        assert set(got[i]) == set(np.argsort(-sums)[:k])


def test_overlap_fraction_and_same_windows_by_hand():
    sa = np.array([[[1, 2, 3], [4, 5, 6]]])
    sb = np.array([[[3, 9, 1], [7, 8, 0]]])
    np.testing.assert_allclose(probe_theory.overlap_fraction(sa, sb), [[2 / 3, 0.0]])
    ta = np.array([[5, 6, 7, 8, 9]])
    tb = np.array([[5, 0, 7, 8, 9]])
    np.testing.assert_array_equal(
        probe_theory.same_windows(ta, tb, 2), [[True, False, False, True, True]]
    )
    np.testing.assert_array_equal(
        probe_theory.same_windows(ta, tb, 3), [[True, False, False, False, True]]
    )


def test_ngram_redrawn_mean_is_sharing_plus_the_hash_term():
    """Distinct windows collide in a fresh hash with probability ~1/m: the mean over 300
    re-drawn multiplier sets equals mean(same + (1 - same)/m) within 4 standard errors."""
    rng = np.random.default_rng(3)
    ta = rng.integers(1, 30000, (40, 32))
    tb = np.where(rng.random(ta.shape) < 0.6, ta, rng.integers(1, 30000, ta.shape))
    rates = probe_theory.redrawn_ngram(2, 13, ta, tb, 300, np.random.SeedSequence(4))
    same = probe_theory.same_windows(ta, tb, 2)
    predicted = np.mean(same + (1 - same) / 13)
    se = rates.std(ddof=1) / math.sqrt(rates.size)
    assert abs(rates.mean() - predicted) <= 4 * se


def test_at_overlap_by_hand():
    cfg = MICRO.replace(lookup="ngram", buckets=10, ngram=2)  # m_0 = 10 (one head: m itself)
    q = 5 * 4 / (10 * 9)  # 5 of 10 positions kept: both of a 2-gram's kept
    assert probe_theory.ngram_at_overlap(cfg, 0.5, 10) == pytest.approx(q + (1 - q) / 10)
    one = cfg.replace(ngram=1)
    assert probe_theory.ngram_at_overlap(one, 0.3, 10) == pytest.approx(0.3 + 0.7 / 10)
    pk = MICRO.replace(lookup="productkey", buckets=64)
    assert probe_theory.productkey_at_overlap(pk, 0.4, 10) == pytest.approx(
        theory.probability("voronoi", 8, 0.4) ** 2
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"lookup": "productkey", "buckets": 16},
        {"lookup": "productkey", "buckets": 64, "topk": 3, "lookup_heads": 2},
        {"lookup": "ngram", "buckets": 16, "ngram": 2, "lookup_heads": 2},
    ],
)
def test_probe_at_initialisation_agrees_with_the_theory(changes):
    """Over 4 layers x 3 overlaps, at least 10 of 12 predictions lie inside the 95%
    intervals and no |z| exceeds 4; usage columns are in range."""
    config = PROBED.replace(**changes)
    rows, ids = probe.sentence_source(config, length=32)
    result = probe_at_initialisation(config, rows, ids, samples=32, router_draws=16)
    for r in result:
        assert 0 < r["slots_used"] <= 1 and 0 <= r["gini"] < 1 and r["kl_uniform"] >= 0


def test_topk_productkey_without_redraws_is_refused_before_any_work():
    config = PROBED.replace(lookup="productkey", buckets=16, topk=2)
    rows = np.arange(3, 67).reshape(2, 32)
    with pytest.raises(ValueError, match=r"^router_draws: top-k product keys .* need >= 2$"):
        probe.probe(config, None, rows, np.arange(3, 100), router_draws=1)
