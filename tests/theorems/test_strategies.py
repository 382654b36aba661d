"""lshsim.theorems.strategies: every strategy draws only values the library accepts, and reaches the
edges of what it promises (a strategy that never draws an edge case tests nothing there)."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from lshsim import theory
from lshsim.hashing import FAMILIES, VECTOR_FAMILIES, get_family
from lshsim.sentences import check_sentence_model, sentence_cosines, shared_tokens
from lshsim.theorems import strategies as lst
from lshsim.theory import families


def test_cosine_kind_is_the_theory_list():
    """kind='cosine' names exactly lshsim.theory.COSINE_FAMILIES (kept in step by hand)."""
    assert lst.FAMILY_KINDS["cosine"] == theory.COSINE_FAMILIES
    assert lst.FAMILY_KINDS[None] == tuple(FAMILIES)
    assert set(lst.FAMILY_KINDS["vectors"]) | set(lst.FAMILY_KINDS["tokens"]) == set(FAMILIES)
    assert not set(lst.FAMILY_KINDS["vectors"]) & set(lst.FAMILY_KINDS["tokens"])


@pytest.mark.parametrize("kind", list(lst.FAMILY_KINDS))
def test_families_draws_every_family_of_its_kind(kind):
    """families(kind) draws every family of that kind and nothing else."""
    seen: set[str] = set()

    @given(lst.families(kind))
    def collect(name):
        assert name in lst.FAMILY_KINDS[kind]
        seen.add(name)

    collect()
    assert seen == set(lst.FAMILY_KINDS[kind])


@pytest.mark.parametrize("family", list(FAMILIES))
def test_bucket_counts_are_accepted_by_the_family(family):
    """Every drawn n passes the family's check_params (with its default parameters)."""

    @given(lst.bucket_counts(family, max_log2=40))
    def check(n):
        assert 2 <= n <= 2**40
        assert get_family(family).check_params(n)["n"] == n

    check()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_bucket_counts_reach_both_ends_and_the_family_shape(family):
    """The range ends are drawn, and (where allowed) n that are not powers of two / odd."""
    strat = lst.bucket_counts(family, min_log2=3, max_log2=30)
    smallest = 9 if family == "productkey" else 8  # product keys: the smallest square >= 8
    assert find(strat, lambda n: True) == smallest  # shrinks to the smallest
    assert find(strat, lambda n: n == 2**30) == 2**30
    assert find(strat, lambda n: n >= 2**29) >= 2**29
    if family in ("simhash", "pstable"):
        return
    assert find(strat, lambda n: n & (n - 1) and n > 2**20) > 2**20  # not a power of two
    if family != "crosspolytope":
        assert find(strat, lambda n: n % 2 == 1 and n > 2**20) % 2 == 1


def test_bucket_counts_bad_arguments():
    """Unknown family and out-of-range exponents raise ValueError naming the argument."""
    with pytest.raises(ValueError, match="family"):
        lst.bucket_counts("nope")
    with pytest.raises(ValueError, match="max_log2"):
        lst.bucket_counts("voronoi", max_log2=63)
    with pytest.raises(ValueError, match="min_log2"):
        lst.bucket_counts("voronoi", min_log2=0)
    with pytest.raises(ValueError, match="min_log2"):
        lst.bucket_counts("voronoi", min_log2=5, max_log2=4)
    with pytest.raises(ValueError, match="kind"):
        lst.families("cosines")


@given(lst.family_configs(max_log2=62))
def test_family_configs_are_accepted(config):
    """(family, n, params) triples pass check_params, which returns the params it was given."""
    family, n, params = config
    checked = get_family(family).check_params(n, **params)
    assert checked["n"] == n
    assert all(checked[k] == v for k, v in params.items())


@given(lst.family_configs(kind="cosine", exact=True, max_log2=62), st.just(0.5))
def test_exact_configs_have_exact_theory(config, a):
    """exact=True only draws parameters the exact theory accepts (no hadamard rotation)."""
    family, n, params = config
    if family in ("voronoi", "crosspolytope"):  # quadrature is slow; validation is the point
        assert families.cosine_family(family, n, dict(params))[1]["n"] == n
    else:
        assert 0.0 < theory.probability(family, n, a, **params) <= 1.0


