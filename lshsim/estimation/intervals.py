"""The interval of an estimate, computed in one place from the run's per-pair sums.

Every statistic reports a :class:`~lshsim.estimation.engine.Tally` (pairs, trials, and the sum
and sum of squares over pairs of each pair's value); :func:`interval` turns it into the point
estimate and its 95% interval by the statistic's rule:

    ``"wilson"``: the Wilson score interval on ``successes / trials`` (collision
        probabilities; every trial counted as independent, also the ``l`` positions of a
        Token-ID pair and the windows of an n-gram pair, which share one function);
    ``"normal"``: ``mean ± z sd / sqrt(pairs)`` over the per-pair values, with the sample
        standard deviation, clipped to ``[0, 1]`` (the top-k overlap).

The tally holds what a cluster-robust (per-pair) variance needs as well, so changing the rule
is an edit of this module only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lshsim._validate import check_float, check_int

if TYPE_CHECKING:
    from lshsim.estimation.engine import Tally

__all__ = ["INTERVALS", "Z95", "Interval", "interval", "wilson_interval"]

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054
#: The interval rules a statistic may name.
INTERVALS = ("wilson", "normal")


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: number of successes, ``0 <= successes <= trials``.
        trials: number of trials, >= 1.
        z: normal quantile (default: 95% two-sided).

    Returns:
        ``(low, high)`` within [0, 1].

    References:
        E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
        JASA 1927.
    """
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
    """A point estimate, its 95% interval, and (rule ``"normal"``) its standard error."""

    estimate: float
    low: float
    high: float
    std_error: float | None = None


def interval(rule: str, tally: Tally, z: float = Z95) -> Interval:
    """The estimate and interval of a run's ``tally`` by ``rule`` (see the module docstring).

    Args:
        rule: ``"wilson"`` (successes over trials) or ``"normal"`` (the mean per-pair value).
        tally: the run's sums; ``"normal"`` needs ``tally.pairs >= 2``.
        z: normal quantile (default: 95% two-sided).

    Returns:
        :class:`Interval`.
    """
    if rule == "wilson":
        lo, hi = wilson_interval(tally.total, tally.trials, z)
        return Interval(tally.total / tally.trials, lo, hi)
    if rule == "normal":
        pairs = tally.pairs
        mean = float(tally.total / pairs)
        var = max(0.0, float((tally.squares - pairs * mean * mean) / (pairs - 1)))
        se = math.sqrt(var / pairs)
        return Interval(mean, max(0.0, mean - z * se), min(1.0, mean + z * se), se)
    raise ValueError(f"interval rule must be one of {', '.join(INTERVALS)}, got {rule!r}")
