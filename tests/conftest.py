"""Hypothesis profiles: "ci" (default) is fast and derandomised, so every run is reproducible.

Select another with ``HYPOTHESIS_PROFILE=dev pytest`` for a longer local search.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,  # the first example of a test includes Numba's JIT compile
    max_examples=50,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