def test_family_params_reach_their_options():
    """The non-default parameters are drawn: hadamard, w at both ends, minhash k > 1."""
    rot = find(lst.family_params("crosspolytope"), lambda p: p.get("rotation") == "hadamard")
    assert rot == {"rotation": "hadamard"}
    tiny = find(lst.family_params("pstable"), lambda p: p.get("w", 4.0) < 1e-6)
    huge = find(lst.family_params("pstable"), lambda p: p.get("w", 4.0) > 1e6)
    assert tiny["w"] < 1e-6 < 1e6 < huge["w"]
    assert find(lst.family_params("minhash"), lambda p: p.get("k", 1) > 1)["k"] == 2
    with pytest.raises(NoSuchExample):
        find(lst.family_params("crosspolytope", exact=True), lambda p: "hadamard" in p.values())


@given(st.booleans(), st.data())
def test_cosines_in_range(open_, data):
    """cosines() are finite floats in [lo, hi]; open=True never gives an end."""
    lo = data.draw(st.floats(-1.0, 0.5))
    hi = data.draw(st.floats(lo, 1.0).filter(lambda h: h > lo))
    if open_ and math.nextafter(lo, hi) == hi:  # adjacent floats: nothing strictly between
        with pytest.raises(ValueError, match="between"):
            lst.cosines(open=True, lo=lo, hi=hi)
        return
    a = data.draw(lst.cosines(open=open_, lo=lo, hi=hi))
    assert isinstance(a, float) and lo <= a <= hi
    if open_:
        assert lo < a < hi
    f = data.draw(lst.overlaps(open=open_))
    assert 0.0 <= f <= 1.0 and not (open_ and f in (0.0, 1.0))


def test_cosines_often_near_the_ends():
    """Draws crowd both ends (1 -+ a < 1e-6 in at least 1 draw in 10 each): plain floats on
    [-1, 1] land there about once in 700 draws, too rarely to find a bug there."""
    draws: list[float] = []

    @settings(max_examples=300, database=None)
    @given(lst.cosines(open=True))
    def collect(a):
        draws.append(a)

    collect()
    v = np.array(draws)
    assert np.sum(1.0 + v < 1e-6) >= 30 and np.sum(1.0 - v < 1e-6) >= 30
    assert np.sum(np.abs(v) < 0.9) >= 30  # and the middle is not starved
    assert v.min() == math.nextafter(-1.0, 0.0) and v.max() == math.nextafter(1.0, 0.0)


def test_cosines_reach_the_edges():
    """The ends and their float neighbours are drawn: where arccos and 1/(1 + a) misbehave."""
    assert find(lst.cosines(), lambda a: a == -1.0) == -1.0
    assert find(lst.cosines(), lambda a: a == 1.0) == 1.0
    assert find(lst.cosines(open=True), lambda a: a < -0.999999) < -0.999999
    assert find(lst.overlaps(), lambda f: f == 1.0) == 1.0
    with pytest.raises(ValueError, match="lo"):
        lst.cosines(lo=-1.5)
    with pytest.raises(ValueError, match="lo"):
        lst.cosines(lo=0.5, hi=0.5)
    with pytest.raises(ValueError, match="between"):
        lst.cosines(open=True, lo=0.5, hi=math.nextafter(0.5, 1.0))


@given(lst.sentence_models(max_length=40, max_dim=64, max_vocab=200))
def test_sentence_models_pass_the_model_check(model):
    """Every drawn model passes check_sentence_model and can be sampled."""
    s = check_sentence_model(model["overlap"], model["length"], model["vocab"], model["dim"])
    assert 0 <= s <= model["length"] <= 40
    assert 2 <= model["dim"] <= 64
    assert 2 * model["length"] - s <= model["vocab"] <= max(200, 2 * model["length"] - s)
    cos = sentence_cosines(
        3,
        model["overlap"],
        length=model["length"],
        dim=model["dim"],
        rng=np.random.default_rng(0),
    )
    assert cos.shape == (3,) and np.all(np.abs(cos) <= 1.0)


