"""The interval of an estimate, computed in one place, on the unit that is independent.

Every statistic reports a :class:`~lshsim.estimation.engine.Tally`: the number of pairs (the
independent units: each pair draws its own inputs and its own function), the trials they
hold, and per-pair sums: of each pair's value ``y_i``, of its square, of its weight ``m_i``
(the trials the value is a count of, or 1 where the value is already a rate), of ``m_i^2``
and of ``y_i m_i``. :func:`interval` turns it into the point estimate and its 95% interval by
the statistic's rule:

    ``"pairs"`` (every statistic's rule): the interval built on the pairs.

        * Each pair one Bernoulli trial (vector families, min-hash, reduced mode): the Wilson
          score interval on ``successes / pairs``.
        * Several correlated trials per pair (Token-ID's ``l`` positions and an n-gram pair's
          windows, which share the pair's one draw of shared positions and one function; a
          top-k overlap's ``k`` slots): the ratio estimator ``R = sum y_i / sum m_i`` with its
          cluster-robust (delta-method) variance ``v = sum (y_i - R m_i)^2 / (K (K - 1)
          mbar^2)`` over the ``K`` pairs, turned into an effective number of trials
          ``n_eff = R (1 - R) / v`` (the trials divided by the design effect, Kish 1965), and
          the Wilson interval at ``R`` with ``n_eff`` trials (Korn and Graubard 1998), ``n_eff``
          scaled by ``(z / t_{K-1})^2`` because the variance is estimated from ``K`` pairs
          (their degrees-of-freedom adjustment).

        Why Wilson at ``n_eff`` rather than ``R +- z sqrt(v)``: both use the same variance
        where ``R`` is far from 0 and 1, but at small counts (rare n-gram collisions, a few
        pairs) the plain delta-method interval collapses onto ``R`` (and below 0) while
        Wilson's keeps its skew and never leaves ``[0, 1]``; a bootstrap over pairs costs a
        resampling loop per estimate and collapses the same way when every pair is alike.
        ``n_eff`` is kept at least ``K`` (a pair's rate lies in ``[0, 1]``, so its variance is
        at most ``R (1 - R)``). Trials that succeed by construction, the same number in every
        pair (Token-ID's ``round(f l)`` shared positions: equal tokens share a bucket), carry
        no variance: the interval is built on the other trials (their successes are rare
        folds ``id mod n``, where a variance estimated from a handful of them is far too
        small) and mapped back. Two degenerate samples: no spread between the pairs at all
        with ``0 < R < 1`` (every pair counted the same successes, e.g. Token-ID with no
        folded tokens) falls back to the trials as independent; ``R`` equal to 0 or 1 uses the
        pairs as trials (the conservative end: the trials of a pair may move together).

    ``"wilson"``: the Wilson score interval on ``successes / trials``, every trial counted as
        independent (lshsim's interval before issue 32; kept for the calibration table, which
        shows it miscovers where a pair holds correlated trials).
    ``"normal"``: ``mean +- z sd / sqrt(pairs)`` over the per-pair values, clipped to
        ``[0, 1]`` (the top-k overlap's interval before issue 32).

The calibration of these rules, family by family, is ``lshsim calibrate``
(:mod:`lshsim.estimation.calibrate`); the argument is in ``proofs/intervals.md``.

References:
    E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
    JASA 1927. L. Kish, "Survey Sampling", Wiley 1965 (design effect, ratio estimator).
    E. L. Korn and B. I. Graubard, "Confidence intervals for proportions with small expected
    number of positive counts estimated from survey data", Survey Methodology 24, 1998.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lshsim._validate import check_float, check_int

if TYPE_CHECKING:
    from lshsim.estimation.engine import Tally

__all__ = [
    "INTERVALS",
    "Z95",
    "Interval",
    "effective_trials",
    "interval",
    "normal_interval",
    "ratio_variance",
    "uncertain",
    "wilson_interval",
]

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054
#: The interval rules a statistic may name (the first is every statistic's).
INTERVALS = ("pairs", "wilson", "normal")


def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: number of successes, ``0 <= successes <= trials`` (an int; a float is
            accepted where ``trials`` is an effective number of trials).
        trials: number of trials, >= 1 (int, or an effective float count).
        z: normal quantile (default: 95% two-sided).

    Returns:
        ``(low, high)`` within [0, 1].

    References:
        E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
        JASA 1927.
    """
    if isinstance(trials, float) and not isinstance(successes, bool):
        trials = check_float("trials", trials, 1.0, math.inf, hi_open=True)
        successes = check_float("successes", successes, 0.0, trials)
    else:
        trials = check_int("trials", trials, 1)
        successes = check_int("successes", successes, 0, trials)
    z = check_float("z", z, 0.0, math.inf, lo_open=True, hi_open=True)
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # the endpoints at k = 0 and k = n are exactly 0 and 1; keep rounding from moving them
    lo = 0.0 if successes == 0 else max(0.0, min(p, centre - half))
    hi = 1.0 if successes == trials else min(1.0, max(p, centre + half))
    return lo, hi


