"""``lshsim compare``: each number is held to the promise of its kind, read from the files.

Small synthetic ``results.json`` pairs give each verdict (exact within and beyond 1e-9,
Monte Carlo with the same and with different versions, platform differences, a missing
number, the kinds read from the file); the CLI's side is in ``tests/cli/test_compare.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lshsim.studies.compare import compare, table
from lshsim.studies.kinds import compile_rules, kind_of

STACK = {"python": "3.11.7", "numpy": "2.4.6", "scipy": "1.17.1", "numba": "0.68.1"}
VERSIONS = {**STACK, "llvmlite": "0.50.0", "platform": "Linux-x86_64", "cpu": "AMD EPYC"}
KINDS = {
    "config": "exact",
    "claims": "monte_carlo",
    "holds": "monte_carlo",
    "studies/s": "exact",
    "studies/s/mc": "monte_carlo",
    "studies/s/model": "platform",
}


def _doc() -> dict:
    return {
        "lshsim": "0.1.0",
        "config": {"name": "quick", "n": [2, 4]},
        "seed": 0,
        "studies": {
            "s": {
                "exact": [0.5, 0.25],
                "label": "simhash",
                "mc": {"estimate": [0.3, 0.1]},
                "model": {"loss": 4.868, "rows": [1, 2]},
            }
        },
        "claims": [{"id": "T", "holds": True, "evidence": {"estimate": 0.29}}],
        "holds": True,
        "versions": dict(VERSIONS),
        "kinds": dict(KINDS),
    }


def _write(tmp_path: Path, name: str, doc: dict) -> str:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(doc))
    return str(folder / "results.json")


def _pair(tmp_path, change):
    """Paths of the base document and of a copy that ``change`` edits in place."""
    b = _doc()
    change(b)
    return _write(tmp_path, "a", _doc()), _write(tmp_path, "b", b)


def _row(result, pattern):
    return next(q for q in result.quantities if q.pattern == pattern)


def test_identical_runs_hold(tmp_path):
    a, b = _pair(tmp_path, lambda d: None)
    result = compare(a, b)
    assert not result.broken and {q.verdict for q in result.quantities} == {"holds"}
    assert result.kinds_from == "recorded in A"
    assert {q.pattern: q.kind for q in result.quantities} == KINDS | {"studies/s": "exact"}


@pytest.mark.parametrize(("rel", "broken"), [(3e-10, False), (3e-9, True), (1e-6, True)])
def test_exact_agrees_to_1e_9_relative(tmp_path, rel, broken):
    a, b = _pair(tmp_path, lambda d: d["studies"]["s"]["exact"].__setitem__(1, 0.25 * (1 + rel)))
    q = _row(compare(a, b), "studies/s")
    assert q.broken is broken and q.differ == 1
    assert q.max_rel == pytest.approx(rel, rel=1e-3)
    assert q.verdict == ("BROKEN" if broken else "holds (within tolerance)")


def test_exact_string_must_match(tmp_path):
    a, b = _pair(tmp_path, lambda d: d["studies"]["s"].__setitem__("label", "voronoi"))
    q = _row(compare(a, b), "studies/s")
    assert q.broken and q.differences == [
        {"path": "studies/s/label", "a": "simhash", "b": "voronoi"}
    ]


def _move_mc(d):
    d["studies"]["s"]["mc"]["estimate"][0] = 0.3003


def test_monte_carlo_with_the_same_versions_must_be_identical(tmp_path):
    a, b = _pair(tmp_path, _move_mc)
    result = compare(a, b)
    q = _row(result, "studies/s/mc")
    assert q.broken and q.verdict == "BROKEN" and result.stack_differences == []
    assert q.differences[0]["path"] == "studies/s/mc/estimate/0"


@pytest.mark.parametrize("versions", ["numpy", "none"])
def test_monte_carlo_across_versions_is_reported_not_broken(tmp_path, versions):
    def change(d):
        _move_mc(d)
        if versions == "numpy":
            d["versions"]["numpy"] = "2.5.0"
        else:
            del d["versions"]

    a, b = _pair(tmp_path, change)
    result = compare(a, b)
    q = _row(result, "studies/s/mc")
    assert not q.broken and q.verdict == "versions differ" and q.differ == 1
    assert q.max_abs == pytest.approx(3e-4)
    want = "numpy 2.4.6 vs 2.5.0" if versions == "numpy" else "numpy 2.4.6 vs not recorded"
    assert want in result.stack_differences and not result.broken


def test_versions_come_from_the_manifest_beside_an_older_file(tmp_path):
    """A results.json without versions takes those of the run's manifest.json."""
    old = _doc()
    del old["versions"]
    a = _write(tmp_path, "a", old)
    (Path(a).parent / "manifest.json").write_text(json.dumps({"versions": VERSIONS}))
    b_doc = _doc()
    _move_mc(b_doc)
    result = compare(a, _write(tmp_path, "b", b_doc))
    assert result.versions_a == VERSIONS and _row(result, "studies/s/mc").broken


