"""``--mode auto``: reduced mode wherever the family has it, the same numbers as asking for it.

The rule is :func:`lshsim.estimation.inputs.resolve_mode`; ``simulate`` defaults to it, a sweep
stores the resolved mode in each cell's key, and a sweep folder of the older format (whose
keys name the old default, ``full``) is refused on ``--resume``.
"""

from __future__ import annotations

import json

import pytest

from lshsim.cli.main import main
from lshsim.estimation.inputs import resolve_mode
from lshsim.sweep.cells import enumerate_cells
from lshsim.sweep.spec import parse_spec
from lshsim.sweep.store import META, open_store


@pytest.mark.parametrize(
    ("family", "params", "want"),
    [
        ("voronoi", {}, "reduced"),
        ("simhash", {}, "reduced"),
        ("crosspolytope", {"rotation": "gaussian"}, "reduced"),
        ("crosspolytope", {"rotation": "hadamard"}, "full"),  # no reduced sampler
        ("minhash", {}, "full"),  # token sets: no vector statistics
        ("tokenid", {}, "full"),
    ],
)
def test_auto_resolves_to_reduced_where_the_family_has_it(family, params, want):
    assert resolve_mode(family, 16, params, "auto") == want
    assert resolve_mode(family, 16, params, "full") == "full"  # an explicit mode is kept


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode must be one of auto, full, reduced"):
        resolve_mode("voronoi", 16, {}, "fast")


def _simulate(capsys, *extra: str) -> dict:
    argv = "simulate --family voronoi --buckets 64 --cosine 0.7 --samples 3000 --seed 4 --json"
    assert main([*argv.split(), *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    out.pop("seconds")
    return out


def test_simulate_defaults_to_auto_and_gives_reduced_modes_numbers(capsys):
    """The default runs reduced mode (the JSON says so) with --mode reduced's numbers; with
    --dim at a cosine it runs the d-dimensional vectors asked for, as --mode full does."""
    auto = _simulate(capsys)
    assert auto["mode"] == "reduced" and auto == _simulate(capsys, "--mode", "reduced")
    full = _simulate(capsys, "--dim", "8")
    assert full["mode"] == "full" and full == _simulate(capsys, "--dim", "8", "--mode", "full")


def test_a_sweep_key_holds_the_resolved_mode():
    grid = {"command": "simulate", "buckets": 8, "cosine": 0.5, "samples": 10}
    spec = parse_spec({"grids": [{**grid, "family": ["voronoi", "crosspolytope"]}]})
    modes = [json.loads(c.key)["mode"] for c in enumerate_cells(spec)]
    assert modes == ["reduced", "reduced"]
    spec = parse_spec({"grids": [{**grid, "family": "crosspolytope", "rotation": "hadamard"}]})
    assert [json.loads(c.key)["mode"] for c in enumerate_cells(spec)] == ["full"]


def test_resuming_a_sweep_of_the_older_format_is_refused(tmp_path):
    spec = parse_spec(
        {"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "cosine": 0.5}]}
    )
    store = open_store(tmp_path / "run", spec, resume=False)
    store.begin(1)
    store.unlock()
    meta = json.loads((tmp_path / "run" / META).read_text())
    (tmp_path / "run" / META).write_text(json.dumps({**meta, "format": 2}))
    with pytest.raises(ValueError, match="default became auto"):
        open_store(tmp_path / "run", spec, resume=True)
    (tmp_path / "run" / META).write_text(json.dumps(meta))
    open_store(tmp_path / "run", spec, resume=True).unlock()  # the current format resumes
