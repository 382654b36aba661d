"""The frequency-aware collision law (`lshsim.laws.frequency`): exact, and against real hashes.

* Exact: on tiny tables the law's mean and variance equal the enumeration of every bucket
  assignment (per head, all heads, any head, and a band's share).
* Ideal hashing: uniform random buckets reproduce the law's mean and sd (Monte Carlo).
* Real hashes: the n-gram family's one-draw shares on a Zipfian 2-gram spectrum sit within
  4 law sd of the mean; Token-ID is injective from m = V (share 0).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lshsim.hashing import NGram, TokenID, make_family
from lshsim.laws import frequency as law


def _enumerate(counts, sizes):
    """Exact mean and variance of every event's share over all bucket assignments."""
    d = len(counts)
    values: dict[str, list[float]] = {}
    grids = [itertools.product(range(m), repeat=d) for m in sizes]
    for assign in itertools.product(*[list(g) for g in grids]):
        buckets = np.array(assign).T  # [D, H]
        for event, share in law.measured_shares(counts, buckets).items():
            values.setdefault(event, []).append(share)
    return {e: (np.mean(v), np.var(v)) for e, v in values.items()}


@pytest.mark.parametrize(
    ("counts", "sizes"),
    [([5, 1, 1, 2], [3]), ([7, 3, 1, 0], [2, 3]), ([4, 2, 1], [3, 2])],
)
def test_law_equals_the_enumeration_of_every_assignment(counts, sizes):
    """Mean and sd of the share, per head, all and any, equal the exhaustive enumeration
    (a zero count: a key hashed but outside the counted set, as in a band)."""
    want = _enumerate(counts, sizes)
    got = law.collision_law(counts, sizes, distinct=len(counts))
    for event, (mean, var) in want.items():
        assert got[event]["mean"] == pytest.approx(mean, abs=1e-12), event
        assert got[event]["sd"] == pytest.approx(np.sqrt(var), abs=1e-12), event


def test_uniform_random_buckets_reproduce_mean_and_sd():
    """1500 draws of uniform buckets for a Zipfian spectrum (D = 300, two heads): each
    event's mean share within 4 standard errors of the law, its sd within 10%."""
    rng = np.random.default_rng(7)
    f = np.floor(1000 / np.arange(1, 301) ** 1.1) + 1
    sizes = [257, 263]
    ideal = law.collision_law(f, sizes)
    draws = 1500
    shares = {e: [] for e in ideal}
    for _ in range(draws):
        b = np.stack([rng.integers(0, m, f.size) for m in sizes], axis=1)
        for e, s in law.measured_shares(f, b).items():
            shares[e].append(s)
    for e, s in shares.items():
        mean, sd = ideal[e]["mean"], ideal[e]["sd"]
        assert abs(np.mean(s) - mean) < 4 * sd / np.sqrt(draws), e
        assert np.std(s) == pytest.approx(sd, rel=0.1), e


def _zipf_bigrams(seed: int, tokens: int = 20000, vocab: int = 500):
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, vocab + 1)
    ids = rng.choice(vocab, tokens, p=p / p.sum())
    return law.spectrum(law.windows([ids], 2))


def test_real_ngram_hash_agrees_with_the_law():
    """The n-gram family (2 heads, m ~ D) on a Zipfian 2-gram spectrum: every event's
    measured share within 4 law sd of the law's mean, for 3 seeds."""
    keys, counts = _zipf_bigrams(0)
    d = len(keys)
    for seed in range(3):
        fam = make_family(NGram.name, d, 1, seed, ngram=2, heads=2)
        buckets = np.asarray(fam.hash(keys)).reshape(d, -1)
        ideal = law.collision_law(counts, [int(m) for m in fam.moduli])
        for e, s in law.measured_shares(counts, buckets).items():
            assert abs(s - ideal[e]["mean"]) < 4 * ideal[e]["sd"], (seed, e)


def test_tokenid_is_injective_from_the_vocabulary_size():
    """Token-ID's id mod m: no collision at m >= V, where the ideal law predicts many."""
    ids = np.arange(0, 500)
    counts = np.arange(500, 0, -1)
    fam = make_family(TokenID.name, 500, 1, 0)
    assert law.measured_shares(counts, fam.hash(ids))["head 0"] == 0.0
    assert law.collision_law(counts, [500])["head 0"]["mean"] > 0.6


def test_bands_and_windows():
    """Bands: 200 types -> 2 in the top 1%, 18 next, 180 rest, unseen types last; ties by
    index. Windows: left-padded, one per token. share_for_mean inverts the mean."""
    counts = np.concatenate([np.arange(200, 0, -1), [0, 0]])
    band = law.frequency_bands(counts)
    assert np.bincount(band).tolist() == [2, 18, 182] and band[-1] == 2 and band[0] == 0
    w = law.windows([[5, 6, 7], [8]], 2, pad_id=1)
    assert w.tolist() == [[1, 5], [5, 6], [6, 7], [1, 8]]
    m = law.share_for_mean(0.1, 1000)
    mean = law.collision_law([1] * 1000, [round(m)])["head 0"]["mean"]
    assert mean == pytest.approx(0.1, rel=1e-3)


def test_bad_input():
    with pytest.raises(ValueError, match=r"^table size \(m\) must be an integer >= 1"):
        law.collision_law([1, 2], [0])
    with pytest.raises(ValueError, match=r"^distinct: D = 1 is below the 2 keys"):
        law.collision_law([1, 2], [4], distinct=1)
    with pytest.raises(ValueError, match=r"^buckets: need \[D\] or \[D, H\] with D = 2"):
        law.measured_shares([1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match=r"^edges: need increasing fractions"):
        law.frequency_bands([1, 2], edges=(0.5, 0.1))