def test_sentence_models_reach_tight_vocab_and_exact_ratios():
    """The vocabulary's lower bound (2l - s) and exact overlaps s/l are drawn."""
    strat = lst.sentence_models(max_length=20)
    tight = find(strat, lambda m: m["length"] > 3 and m["vocab"] == 2 * m["length"])
    assert tight["vocab"] == 2 * tight["length"]
    exact = find(strat, lambda m: 0 < m["overlap"] < 1 and m["overlap"] * m["length"] % 1 == 0)
    assert 0 < exact["overlap"] < 1
    with pytest.raises(ValueError, match="max_dim"):
        lst.sentence_models(max_dim=1)


@given(lst.unit_vector_pairs(st.integers(1, 50)))
def test_unit_vector_pairs_are_unit(pair):
    """Pairs are float64 unit vectors of one shape (norms 1 to 1e-12)."""
    x, y = pair
    assert x.dtype == y.dtype == np.float64 and x.shape == y.shape and x.ndim == 1
    assert np.isfinite(x).all() and np.isfinite(y).all()
    assert abs(np.linalg.norm(x) - 1.0) < 1e-12
    assert abs(np.linalg.norm(y) - 1.0) < 1e-12


@given(st.data(), st.integers(2, 40))
def test_unit_vector_pairs_at_a_cosine(data, d):
    """With cosines, x . y equals the drawn cosine to 1e-12 (and both are unit)."""
    a = data.draw(lst.cosines())
    x, y = data.draw(lst.unit_vector_pairs(d, cosines=st.just(a)))
    assert x.shape == y.shape == (d,)
    assert abs(np.linalg.norm(x) - 1.0) < 1e-12
    assert abs(np.linalg.norm(y) - 1.0) < 1e-12
    assert abs(float(x @ y) - a) < 1e-12


def test_unit_vector_pairs_reach_equal_and_opposite():
    """Equal, opposite and axis-aligned pairs are drawn (ties for the argmax families)."""
    strat = lst.unit_vector_pairs(3)
    assert find(strat, lambda p: np.array_equal(p[0], p[1]))[0].tolist() == [1.0, 0.0, 0.0]
    opp = find(lst.unit_vector_pairs(3), lambda p: np.array_equal(p[1], -p[0]))
    assert opp[0].tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="dim"):
        lst.unit_vector_pairs(0)
    with pytest.raises(ValueError, match="dim"):
        find(lst.unit_vector_pairs(1, cosines=st.just(0.5)), lambda p: True)


def test_unit_vector_pairs_feed_the_hash_families():
    """Drawn pairs hash without error in every vector family (the intended use)."""
    from lshsim.hashing import make_family

    @given(lst.unit_vector_pairs(8), lst.families("vectors"))
    def check(pair, family):
        n = 16
        ids = make_family(family, n, 8, seed=0).hash(np.stack(pair))
        assert ids.shape == (2,) and ((0 <= ids) & (ids < n)).all()

    check()
    assert set(lst.FAMILY_KINDS["vectors"]) == set(VECTOR_FAMILIES)


def test_module_docstring_example_runs():
    """The usage example in the module docstring runs and passes (doctest)."""
    result = doctest.testmod(lst, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0


@given(lst.ngram_models(max_length=200, max_order=8, max_heads=6, max_log2=31))
def test_ngram_models_are_accepted(model):
    """ngram_models draws what the n-gram theory accepts: N <= l, round(f l) = shared."""
    assert 1 <= model["ngram"] <= model["length"] and 1 <= model["heads"] <= 6
    assert shared_tokens(model["overlap"], model["length"]) == model["shared"]
    p = theory.ngram_probability(
        model["ngram"], model["m"], model["overlap"], model["length"], heads=model["heads"]
    )
    assert 0.0 < p <= 1.0


def test_ngram_models_bad_arguments():
    """Out-of-range bounds raise ValueError naming the argument."""
    for kwargs, name in (
        ({"max_length": 0}, "max_length"),
        ({"max_order": 65}, "max_order"),
        ({"max_heads": 0}, "max_heads"),
        ({"max_log2": 32}, "max_log2"),
    ):
        with pytest.raises(ValueError, match=name):
            lst.ngram_models(**kwargs)
