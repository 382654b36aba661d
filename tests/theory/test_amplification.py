"""Amplification ``1 - (1 - p^k)^L``, the cost model, and the best scheme at a query budget.

The amplified probability against exact rational arithmetic; the optimiser against a plain
brute force over ``(n, k)``; the cost model's value for every family; bad input, one line.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lshsim import theory
from lshsim.theory import amplification as amp


@settings(max_examples=80)
@given(num=st.integers(0, 1000), k=st.integers(1, 6), tables=st.integers(1, 40), den=st.just(1000))
def test_amplified_matches_exact_fractions(num, den, k, tables):
    """``amplified(p, k, L)`` equals ``1 - (1 - p^k)^L`` computed exactly in rationals."""
    p = Fraction(num, den)
    exact = 1 - (1 - p**k) ** tables
    got = amp.amplified(num / den, k, tables)
    assert got == pytest.approx(float(exact), rel=1e-12, abs=1e-300)


def test_amplified_has_no_cancellation_for_tiny_p():
    """``p = 1e-12``, ``L = 3``: ``3p - 3p^2 + p^3``, where ``1 - (1 - p)^3`` loses 4 digits."""
    p = 1e-12
    assert amp.amplified(p, 1, 3) == pytest.approx(3 * p - 3 * p * p, rel=1e-14)
    assert amp.amplified(1.0, 5, 2) == 1.0 and amp.amplified(0.0, 1, 9) == 0.0
    assert amp.log_miss(0.5, 1, 4) == pytest.approx(4 * math.log(0.5), rel=1e-15)


@settings(max_examples=40)
@given(p=st.floats(0.01, 0.99), k=st.integers(1, 10), tables=st.integers(1, 100))
def test_amplified_monotone(p, k, tables):
    """More tables find more; longer keys find less."""
    assert amp.amplified(p, k, tables + 1) >= amp.amplified(p, k, tables)
    assert amp.amplified(p, k + 1, tables) <= amp.amplified(p, k, tables)


@pytest.mark.parametrize(
    ("family", "n", "kwargs", "cost"),
    [
        ("simhash", 2**10, {}, 10.0),
        ("simhash", 2, {}, 1.0),
        ("pstable", 3**4, {"k": 4}, 4.0),
        ("voronoi", 1000, {}, 1000.0),
        ("crosspolytope", 1024, {}, 512.0),
        ("crosspolytope", 1024, {"rotation": "gaussian"}, 512.0),
        ("crosspolytope", 64, {"rotation": "orthogonal", "dim": 32}, 32.0),
        # D = 128 >= max(d, m): 3 * 128 * (7 + 1) / (2 * 128) = 12
        ("crosspolytope", 256, {"rotation": "hadamard", "dim": 128}, 12.0),
        # D = 1024 (m = 1024 > d = 100): 3 * 1024 * 11 / 200
        ("crosspolytope", 2048, {"rotation": "hadamard", "dim": 100}, 3 * 1024 * 11 / 200),
    ],
)
def test_hash_cost_is_the_documented_model(family, n, kwargs, cost):
    assert amp.hash_cost(family, n, **kwargs) == pytest.approx(cost, rel=1e-15)
    q = amp.query_cost(family, n, 3, 7, **kwargs)
    assert q == pytest.approx(21 * cost, rel=1e-15)


def _brute_force(p, cost, budget, points, max_k):
    """Best ``ln miss`` over ``(n, k)`` by plain loops: ``L = floor(C / (k c + N p2^k))``."""
    best = 0.0
    for (p1, p2), c in zip(p, cost, strict=True):
        for k in range(1, max_k + 1):
            tables = math.floor(budget / (k * c + points * p2**k))
            if tables >= 1:
                best = min(best, tables * math.log1p(-(p1**k)))
    return best


@settings(max_examples=60)
@given(
    data=st.data(),
    budget=st.floats(1.0, 1e6),
    points=st.integers(0, 2**24),
    max_k=st.integers(1, 12),
)
def test_best_scheme_matches_brute_force(data, budget, points, max_k):
    """The vectorised optimiser finds the brute force's optimum, within its budget."""
    ns = data.draw(st.lists(st.sampled_from([8, 16, 64, 256, 1024]), min_size=1, unique=True))
    probs = {}
    for n in ns:
        p2 = data.draw(st.floats(1e-6, 0.5))
        probs[n] = (data.draw(st.floats(p2, 0.99)), p2)
    s = amp.best_scheme(
        "voronoi", 0.5, budget, buckets=ns, points=points, max_concat=max_k, probabilities=probs
    )
    cost = [float(n) for n in ns]
    expect = _brute_force([probs[n] for n in ns], cost, budget, points, max_k)
    if s is None:
        cheapest = min(
            k * c + points * probs[n][1] ** k
            for n, c in zip(ns, cost, strict=True)
            for k in range(1, max_k + 1)
        )
        assert expect == 0.0 and budget < cheapest
        return
    assert s.log_miss == pytest.approx(expect, rel=1e-12, abs=1e-300)
    assert s.cost <= budget * (1 + 1e-12)
    assert s.hashing == s.tables * s.concat * s.n
    assert s.recall == pytest.approx(-math.expm1(s.log_miss), rel=1e-14)


def test_best_family_grid_is_consistent():
    """The grid's winner has the lowest ln miss, its margin is winner over runner-up, and each
    scheme is :func:`best_scheme`'s at that point (exact probabilities, two quadratures)."""
    grid = amp.best_family_grid(
        [0.5], [64.0, 4096.0], buckets={"simhash": (2,), "crosspolytope": (8,)}, points=2**16
    )
    assert grid["families"] == ["simhash", "crosspolytope"]
    for j, budget in enumerate(grid["budgets"]):
        misses = [grid["log_miss"][f][0][j] for f in grid["families"]]
        w = grid["winner"][0][j]
        assert misses[w] == min(misses)
        assert grid["margin"][0][j] == pytest.approx(min(misses) / max(misses), rel=1e-14)
        direct = amp.best_scheme("crosspolytope", 0.5, budget, buckets=(8,), points=2**16)
        assert grid["schemes"]["crosspolytope"][0][j] == direct.to_dict()
    assert theory.best_family_grid is amp.best_family_grid


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: amp.amplified(1.5, 1, 1), r"p \(collision probability\)"),
        (lambda: amp.amplified(0.5, 0, 1), r"concat \(k\)"),
        (lambda: amp.amplified(0.5, 1, 0), r"tables \(L\)"),
        (lambda: amp.hash_cost("minhash", 8), "family must be one of"),
        (lambda: amp.hash_cost("crosspolytope", 8, rotation="hadamard"), r"dim \(d\) is required"),
        (lambda: amp.hash_cost("crosspolytope", 64, rotation="orthogonal", dim=8), "<= 2d"),
        (lambda: amp.hash_cost("simhash", 1000), "power of two"),
        (lambda: amp.best_scheme("simhash", 0.5, 0.0, buckets=(2,), points=1), "budget"),
        (lambda: amp.best_scheme("simhash", 0.5, 8.0, buckets=(), points=1), "buckets"),
        (lambda: amp.best_scheme("simhash", 0.5, 8.0, buckets=(2,), points=-1), r"points \(N\)"),
    ],
)
def test_bad_input_is_one_line(call, match):
    with pytest.raises(ValueError, match=match) as err:
        call()
    assert "\n" not in str(err.value)


def test_nothing_affordable_is_none():
    assert amp.best_scheme("simhash", 0.5, 0.5, buckets=(2,), points=0) is None
