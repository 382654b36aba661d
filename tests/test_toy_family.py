"""A family from outside the package works everywhere, with no edit inside ``lshsim/``.

``tests/plugins/toy_family.py`` defines ``toycoin`` (``P = 1/n`` for distinct inputs) and
``toylawless`` (the same kernel, no law). In process they arrive by
:func:`lshsim.register_family`; on Dask workers through the entry-point group
``lshsim.families`` (a ``.dist-info`` written into a folder on ``PYTHONPATH``, which every
process, each worker too, loads when it imports :mod:`lshsim.hashing`). Also checked here: every
law a caller asks of a family that lacks it is one clear error (:class:`lshsim.hashing.NoLaw`).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import find

import lshsim
from lshsim import theory
from lshsim.cli.main import main
from lshsim.hashing import FAMILIES, NoLaw, unregister_family
from lshsim.sweep import parse_spec
from lshsim.sweep.execute import run_sweep
from lshsim.sweep.store import read_table
from lshsim.theorems import strategies
from tests.plugins.toy_family import Lawless, ToyCoin

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def toy():
    """Register both toy families for one test, then remove them."""
    lshsim.register_family(ToyCoin)
    lshsim.register_family(Lawless)
    yield ToyCoin
    unregister_family(ToyCoin.name)
    unregister_family(Lawless.name)


def _json(argv, capsys) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_listed_by_lshsim_families(toy, capsys):
    rows = {r["name"]: r for r in _json(["families", "--json"], capsys)["families"]}
    assert rows["toycoin"]["parameters"] == ["salt_bits"]
    assert rows["toycoin"]["laws"] == [
        "log_probability",
        "overlap_law",
        "limit_rho",
        "amplification_law",
    ]
    assert rows["toylawless"]["laws"] == []
    assert main(["families"]) == 0
    assert "toycoin" in capsys.readouterr().out


def test_simulate_estimates_its_law(toy, capsys):
    for mode in ("full", "reduced"):
        argv = ["simulate", "--family", "toycoin", "--buckets", "8", "--cosine", "0.5"]
        out = _json(
            [*argv, "--samples", "4000", "--mode", mode, "--salt-bits", "32", "--json"], capsys
        )
        assert out["params"] == {"salt_bits": 32}
        sigma = math.sqrt(0.125 * 0.875 / 4000)
        assert abs(out["estimate"] - 0.125) < 4 * sigma, (mode, out["estimate"])


def test_its_option_belongs_to_it(toy, capsys):
    argv = ["simulate", "--family", "simhash", "--buckets", "8", "--cosine", "0.5"]
    assert main([*argv, "--salt-bits", "3"]) == 2
    assert "--salt-bits applies to toycoin and toylawless, not 'simhash'" in capsys.readouterr().err


def test_theory_gives_its_law(toy, capsys):
    out = _json(
        ["theory", "--family", "toycoin", "--buckets", "8", "--cosine", "0.5", "--json"], capsys
    )
    assert out["probability"] == pytest.approx(0.125, rel=1e-15)
    assert out["rho"] == pytest.approx(1.0) and out["limit_rho"] == 1.0
    argv = ["theory", "--family", "toycoin", "--buckets", "8", "--overlap", "0.5", "--json"]
    assert _json(argv, capsys)["probability"] == pytest.approx(0.125, rel=1e-12)


def test_sweep_in_process_reports_its_exact_value(toy, tmp_path):
    spec = parse_spec(
        {
            "seed": 1,
            "grids": [
                {
                    "command": "simulate",
                    "family": "toycoin",
                    "buckets": [4, 16],
                    "cosine": 0.3,
                    "samples": 500,
                    "mode": "reduced",
                },
                {"command": "theory", "family": "toycoin", "buckets": [4, 16], "cosine": 0.3},
            ],
        }
    )
    run_sweep(spec, tmp_path / "s", workers=0)
    rows = read_table(tmp_path / "s").to_pylist()
    assert len(rows) == 4
    for r in rows:
        assert r["exact"] == pytest.approx(1 / r["buckets"], rel=1e-15)


def test_strategies_draw_it(toy):
    _, n, params = find(strategies.family_configs(), lambda c: c[0] == "toycoin")
    ToyCoin.check_params(n, **params)
    assert find(strategies.family_params("toycoin"), lambda p: "salt_bits" in p)["salt_bits"] == 1


@pytest.mark.parametrize(
    ("call", "law"),
    [
        (lambda: theory.probability("toylawless", 8, 0.5), "collision probability at a cosine"),
        (lambda: theory.probabilities("toylawless", 8, [0.5]), "at a cosine"),
        (lambda: theory.log_probability("toylawless", 8, 0.5), "at a cosine"),
        (lambda: theory.rho("toylawless", 8, 0.5), "at a cosine"),
        (lambda: theory.rho_lsh("toylawless", 8, 0.5), "at a cosine"),
        (lambda: theory.limit_rho("toylawless", 0.5), "limit exponent"),
        (lambda: theory.asymptotic_probability("toylawless", 8, 0.5), "large-n form"),
        (lambda: theory.collision_probability("toylawless", 8, overlap=0.5), "sentence model"),
        (lambda: theory.topk_overlap("toylawless", 8, 2, 0.5), "top-k overlap"),
        (lambda: theory.hash_cost("toylawless", 8), "cost in inner products"),
        (lambda: theory.productkey_probability(8, 0.5), "perfect square"),
        (lambda: theory.limit_rho("minhash", 0.5), "limit exponent"),
        (lambda: theory.probability("productkey", 16, 0.5), "two halves"),
        (lambda: theory.topk_overlap("simhash", 8, 2, 0.5), "top-k overlap"),
    ],
)
def test_every_missing_law_is_one_clear_error(toy, call, law):
    with pytest.raises(ValueError, match=law) as err:
        call()
    assert "\n" not in str(err.value)
    if "square" not in law:
        assert isinstance(err.value, NoLaw)


@pytest.mark.parametrize(
    "argv",
    [
        "theory --family toylawless --buckets 8 --cosine 0.5",
        "theory --family toylawless --buckets 8 --overlap 0.5",
        "theory --family voronoi --buckets 8 --cosine 0.5 --topk 2 --rotation hadamard",
    ],
)
def test_the_cli_turns_a_missing_law_into_exit_2(toy, argv, capsys):
    assert main(argv.split()) == 2
    err = capsys.readouterr().err
    assert err.startswith("lshsim: error:") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("where", "match"),
    [
        ({"cosine": 0.5}, "cosine is not defined for family 'toylawless'"),
        ({"overlap": 0.5}, r"toylawless.*no exact law for the collision probability on the sen"),
    ],
)
def test_a_sweep_cell_without_a_law_is_refused_before_running(toy, tmp_path, where, match):
    spec = {"grids": [{"command": "theory", "family": "toylawless", "buckets": 8, **where}]}
    with pytest.raises(ValueError, match=match):
        run_sweep(parse_spec(spec), tmp_path / "s", workers=0)


def test_dask_workers_load_it_through_the_entry_point(tmp_path):
    """A sweep of toycoin cells on a 1-worker LocalCluster, the family known by entry point."""
    assert "toycoin" not in FAMILIES
    site = tmp_path / "site"
    dist = site / "lshsim_toy-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lshsim-toy\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[lshsim.families]\ntoycoin = tests.plugins.toy_family:ToyCoin\n"
    )
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "seed": 2,
                "grids": [
                    {
                        "command": "simulate",
                        "family": "toycoin",
                        "buckets": [4, 8],
                        "cosine": 0.2,
                        "samples": 300,
                        "mode": "reduced",
                    },
                    {"command": "theory", "family": "toycoin", "buckets": [4, 8], "cosine": 0.2},
                ],
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    cmd = [
        sys.executable,
        "-m",
        "lshsim",
        "sweep",
        str(spec),
        "--out",
        str(tmp_path / "s"),
        "--workers",
        "1",
    ]
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = pq.read_table(tmp_path / "s").to_pylist()
    assert len(rows) == 4 and all(r["exact"] == pytest.approx(1 / r["buckets"]) for r in rows)


def test_tuned_through_its_family_object(toy, capsys):
    """``lshsim tune`` takes the plugin's law; the lawless one is refused in one line."""
    argv = ["tune", "--family", "toycoin", "--buckets", "4", "--near", "1", "--far", "0.5"]
    data = _json([*argv, "--recall", "0.99", "--false-positive", "0.01", "--json"], capsys)
    best = data["best"]
    assert best["recall"] == 1.0
    assert best["false_positive"] == pytest.approx(1 - (1 - 0.25 ** best["k"]) ** best["L"])
    assert best["false_positive"] <= 0.01 and best["k"] >= 4
    bad = ["tune", "--family", "toylawless", "--buckets", "4", "--threshold", "0.5"]
    assert main(bad) == 2
    err = capsys.readouterr().err.strip()
    assert "toylawless" in err and "\n" not in err
