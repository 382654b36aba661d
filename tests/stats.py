"""Statistical assertions with tolerances derived from confidence intervals (fixed seeds)."""

from __future__ import annotations

import math

from lshsim.estimate import wilson_interval

#: Width of the acceptance interval in standard normal units: a wrong-by-chance failure at a
#: given seed has probability about 6e-5, so a failure means a real disagreement.
Z_TEST = 4.0


def assert_agrees(successes: int, trials: int, exact: float, z: float = Z_TEST) -> None:
    """Assert that ``exact`` lies in the Wilson interval of ``successes / trials`` at ``z``."""
    lo, hi = wilson_interval(successes, trials, z=z)
    assert lo <= exact <= hi, (
        f"estimate {successes}/{trials} = {successes / trials:.5f}, {z}-sigma Wilson interval "
        f"[{lo:.5f}, {hi:.5f}] excludes the exact value {exact:.5f}"
    )


def assert_same_rate(k1: int, n1: int, k2: int, n2: int, z: float = Z_TEST) -> None:
    """Two-proportion z-test: two estimates of the same probability agree within ``z`` sigma."""
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(max(p * (1 - p), 1e-12) * (1 / n1 + 1 / n2))
    diff = k1 / n1 - k2 / n2
    assert abs(diff) <= z * se, f"{k1}/{n1} vs {k2}/{n2}: |diff| = {abs(diff):.5f} > {z} * {se:.5f}"