def test_platform_differences_are_reported_with_their_size(tmp_path):
    a, b = _pair(tmp_path, lambda d: d["studies"]["s"]["model"].__setitem__("loss", 4.959))
    result = compare(a, b)
    q = _row(result, "studies/s/model")
    assert not result.broken and q.verdict == "differs (platform)"
    assert q.max_abs == pytest.approx(0.091) and q.max_rel == pytest.approx(0.091 / 4.959)


def test_a_number_in_one_file_only_breaks_its_promise(tmp_path):
    a, b = _pair(tmp_path, lambda d: d["studies"]["s"]["model"]["rows"].pop())
    q = _row(compare(a, b), "studies/s/model")
    assert q.broken and q.missing == 1 and q.differences[0]["note"] == "missing in B"


def test_the_kinds_come_from_the_data(tmp_path):
    """Retagging the estimates as exact in A makes the same difference a broken promise."""

    def change(d):
        _move_mc(d)
        d["versions"]["numpy"] = "2.5.0"

    doc_a = _doc()
    doc_a["kinds"]["studies/s/mc"] = "exact"
    b = _doc()
    change(b)
    result = compare(_write(tmp_path, "a", doc_a), _write(tmp_path, "b", b))
    assert _row(result, "studies/s/mc").kind == "exact" and result.broken


def test_numbers_no_rule_covers_are_held_exact(tmp_path):
    doc_a, doc_b = _doc(), _doc()
    doc_a["extra"], doc_b["extra"] = 1.0, 1.5
    result = compare(_write(tmp_path, "a", doc_a), _write(tmp_path, "b", doc_b))
    q = _row(result, "(unclassified)")
    assert q.kind == "exact" and q.broken


def test_a_nan_against_a_number_is_an_infinite_difference(tmp_path):
    """A NaN where A has a number is as far as can be: max abs inf, beyond any tolerance."""
    a, b = _pair(tmp_path, lambda d: d["studies"]["s"]["exact"].__setitem__(0, float("nan")))
    q = next(q for q in compare(a, b).quantities if q.pattern == "studies/s")
    assert (q.max_abs, q.max_rel, q.beyond, q.verdict) == (math.inf, math.inf, 1, "BROKEN")


def test_a_kinds_pattern_that_matches_nothing_is_reported(tmp_path):
    """A recorded rule that covers no number is listed (its numbers fell to a broader rule)."""

    def stale(d):
        d["kinds"]["studies/s/montecarlo"] = "monte_carlo"

    a, b = _pair(tmp_path, stale)
    assert compare(a, b).idle_rules == []  # A's kinds are the ones read
    c = compare(b, a)
    assert c.idle_rules == ["studies/s/montecarlo"]
    assert "  studies/s/montecarlo" in table(c)


def test_a_key_with_a_slash_is_matched_by_its_pattern():
    """Evidence keys may contain ``/`` ("k = 1 law / exact"); the pattern written with the key
    matches it."""
    compiled = compile_rules({"": "exact", "rate (s/l)": "monte_carlo"})
    assert kind_of(("rate (s/l)", "V=64"), compiled) == ("rate (s/l)", "monte_carlo")
    assert kind_of(("rate (s",), compiled) == ("", "exact")


def test_a_claims_changed_kinds_are_promises_not_numbers(tmp_path):
    """A claim whose declared kinds changed (a fixed stale rule) compares clean: its ``kinds``
    is metadata, like the file's own."""

    def declare(d):
        d["claims"][0]["kinds"] = {"estimate": "monte_carlo"}

    a, b = _pair(tmp_path, declare)
    c = compare(a, b)
    assert not c.broken and all(q.missing == 0 for q in c.quantities)
