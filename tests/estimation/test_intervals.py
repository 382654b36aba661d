"""Intervals on the independent unit (issue 32): per-pair sums, the ratio variance, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lshsim.estimate import estimate_collision
from lshsim.estimation import Tally, wilson_interval
from lshsim.estimation.calibrate import QUICK_ROWS, calibrate, wilson_coverage
from lshsim.estimation.intervals import (
    effective_trials,
    interval,
    ratio_variance,
    uncertain,
)
from lshsim.sentences import shared_tokens


def _tally(values, m, certain=0):
    t = Tally()
    for chunk in np.array_split(np.asarray(values), 3):
        t.add(chunk, m, certain=certain)
    return t


def test_ratio_variance_is_the_cluster_formula():
    """The tally's sums give sum (y_i - R m_i)^2 / (K (K-1) mbar^2), computed pair by pair."""
    y = np.random.default_rng(1).integers(0, 9, size=57)
    t = _tally(y, 8)
    r = y.sum() / (8 * y.size)
    direct = ((y - r * 8) ** 2).sum() / (y.size * (y.size - 1) * 8.0**2)
    assert (t.weights, t.weight_squares, t.cross) == (8 * 57, 64 * 57, 8 * int(y.sum()))
    assert ratio_variance(t) == pytest.approx(direct, rel=1e-12)


def test_certain_successes_are_taken_out_before_the_variance():
    """``uncertain`` is the tally of ``y_i - c`` successes among ``m - c`` trials."""
    y = np.random.default_rng(2).integers(5, 12, size=40)
    t = _tally(y, 12, certain=5)
    u = uncertain(t)
    direct = _tally(y - 5, 7)
    for name in ("pairs", "trials", "total", "squares", "weights", "weight_squares", "cross"):
        assert getattr(u, name) == getattr(direct, name), name
    with pytest.raises(ValueError, match="certain"):
        Tally().add(np.array([3, 4]), 8, certain=4)


def test_one_trial_per_pair_is_wilson_on_pairs():
    """Rule ``pairs`` with one Bernoulli trial per pair is the Wilson interval on pairs."""
    t = _tally(np.r_[np.ones(13, int), np.zeros(40, int)], 1)
    iv = interval("pairs", t)
    assert (iv.low, iv.high) == wilson_interval(13, 53)
    assert iv.effective_trials == 53


def test_correlated_trials_widen_and_independent_ones_do_not():
    """All-or-nothing pairs count as one trial each; near-binomial pairs keep their trials."""
    whole = _tally(np.r_[np.full(30, 10), np.zeros(70, int)], 10)  # perfectly correlated
    iv = interval("pairs", whole)
    assert iv.effective_trials == 100  # one trial per pair (the floor)
    assert iv.high - iv.low > 3 * np.subtract(*wilson_interval(300, 1000)[::-1])
    ind = _tally(np.random.default_rng(3).binomial(10, 0.3, size=2000), 10)
    n_eff = interval("pairs", ind).effective_trials
    assert 0.85 * 20000 < n_eff < 1.15 * 20000  # independent trials: design effect about 1


def test_effective_trials_edges():
    """R at 0 or 1 counts the pairs; no spread between pairs counts the trials."""
    assert effective_trials(0.0, 0.0, 10, 100) == 10.0
    assert effective_trials(1.0, 0.0, 10, 100) == 10.0
    assert effective_trials(0.5, 0.0, 10, 100) == 100.0
    assert effective_trials(0.5, 1.0, 10, 100) == 10.0  # never fewer than the pairs


def test_tokenid_without_folds_covers_the_exact_rate():
    """n >= V: every pair holds exactly s certain successes; the interval sits on s / l."""
    e = estimate_collision("tokenid", 1000, overlap=0.5, length=16, vocab=1000, samples=300)
    s = shared_tokens(0.5, 16)
    assert e.estimate == s / 16 and e.ci_low == s / 16
    # no fold in 300 * 8 open positions: Wilson's 0-of-300 bound (the pairs), mapped back
    assert e.ci_high == pytest.approx(s / 16 + (1 - s / 16) * wilson_interval(0, 300)[1])


def test_point_estimates_unchanged_by_the_rule():
    """Only the interval moved: the estimate is successes over trials, as before issue 32."""
    e = estimate_collision("ngram", 2**20, overlap=0.5, samples=300, seed=4, ngram=4)
    assert e.estimate == e.successes / e.samples and e.interval == "pairs"
    assert e.pairs == 300 and e.samples == 300 * 29
    assert e.ci_low < e.estimate < e.ci_high
    assert math.isfinite(e.effective_trials) and 300 <= e.effective_trials < e.samples


def test_quick_calibration_fails_the_old_interval_and_passes_the_new():
    """The suite's calibration rows, 300 seeds: 0.95 inside every 99% band for rule pairs.

    The pre-issue-32 interval misses on the same runs: Wilson on the n-gram windows covers
    about 0.90 (N = 4, f = 0.5) and Token-ID's positions about 1.00.
    """
    results = calibrate(QUICK_ROWS, 300)
    for res in results:
        assert res.calibrated["pairs"], (res.row["label"], res.coverage)
    ngram, tokenid = results[0], results[1]
    assert not ngram.calibrated["wilson"] and ngram.coverage["wilson"] < 0.93
    assert not tokenid.calibrated["wilson"] and tokenid.coverage["wilson"] > 0.99


def test_wilson_coverage_is_the_binomial_sum():
    """Wilson's exact coverage on K Bernoulli pairs: brute force by enumeration at K = 30."""
    from math import comb

    p, k = 0.3, 30
    brute = sum(
        comb(k, j) * p**j * (1 - p) ** (k - j)
        for j in range(k + 1)
        if wilson_interval(j, k)[0] <= p <= wilson_interval(j, k)[1]
    )
    assert wilson_coverage(k, p) == pytest.approx(brute, rel=1e-12)
    assert abs(wilson_coverage(100, 0.245486) - 0.9379) < 1e-4  # below 0.95: discreteness
