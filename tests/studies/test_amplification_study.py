"""The amplification study: its grid agrees with the library's optimiser, the same numbers on
every run, and it is registered for `lshsim reproduce` with a quick profile."""

from __future__ import annotations

import json

from lshsim import theory
from lshsim.studies import STUDIES
from lshsim.studies.amplification import AmplificationConfig, amplification

TINY = AmplificationConfig(
    amp_cosines=(0.5, 0.9),
    amp_log2_budgets=(6.0, 12.0),
    amp_log2_buckets=(3, 5),
    amp_points=2**16,
    amp_max_concat=32,
    amp_curve_cosine=0.9,
)


def test_study_grid_is_the_optimisers():
    """Each cell's winner has the lowest ln(miss), and a cell's scheme is best_scheme's."""
    data = amplification(TINY, 0)
    assert data["families"] == ["simhash", "voronoi", "crosspolytope"]
    for i in range(len(TINY.amp_cosines)):
        for j in range(len(TINY.amp_log2_budgets)):
            misses = [data["log_miss"][f][i][j] for f in data["families"]]
            assert misses[data["winner"][i][j]] == min(misses)
    s = theory.best_scheme(
        "crosspolytope", 0.9, 2.0**12, buckets=(8, 32), points=2**16, max_concat=32
    )
    assert data["schemes"]["crosspolytope"][1][1] == [s.n, s.concat, s.tables]
    assert data["curve_cosine"] == 0.9
    json.dumps(data)


def test_registered_with_both_profiles():
    study = STUDIES["amplification"]
    assert study.figure.__name__ == "plot_amplification_map"
    quick, default = study.config("quick"), study.config("default")
    assert len(quick.amp_cosines) * len(quick.amp_log2_buckets) <= 20  # a few seconds
    assert default.amp_curve_cosine in default.amp_cosines
