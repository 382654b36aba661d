"""The sweep examples the guide and ``lshsim sweep --help`` show run, with their exact values.

A rename once made both exit 2 (the runner compared the cross-polytope's rotation with a
name it no longer had) and no test saw it. Here each documented SPEC is read from the text
the user reads, its Monte-Carlo sample count cut to keep the test cheap, run in process, and
every row's ``exact`` compared with ``lshsim theory``'s value: a cell of a family with a law
at a cosine must have one, the cross-polytope's included.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lshsim import theory
from lshsim.cli.sweep import _EPILOG
from lshsim.sweep import load_spec, parse_spec
from lshsim.sweep.execute import run_sweep
from lshsim.sweep.store import read_table

ROOT = Path(__file__).resolve().parents[2]


def _guide_spec() -> str:
    text = (ROOT / "docs" / "guide" / "sweeps.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    (spec,) = [b for b in blocks if "[[grids]]" in b]
    return spec


def _help_spec() -> str:
    body = _EPILOG.split("example SPEC (sweep.toml):\n", 1)[1].split("\n\n", 1)[0]
    return "\n".join(line[2:] for line in body.splitlines())


@pytest.mark.parametrize("source", [_guide_spec, _help_spec], ids=["guide", "sweep --help"])
def test_documented_sweep_runs_with_exact_values(source, tmp_path):
    (tmp_path / "sweep.toml").write_text(source())
    raw = load_spec(tmp_path / "sweep.toml").canonical()
    for grid in raw["grids"]:
        if "samples" in grid:
            grid["samples"] = [200]
            grid["mode"] = ["reduced"]
    run_sweep(parse_spec(raw), tmp_path / "s", workers=0)
    rows = read_table(tmp_path / "s").to_pylist()
    assert {r["family"] for r in rows} >= {"crosspolytope", "voronoi"}
    for r in rows:
        expected = theory.probability(r["family"], r["buckets"], r["cosine"])
        assert r["exact"] == expected, r
