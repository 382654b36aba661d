"""The study registry: one Study per study, in the committed order, one config per profile."""

from __future__ import annotations

import pytest

from lshsim.studies import PROFILES, STUDIES, Study
from lshsim.studies.base import registry
from lshsim.studies.reproduce import run_config

COMMITTED_ORDER = [
    "collision_vs_n",
    "rho_vs_f",
    "ordering_map",
    "sentence_cosine",
    "tokenid_vs_minhash",
    "routing_init",
    "routing_trained",
    "routing_hf",
    "theorem2_width",
    "amplification",
    "collision_beyond",
    "frequency_collisions",
]


def test_registry_order_and_records():
    """Every study of `lshsim reproduce` is registered once, in the committed run order, with a
    figure function, a caption and a config per profile."""
    assert list(STUDIES) == COMMITTED_ORDER
    for name, study in STUDIES.items():
        assert study.name == name
        assert callable(study.compute) and callable(study.figure)
        assert study.caption.strip()
        assert set(study.configs) == set(PROFILES)


def test_run_config_is_the_flat_record_of_every_study():
    """The recorded run config is the profile name followed by every study's fields, once each."""
    cfg = run_config("quick")
    assert cfg["name"] == "quick"
    assert cfg["overlaps"] == (0.1, 0.5, 0.9) and cfg["width_sweep"] == "quick"
    assert cfg["probe_steps"] == 30 and cfg["rho_f"] == 10
    fields = [k for s in STUDIES.values() for k in vars(s.config("quick"))]
    assert list(cfg) == ["name", *dict.fromkeys(fields)]
    assert run_config("default")["mc_samples"] == 10000


def test_unknown_profile_and_duplicate_names_are_refused():
    study = STUDIES["rho_vs_f"]
    with pytest.raises(ValueError, match="profile"):
        study.config("huge")
    with pytest.raises(ValueError, match="registered twice"):
        registry([study], [study])
    partial = Study("x", study.compute, study.figure, "c", {"quick": study.config("quick")})
    with pytest.raises(ValueError, match="configs"):
        registry([partial])
