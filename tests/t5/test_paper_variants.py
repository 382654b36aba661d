"""The paper's configurations (:mod:`lshsim.t5.paper_variants`) and the committed plan of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lshsim.t5.configs import get_config
from lshsim.t5.paper_variants import PAPER_VARIANTS, SIZES, paper_variants

PLAN = Path(__file__).resolve().parents[2] / "figures" / "plan.json"


def test_every_row_is_a_distinct_valid_config():
    """28 rows, grouped by size (small first), distinct names and configs, each one built."""
    assert len(PAPER_VARIANTS) == 28
    assert [r.size for r in PAPER_VARIANTS] == sorted(
        (r.size for r in PAPER_VARIANTS), key=SIZES.index
    )
    assert len({r.name for r in PAPER_VARIANTS}) == len(PAPER_VARIANTS)
    configs = [r.config() for r in PAPER_VARIANTS]
    assert len(set(configs)) == len(configs)
    for size in SIZES:
        rows = paper_variants(size)
        assert rows[0].label == "Baseline" and rows[0].config() == get_config(size)
    tid5 = next(r for r in paper_variants("base") if r.label == "Token-ID r5")
    assert (tid5.config().lookup, tid5.config().expert_rank, tid5.tables) == ("tokenid", 5, "6")
    assert paper_variants("base")[1].config(dtype="bfloat16").dtype == "bfloat16"
    with pytest.raises(ValueError, match="size must be one of small, base, large, got 'huge'"):
        paper_variants("huge")


def test_the_committed_plan_is_one_scanned_run_of_every_row():
    """figures/plan.json (PLAN.md's data) plans every row, all with layers scanned; the rows
    planned unrolled before are kept beside them, and no scanned row needs more devices."""
    rows = json.loads(PLAN.read_text())["rows"]
    assert set(rows) == {r.name for r in PAPER_VARIANTS}
    assert all(res["best"]["scan_layers"] is True for res in rows.values())
    assert all("unrolled" in res for res in rows.values())
    assert all(res["best"]["devices"] <= res["unrolled"]["devices"] for res in rows.values())
