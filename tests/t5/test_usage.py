"""Slot-usage metrics against hand-computed values and their closed-form extremes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lshsim.t5.usage import gini, slot_counts, usage_metrics


def test_hand_computed_example():
    # counts over 4 slots: [0, 0, 1, 3] -> p = (1/4, 3/4) on the used slots
    m = usage_metrics([2, 3, 3, 3], 4)
    assert m["used"] == 0.5
    # KL = 1/4 log(4/4) + 3/4 log(4 * 3/4) = 0.75 log 3
    assert m["kl_uniform"] == pytest.approx(0.75 * math.log(3), rel=1e-12)
    # Gini: sum |ci - cj| over ordered pairs = 20; 2 n^2 mean = 2 * 16 * 1 = 32
    assert m["gini"] == pytest.approx(20 / 32, rel=1e-12)
    # entropy = -(1/4 log 1/4 + 3/4 log 3/4)
    h = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert m["effective"] == pytest.approx(math.exp(h), rel=1e-12)


def test_extremes():
    even = usage_metrics(np.repeat(np.arange(8), 5), 8)
    assert {k: even[k] for k in ("used", "kl_uniform", "gini", "effective")} == {
        "used": 1.0, "kl_uniform": pytest.approx(0.0, abs=1e-12), "gini": 0.0,
        "effective": pytest.approx(8.0)}  # fmt: skip
    one = usage_metrics(np.full(10, 3), 8)
    assert one["used"] == 1 / 8
    assert one["kl_uniform"] == pytest.approx(math.log(8))
    assert one["gini"] == pytest.approx(7 / 8)
    assert one["effective"] == pytest.approx(1.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=12))
def test_gini_equals_the_mean_difference_form(counts):
    c = np.asarray(counts, dtype=np.float64)
    want = (
        0.0 if c.sum() == 0 else np.abs(c[:, None] - c[None, :]).sum() / (2 * c.size**2 * c.mean())
    )
    assert gini(c) == pytest.approx(want, abs=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match=r"^slots: ids must lie in \[0, 4\)"):
        slot_counts([0, 4], 4)
    with pytest.raises(ValueError, match=r"^n \(slots\) must be an integer >= 1"):
        usage_metrics([0], 0)
