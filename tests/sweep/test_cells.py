"""Cells: keys and seeds from the coordinates alone, checks, and a row equal to the CLI's."""

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from lshsim.cli.main import main
from lshsim.sweep import cell_key, cell_seed, enumerate_cells, parse_spec, run_cell

MC = {
    "command": "simulate",
    "family": ["simhash", "voronoi"],
    "buckets": [4, 16],
    "cosine": [0.3, 0.9],
    "mode": ["reduced"],
    "samples": [300],
}


def _cells(*grids, seed=0):
    return enumerate_cells(parse_spec({"seed": seed, "grids": list(grids)}))


def test_key_is_canonical_and_defaults_are_filled():
    (a,) = _cells({"command": "simulate", "family": "simhash", "buckets": 4, "cosine": 1})
    (b,) = _cells(
        {
            "mode": "reduced",
            "cosine": [1.0],
            "buckets": 4,
            "family": "simhash",
            "command": "simulate",
        }
    )
    assert a.key == b.key and a.seed == b.seed
    assert a.options == {  # the default mode, auto, is stored as what it resolves to
        "family": "simhash",
        "buckets": 4,
        "cosine": 1.0,
        "samples": 10000,
        "mode": "reduced",
    }
    assert json.loads(a.key) == {"command": "simulate", **a.options}


def test_seed_depends_on_the_sweep_seed_and_coordinates_not_the_position():
    cells = _cells(MC)
    moved = _cells({"command": "theory", "family": "simhash", "buckets": 2, "cosine": 0.1}, MC)
    assert {c.key: c.seed for c in cells} == {c.key: c.seed for c in moved[1:]}
    assert len({c.seed for c in cells}) == len(cells)
    assert {c.seed for c in _cells(MC, seed=1)}.isdisjoint(c.seed for c in cells)
    # the rule as documented, from its parts
    words = np.frombuffer(__import__("hashlib").sha256(cells[0].key.encode()).digest(), "<u4")
    expect = np.random.SeedSequence([0, *map(int, words)]).generate_state(1, np.uint64)[0]
    assert cells[0].seed == int(expect) == cell_seed(0, cells[0].key)


def test_seed_is_the_same_in_another_process():
    """Not Python's per-process hash(): a fresh interpreter with another hash seed agrees."""
    key = cell_key("simulate", {"family": "voronoi", "buckets": 64, "cosine": 0.5})
    code = f"from lshsim.sweep import cell_seed; print(cell_seed(3, {key!r}))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert int(out.stdout) == cell_seed(3, key)


def test_a_cell_listed_twice_runs_once():
    cells = _cells(MC, {**MC, "family": ["voronoi", "crosspolytope"]})
    assert len(cells) == 12 and len({c.key for c in cells}) == 12
    assert [c.grid for c in cells].count(1) == 4


def test_shuffled_cells_give_the_same_rows():
    cells = _cells(MC)
    rows = {c.key: run_cell(c) for c in cells}
    shuffled = cells[:]
    random.Random(4).shuffle(shuffled)
    again = {c.key: run_cell(c) for c in shuffled}
    for key, row in rows.items():
        assert {**row, "seconds": 0} == {**again[key], "seconds": 0}
    assert len({r["estimate"] for r in rows.values()}) > 1


def test_row_is_what_the_cli_prints_with_the_cells_seed(capsys):
    """``lshsim simulate`` with a row's options and seed gives the row's numbers."""
    (cell,) = _cells({**MC, "family": ["voronoi"], "buckets": [16], "cosine": [0.9]})
    row = run_cell(cell)
    argv = "simulate --family voronoi --buckets 16 --cosine 0.9 --mode reduced --samples 300"
    assert main([*argv.split(), "--seed", str(row["seed"]), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    keys = ("estimate", "ci_low", "ci_high", "successes", "samples", "pairs", "effective_trials")
    assert [cli[k] for k in keys] == [row[k] for k in (*keys[:4], "trials", *keys[5:])]
    assert row["ci_low"] <= row["exact"] <= row["ci_high"]  # exact theory beside it


def test_theory_cells():
    rows = [
        run_cell(c)
        for c in _cells(
            {"command": "theory", "family": ["voronoi"], "buckets": [16], "cosine": [0.5]},
            {"command": "theory", "family": ["minhash", "simhash"], "buckets": [8]}
            | {"overlap": [0.5], "length": [8], "cosines": [64]},
        )
    ]
    assert rows[0]["estimate"] is None and 0 < rows[0]["exact"] < 1
    assert rows[1]["exact"] == pytest.approx(4 / 12 + (8 / 12) / 8)  # J + (1 - J) / n, J = s/(2l-s)
    simhash = rows[2]  # the sentence-model average: an estimate with an interval
    assert simhash["exact"] is None
    assert simhash["ci_low"] < simhash["estimate"] < simhash["ci_high"]


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"family": "voronoi", "rotation": "hadamard"}, "option(s) rotation do not apply to"),
        ({"family": "voronoi", "width": 2.0}, "option(s) width do not apply to family"),
        ({"family": "simhash", "buckets": 6}, "must be a power of two"),
        ({"samples": 0}, "samples must be an integer >= 1"),
        ({"cosine": 1.5}, "cosine must be in [-1, 1]"),
        ({"family": "minhash"}, "cosine is not defined for family 'minhash'"),
        ({"command": "theory", "family": "crosspolytope", "rotation": "hadamard"}, "gaussian"),
        ({"command": "theory", "family": "tokenid"}, "cosine is not defined for family"),
    ],
)
def test_a_cell_the_library_refuses_is_named(grid, message):
    base = {"command": "simulate", "family": "simhash", "buckets": 4, "cosine": 0.5}
    if grid.get("command") == "theory":
        base = {**base, "command": "theory"}
    with pytest.raises(ValueError) as err:
        _cells({**base, **grid})
    text = str(err.value)
    assert text.startswith("grids[0] cell {") and message in text and "\n" not in text


def test_reproduce_monte_carlo_cells_are_sweep_cells():
    """The same cell gives the same number in a study of ``lshsim reproduce`` and in a sweep."""
    from lshsim.studies.collision import CollisionConfig, collision_vs_n
    from lshsim.studies.sentences import TokenConfig, tokenid_vs_minhash

    cfg = CollisionConfig(overlaps=(0.5,), mc_log2n=(2,), mc_samples=50, exact_log2n=(2,))
    study = collision_vs_n(cfg, 5)["panels"]["voronoi"]["mc"]["0.5"]
    grid = {"command": "simulate", "family": "voronoi", "buckets": 4, "cosine": 0.5}
    (row,) = [run_cell(c) for c in _cells({**grid, "mode": "reduced", "samples": 50}, seed=5)]
    assert [study[k][0] for k in ("estimate", "ci_low", "ci_high")] == [
        row[k] for k in ("estimate", "ci_low", "ci_high")
    ]
    tokens = tokenid_vs_minhash(TokenConfig(token_f=(0.25,), token_pairs=20), 5)["minhash"]
    grid = {"command": "simulate", "family": "minhash", "buckets": 2**40, "overlap": 0.25}
    (row,) = [run_cell(c) for c in _cells({**grid, "length": 40, "samples": 20}, seed=5)]
    assert tokens["estimate"] == [row["estimate"]]
