"""Time of one exact spherical collision probability (the quadrature of lshsim.laws.spherical).

The issue-8 goal is <= 50 ms per value at relative error <= 1e-6 for n = 2^20. Each benchmark
also checks its value against the same quadrature at a tight tolerance (rtol = 1e-12), so a
faster but wrong setting cannot pass. Run the timings with
``pytest tests/bench/micro/test_bench_theory.py --benchmark-enable``.
"""

from __future__ import annotations

import pytest

from lshsim import theory

N = 2**20
#: negative, moderate, high and near-1 cosines (lshsim.bench.spherical times six)
COSINES = (-0.5, 0.3, 0.8, 0.99)


@pytest.mark.parametrize("family", ["voronoi", "crosspolytope"])
@pytest.mark.parametrize("rtol", [1e-6, 1e-9])
def test_bench_exact_probability(benchmark, family, rtol):
    """Four exact values at n = 2^20 per round; each within rtol of the tight-tolerance value."""

    def run():
        return [theory.log_probability(family, N, a, rtol=rtol) for a in COSINES]

    got = benchmark(run)
    for a, log_p in zip(COSINES, got, strict=True):
        tight = theory.log_probability(family, N, a, rtol=1e-12)
        assert abs(log_p - tight) <= 2 * rtol, (a, log_p, tight)
