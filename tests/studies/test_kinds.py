"""The kinds of reproducibility: every study tags its numbers, and the rules match real paths."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from lshsim.studies import STUDIES
from lshsim.studies.base import registry
from lshsim.studies.compare import _numbers
from lshsim.studies.kinds import KINDS, check_kinds, compile_rules, kind_of, rules

COMMITTED = Path(__file__).resolve().parents[2] / "figures" / "results.json"


@pytest.fixture(scope="module")
def committed():
    """Path -> value of every number of the committed results.json, and the compiled rules."""
    doc = json.loads(COMMITTED.read_text())
    return _numbers(doc), compile_rules(rules(STUDIES.values()))


def test_every_rule_covers_numbers_of_the_committed_run(committed):
    """No dead rule (a typo would silently leave numbers to the study's default kind)."""
    numbers, compiled = committed
    used = {kind_of(path, compiled)[0] for path in numbers if kind_of(path, compiled)}
    assert used == set(rules(STUDIES.values())), set(rules(STUDIES.values())) - used


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("studies/collision_vs_n/panels/crosspolytope/mc/0.9/estimate/4", "monte_carlo"),
        ("studies/collision_vs_n/panels/voronoi/exact/0.5/p/9", "exact"),
        ("studies/collision_vs_n/panels/voronoi/rate/0.5/p/9", "exact"),
        ("studies/sentence_cosine/rows/3/mc_mean", "monte_carlo"),
        ("studies/sentence_cosine/rows/3/theory_sd", "exact"),
        ("studies/tokenid_vs_minhash/minhash/estimate/2", "monte_carlo"),
        ("studies/tokenid_vs_minhash/jaccard/7", "exact"),
        ("studies/routing_trained/lookups/softmax/loss_after", "platform"),
        ("studies/routing_trained/lookups/softmax/buckets", "exact"),
        ("studies/routing_init/lookups/lsh/rows/0/measured", "platform"),
        ("studies/theorem2_width/rows/0/heldout_nmse", "platform"),
        ("studies/theorem2_width/params/4/A/total", "exact"),
        ("claims/1/evidence/d=3,n=16,a=0.6/estimate", "monte_carlo"),
        ("config/mc_samples", "exact"),
    ],
)
def test_numbers_get_the_kind_of_what_computed_them(committed, path, kind):
    numbers, compiled = committed
    key = tuple(path.split("/"))
    assert key in numbers
    assert kind_of(key, compiled)[1] == kind


def test_the_most_specific_rule_wins():
    compiled = compile_rules(
        {"": "exact", "a/*/c": "platform", "a/b/c": "monte_carlo", "a": "exact"}
    )
    assert kind_of(("a", "b", "c", "0"), compiled) == ("a/b/c", "monte_carlo")
    assert kind_of(("a", "x", "c"), compiled) == ("a/*/c", "platform")
    assert kind_of(("a", "x"), compiled) == ("a", "exact")
    assert kind_of(("z",), compiled) == ("", "exact")
    assert kind_of(("z",), compile_rules({"a": "exact"})) is None


def test_kinds_are_required_and_known():
    with pytest.raises(ValueError, match="declares no kinds"):
        check_kinds("x", None)
    with pytest.raises(ValueError, match="choose one of exact, monte_carlo, platform"):
        check_kinds("x", {"": "random"})
    study = next(iter(STUDIES.values()))
    with pytest.raises(ValueError, match="declares no kinds"):
        registry([replace(study, kinds=None)])
    with pytest.raises(ValueError, match="unknown kind"):
        compile_rules({"a": "fuzzy"})
    assert set(KINDS) == {"exact", "monte_carlo", "platform"}