@dataclass(frozen=True)
class Interval:
    """A point estimate, its 95% interval, its standard error and the trials it stood on.

    ``std_error`` is the pairs' (cluster-robust) standard error of the estimate;
    ``effective_trials`` the trials the Wilson interval used (``n_eff`` of the module
    docstring; None for rule ``"normal"``).
    """

    estimate: float
    low: float
    high: float
    std_error: float | None = None
    effective_trials: float | None = None


def ratio_variance(tally: Tally) -> float:
    """The cluster-robust (delta-method) variance of ``R = sum y_i / sum m_i`` over pairs.

    ``sum (y_i - R m_i)^2 / (K (K - 1) mbar^2)`` with ``mbar = sum m_i / K``, expanded into the
    tally's sums (``sum y^2 - 2 R sum y m + R^2 sum m^2``), never below 0.

    Args:
        tally: the run's sums, ``tally.pairs >= 2``.

    Returns:
        The variance of the estimate.
    """
    k = check_int("pairs", tally.pairs, 2)
    r = tally.total / tally.weights
    resid = tally.squares - 2 * r * tally.cross + r * r * tally.weight_squares
    mbar = tally.weights / k
    return max(0.0, float(resid) / (k * (k - 1) * mbar * mbar))


def effective_trials(estimate: float, variance: float, pairs: int, trials: int) -> float:
    """The trials a Wilson interval at ``estimate`` should count: ``R (1 - R) / variance``.

    Kept at least ``pairs``; ``variance == 0`` gives ``trials`` where ``0 < R < 1`` (no spread
    between the pairs) and ``pairs`` at ``R`` = 0 or 1 (see the module docstring).

    Args:
        estimate: ``R`` in [0, 1].
        variance: its cluster-robust variance, >= 0.
        pairs: the independent units, >= 1.
        trials: the trials, >= ``pairs``.

    Returns:
        ``n_eff`` as a float, ``>= pairs``.
    """
    if estimate <= 0.0 or estimate >= 1.0:
        return float(pairs)
    if variance <= 0.0:
        return float(trials)
    return max(float(pairs), estimate * (1.0 - estimate) / variance)


def normal_interval(estimate: float, variance: float, z: float = Z95) -> tuple[float, float]:
    """``estimate +- z sqrt(variance)`` clipped to ``[0, 1]`` (the probe's rows, rule normal).

    Args:
        estimate: the point estimate.
        variance: its variance, >= 0.
        z: normal quantile.

    Returns:
        ``(low, high)``.
    """
    half = z * math.sqrt(max(0.0, variance))
    return max(0.0, estimate - half), min(1.0, estimate + half)


