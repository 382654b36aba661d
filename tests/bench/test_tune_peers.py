"""The datasketch comparison of ``lshsim tune`` (``lshsim/bench/tune_peers.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasketch import lsh

from lshsim.bench import tune_peers

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows():
    return tune_peers.datasketch_comparison()


def test_rows_hold_datasketchs_choice_and_its_true_rates(rows):
    for row in rows:
        t, d = row["threshold"], row["datasketch"]
        assert (d["b"], d["r"]) == lsh._optimal_param(t, row["num_perm"], 0.5, 0.5)
        assert d["false_positive"] == pytest.approx(d["fp_area"] / t, rel=1e-10)
        assert d["false_negative"] == pytest.approx(d["fn_area"] / (1 - t), rel=1e-10)


def test_lshsim_is_never_worse_and_better_where_datasketch_errs(rows):
    """Same objective, probabilities: lshsim's optimum is no worse at every setting, and
    strictly better at the high thresholds, where the areas mislead (#129)."""
    for row in rows:
        assert row["lshsim"]["objective"] <= row["datasketch"]["objective"] + 1e-12
    high = [r for r in rows if r["threshold"] >= 0.8]
    assert all(r["lshsim"]["objective"] < 0.8 * r["datasketch"]["objective"] for r in high)


def test_the_committed_table_is_current():
    page, data = tune_peers.comparison_page()
    assert (ROOT / "figures" / "TUNE.md").read_text() == page, "python experiments/tune_table.py"
    assert (ROOT / "figures" / "tune_datasketch.json").read_text() == data


def test_the_speed_case_is_registered_with_the_peers():
    from lshsim.bench.peers import load_cases

    assert load_cases()["tune"] is tune_peers.tune_case
