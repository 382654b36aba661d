"""B.tn1 (``lshsim.theorems.tune``): the tuned scheme meets its constraints, over the range.

Hypothesis draws the threshold form's threshold, budget and weights and the sensitivity
form's targets for min-hash (whose law, ``J`` per value, needs no quadrature to check); the
claim's own check (with and without its mutation) runs in ``test_claim_registry``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from lshsim.theorems import claims
from lshsim.theory.amplification import amplified
from lshsim.tune import tune


@settings(max_examples=25, deadline=None)
@given(
    t=st.floats(0.0, 1.0),
    budget=st.integers(1, 48),
    w_fp=st.floats(0.0, 1.0),
)
def test_tn1(t, budget, w_fp):
    """B.tn1, threshold form: FP and FN are the normalised integrals of the optimum's curve,
    and no scheme within the budget has a lower objective (adaptive quadrature)."""
    weights = (w_fp, 1.0 - w_fp) if w_fp < 1.0 else (1.0, 0.0)
    got = tune("minhash", threshold=t, budget=budget, weights=weights)

    def rates(k, big_l):
        fp = quad(lambda s: amplified(s, k, big_l), 0, t)[0] / t if t > 0 else 0.0
        fn = quad(lambda s: 1 - amplified(s, k, big_l), t, 1)[0] / (1 - t) if t < 1 else 0.0
        return fp, fn

    fp, fn = rates(got.best.k, got.best.L)
    assert got.best.false_positive == pytest.approx(fp, rel=1e-9, abs=1e-14)
    assert got.best.false_negative == pytest.approx(fn, rel=1e-9, abs=1e-14)
    lowest = min(
        weights[0] * a + weights[1] * b
        for k in range(1, budget + 1)
        for big_l in range(1, budget // k + 1)
        for a, b in [rates(k, big_l)]
    )
    assert got.inputs["objective"] <= lowest + 1e-12
    assert got.best.hash_functions + got.inputs["unused"] == budget


@settings(max_examples=40, deadline=None)
@given(
    near=st.floats(0.2, 0.99),
    gap=st.floats(0.05, 0.9),
    recall=st.floats(0.5, 0.999),
    fp=st.floats(1e-4, 0.5),
)
def test_tn1_sensitivity(near, gap, recall, fp):
    """B.tn1, sensitivity form: the optimum meets both targets; one table fewer misses."""
    far = max(0.0, near - gap)
    try:
        got = tune("minhash", near=near, far=far, recall=recall, false_positive=fp, points=100)
    except ValueError as err:  # infeasible: then no k up to the cap reaches both
        assert "no (k, L)" in str(err)
        return
    b = got.best
    assert amplified(near, b.k, b.L) >= recall and amplified(far, b.k, b.L) <= fp
    assert b.L == 1 or amplified(near, b.k, b.L - 1) < recall


def test_the_claim_is_registered():
    assert claims.CLAIMS["B.tn1"].test.endswith("test_claims_tune.py::test_tn1")