def interval(rule: str, tally: Tally, z: float = Z95) -> Interval:
    """The estimate and interval of a run's ``tally`` by ``rule`` (see the module docstring).

    The point estimate is the same under every rule (``total / weights``: successes over
    trials, or the mean per-pair rate); only the interval differs.

    Args:
        rule: ``"pairs"``, ``"wilson"`` or ``"normal"``.
        tally: the run's sums; ``"normal"`` needs ``tally.pairs >= 2``.
        z: normal quantile (default: 95% two-sided).

    Returns:
        :class:`Interval`.
    """
    if rule == "pairs":
        return _pairs_interval(tally, z)
    if rule == "wilson":
        if tally.rates:
            raise ValueError("interval rule 'wilson' needs per-pair counts, not rates")
        lo, hi = wilson_interval(tally.total, tally.trials, z)
        return Interval(tally.total / tally.trials, lo, hi, None, float(tally.trials))
    if rule == "normal":
        pairs = tally.pairs
        mean = float(tally.total / pairs)
        var = max(0.0, float((tally.squares - pairs * mean * mean) / (pairs - 1)))
        se = math.sqrt(var / pairs)
        return Interval(mean, max(0.0, mean - z * se), min(1.0, mean + z * se), se)
    raise ValueError(f"interval rule must be one of {', '.join(INTERVALS)}, got {rule!r}")


def _pairs_interval(tally: Tally, z: float) -> Interval:
    """Rule ``"pairs"``: Wilson on pairs, or Wilson at the cluster-robust ``n_eff``."""
    estimate = tally.total / tally.weights
    if tally.trials == tally.pairs and not tally.rates:  # one Bernoulli trial per pair
        lo, hi = wilson_interval(tally.total, tally.pairs, z)
        se = math.sqrt(estimate * (1 - estimate) / tally.pairs)
        return Interval(estimate, lo, hi, se, float(tally.pairs))
    if tally.pairs < 2:
        raise ValueError("the interval over pairs needs at least 2 pairs")
    open_ = uncertain(tally)
    if open_.weights == 0:  # every trial certain: nothing is random
        return Interval(estimate, estimate, estimate, 0.0, math.inf)
    rate = open_.total / open_.weights
    var = ratio_variance(open_)
    n_eff = effective_trials(rate, var, open_.pairs, open_.trials)
    if var > 0.0 and 0.0 < rate < 1.0:  # the variance is estimated from K pairs: t, K - 1 df
        n_eff = max(float(open_.pairs), n_eff * (z / _t_quantile(z, open_.pairs - 1)) ** 2)
    p = min(1.0, max(0.0, float(rate)))
    lo, hi = wilson_interval(p * n_eff, n_eff, z)
    share = open_.weights / tally.weights  # R = certain share + share * rate
    base = tally.certain / tally.weights
    low = max(0.0, min(estimate, base + share * lo))
    high = min(1.0, max(estimate, base + share * hi))
    return Interval(estimate, low, high, share * math.sqrt(var), n_eff)


def _t_quantile(z: float, df: int) -> float:
    """Student's t quantile at the two-sided level of the normal quantile ``z``."""
    from scipy.special import ndtr, stdtrit

    return float(stdtrit(df, ndtr(z)))


def uncertain(tally: Tally) -> Tally:
    """The tally of the trials that are not certain: ``y_i - c_i`` successes of ``m_i - c_i``.

    A pair's certain successes ``c_i`` (fixed by the input model, the same in every pair)
    carry no variance; the interval is built on the rest and mapped back (``R = C / M +
    (1 - C / M) R_open``). Without certain successes, ``tally`` itself.
    """
    if not tally.certain:
        return tally
    c, cc = tally.certain, tally.certain_squares
    return type(tally)(
        pairs=tally.pairs,
        trials=tally.trials - c,
        total=tally.total - c,
        squares=tally.squares - 2 * tally.certain_cross + cc,
        weights=tally.weights - c,
        weight_squares=tally.weight_squares - 2 * tally.certain_weights + cc,
        cross=tally.cross - tally.certain_cross - tally.certain_weights + cc,
    )
