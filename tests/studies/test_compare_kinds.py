"""Kinds value by value, tolerances for conditioning, claims' kinds, dirty trees (issue 32)."""

from __future__ import annotations

import json
import math

import pytest

from lshsim.studies.compare import compare
from lshsim.studies.kinds import EXACT_RTOL, rules, spec, tolerance
from lshsim.studies.report import _run_lines
from lshsim.theorems.claims import CLAIMS
from lshsim.theorems.theorem1.rates import D3_COEF_ATOL

CLAIM_KINDS = {
    "": "exact",
    "*/estimate": "monte_carlo",
    "*/z": {"kind": "monte_carlo", "rtol": 1e-9, "atol": 1e-12},
    "coef": {"kind": "exact", "atol": 1e-4},
}


def _doc(exact=0.16399188535738113, estimate=0.16675, z=0.69297, coef=-2.4851488945346603):
    claim = {
        "id": "X.1",
        "holds": True,
        "evidence": {"p": {"estimate": estimate, "exact": exact, "z": z}, "coef": [coef]},
        "kinds": CLAIM_KINDS,
    }
    return {
        "lshsim": "0",
        "config": {"name": "default"},
        "seed": 0,
        "studies": {},
        "claims": [claim],
        "holds": True,
        "versions": {"python": "3", "numpy": "2", "scipy": "1", "numba": "0", "llvmlite": "0"},
        "kinds": rules((), [claim]),
    }


def _compare(tmp_path, **b) -> dict:
    (tmp_path / "a.json").write_text(json.dumps(_doc()))
    (tmp_path / "b.json").write_text(json.dumps(_doc(**b)))
    res = compare(tmp_path / "a.json", tmp_path / "b.json")
    return {q.pattern: q for q in res.quantities}


def test_spec_and_tolerance():
    """A rule is a kind's name or a spec; the defaults are the kinds' promises."""
    assert spec("exact") == ("exact", EXACT_RTOL, 0.0)
    assert spec("monte_carlo") == ("monte_carlo", 0.0, 0.0)
    assert spec({"kind": "exact", "atol": 1e-4}) == ("exact", EXACT_RTOL, 1e-4)
    assert tolerance({"a": "platform"})["a"] == (math.inf, math.inf)
    for bad in ("random", {"kind": "exact", "atol": -1}, {"rtol": 1.0}):
        with pytest.raises(ValueError, match="kinds"):
            spec(bad)
    assert rules((), [{"kinds": {"": "exact", "x": "monte_carlo"}}])["claims/0/evidence/x"] == (
        "monte_carlo"
    )


def test_a_clean_rerun_holds(tmp_path):
    """Quadrature in the last ulp, a z-score moved by it, a conditioned coefficient: holds."""
    q = _compare(tmp_path, exact=0.16399188535738118, z=0.69297 * (1 + 1e-14),
                 coef=-2.4851488945346603 * (1 + 7e-7))  # fmt: skip
    assert not any(x.broken for x in q.values())
    assert q["claims/0/evidence"].verdict == "holds (within tolerance)"
    assert q["claims/0/evidence/coef"].differ == 1 and q["claims/0/evidence/coef"].beyond == 0


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        ({"estimate": 0.16675 + 1e-12}, "claims/0/evidence/*/estimate"),  # Monte Carlo: identical
        ({"exact": 0.16399188535738113 * (1 + 1e-8)}, "claims/0/evidence"),  # exact: 1e-9
        ({"coef": -2.4851488945346603 + 2e-4}, "claims/0/evidence/coef"),  # beyond its atol
    ],
)
def test_a_broken_rerun_breaks(tmp_path, change, pattern):
    """A Monte-Carlo value that moved, or an exact one beyond its tolerance, is BROKEN."""
    q = _compare(tmp_path, **change)
    assert q[pattern].broken and q[pattern].verdict == "BROKEN"
    assert sum(x.broken for x in q.values()) == 1


def test_every_claim_declares_its_evidence_kinds():
    """Each registered claim says what its evidence promises, in valid specs."""
    for cid, claim in CLAIMS.items():
        assert claim.kinds and "" in claim.kinds, cid
        for value in claim.kinds.values():
            spec(value)
    d3 = CLAIMS["T1.d3"].kinds["*/theta^2 coefficient at theta=1e-3, 1e-4"]
    assert d3["atol"] == D3_COEF_ATOL >= 2 * EXACT_RTOL * 4.1 / 1e-4


def test_report_says_when_the_tree_was_dirty():
    """REPORT.md's run lines name a dirty checkout and its modified files."""
    tree = {"commit": "abc", "dirty": True, "modified": ["lshsim/x.py"]}
    text = "\n".join(_run_lines({"versions": {}, "tree": tree}))
    assert "dirty tree" in text and "abc" in text and "`lshsim/x.py`" in text
    clean = "\n".join(_run_lines({"versions": {}, "tree": {**tree, "dirty": False}}))
    assert "dirty" not in clean


def test_versions_keep_the_commit_the_run_started_from(monkeypatch):
    """A run that writes into a tracked folder dirties the checkout itself: ``versions(tree)``
    records the commit as the run started (``reproduce`` into a fresh clone's figures/ said
    ``+dirty`` before)."""
    from lshsim.studies import manifest

    start = {"commit": "abc", "dirty": False, "modified": []}
    monkeypatch.setattr(manifest, "git_tree", lambda: {**start, "dirty": True})
    assert manifest.versions(start)["lshsim_git"] == "abc"
    assert manifest.versions({**start, "dirty": True})["lshsim_git"] == "abc+dirty"
    assert manifest.versions()["lshsim_git"] == "abc+dirty"  # looked up now
    assert manifest.header("w", seed=0, profile="quick", config={})["tree"]["dirty"] is True
