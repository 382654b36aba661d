"""SPEC parsing: TOML and JSON, options read from the CLI parsers, and every bad input."""

import json

import pytest

from lshsim.cli.main import main
from lshsim.hashing import FAMILIES
from lshsim.sweep import load_spec, parse_spec
from lshsim.sweep.spec import NOT_AXES, SENTENCE_ONLY, commands

TOML = """
seed = 7
[[grids]]
command = "simulate"
family = ["voronoi", "simhash"]
buckets = [4, 16]
cosine = [0.5, 1]
mode = "reduced"
samples = [100]
[[grids]]
command = "theory"
family = ["minhash"]
buckets = [8]
overlap = [0.25]
length = [8]
"""


def test_toml_and_json_give_the_same_canonical_spec(tmp_path):
    (tmp_path / "s.toml").write_text(TOML)
    a = load_spec(tmp_path / "s.toml")
    raw = {
        "seed": 7,
        "grids": [
            {
                "samples": [100.0],  # an integral float is the int
                "command": "simulate",
                "cosine": [0.5, 1.0],
                "family": ["voronoi", "simhash"],
                "buckets": [4, 16],
                "mode": ["reduced"],
            },
            {"command": "theory", "family": ["minhash"], "buckets": [8], "overlap": [0.25]}
            | {"length": [8]},
        ],
    }
    (tmp_path / "s.json").write_text(json.dumps(raw))
    b = load_spec(tmp_path / "s.json")
    assert a == b and a.sha256() == b.sha256()
    grid = a.canonical()["grids"][0]
    assert grid["cosine"] == [0.5, 1.0] and isinstance(grid["cosine"][1], float)
    assert grid["mode"] == ["reduced"]  # a scalar is a one-value axis
    assert list(grid) == ["command", "family", "buckets", "cosine", "samples", "mode"]
    assert parse_spec({**raw, "seed": 8}).sha256() != a.sha256()


def test_options_are_read_from_the_cli_parsers():
    sim, th = commands()["simulate"], commands()["theory"]
    assert sim.options["family"].choices == tuple(FAMILIES)
    assert sim.options["family"].required and sim.options["buckets"].kind == "int"
    assert sim.options["cosine"].kind == "float" and sim.options["mode"].default == "auto"
    assert ("overlap", "cosine") in sim.one_of and ("overlap", "cosine") in th.one_of
    assert "samples" in sim.options and "samples" not in th.options
    assert "cosines" in th.options and not set(NOT_AXES) & (set(sim.options) | set(th.options))


@pytest.mark.parametrize(
    ("command", "option"), [(c, o) for c in SENTENCE_ONLY for o in SENTENCE_ONLY[c]]
)
def test_sentence_only_options_match_the_cli(command, option, capsys):
    """The options the sweep refuses with cosine are the ones the CLI refuses with --cosine."""
    value = "4" if option != "vocab" else "100"
    argv = [command, "--family", "simhash", "--buckets", "4", "--cosine", "0.5"]
    assert main([*argv, f"--{option}", value]) == 2
    assert f"--{option} has no effect with --cosine" in capsys.readouterr().err
    grid = {"command": command, "family": "simhash", "buckets": 4, "cosine": 0.5, option: 4}
    with pytest.raises(ValueError, match=f"option '{option}' has no effect with cosine"):
        parse_spec({"grids": [grid]})


GOOD = {"command": "simulate", "family": ["simhash"], "buckets": [4], "cosine": [0.5]}

BAD = [
    ([], "SPEC: expected a table"),
    ({"grids": [GOOD], "sed": 1}, "SPEC: unknown key 'sed'"),
    ({"grids": []}, "'grids' must be a non-empty list"),
    ({"seed": -1, "grids": [GOOD]}, "SPEC seed must be an integer >= 0"),
    ({"seed": "1", "grids": [GOOD]}, "SPEC seed must be an integer"),
    (
        {"grids": [{**GOOD, "command": "train"}]},
        "grids[0]: command must be one of",
    ),
    ({"grids": [{**GOOD, "family": ["lsh"]}]}, "family must be one of simhash"),
    ({"grids": [{**GOOD, "colour": [1]}]}, "unknown option 'colour'; options: family"),
    ({"grids": [{**GOOD, "cosines": [64]}]}, "(simulate): unknown option 'cosines'"),
    (
        {"grids": [{**GOOD, "command": "theory", "samples": [9]}]},
        "(theory): unknown option 'samples'",
    ),
    ({"grids": [{**GOOD, "seed": [1, 2]}]}, "'seed' is not a sweep option"),
    ({"grids": [{**GOOD, "threads": [2]}]}, "'threads' is not a sweep option"),
    ({"grids": [{**GOOD, "buckets": ["4"]}]}, "buckets must be a number, got '4'"),
    ({"grids": [{**GOOD, "buckets": [4.5]}]}, "buckets must be an integer, got 4.5"),
    ({"grids": [{**GOOD, "buckets": [True]}]}, "buckets must be a number, got True"),
    ({"grids": [{**GOOD, "cosine": [None]}]}, "cosine must be a number, got None"),
    ({"grids": [{**GOOD, "cosine": [float("nan")]}]}, "cosine must be a finite number"),
    ({"grids": [{**GOOD, "mode": [1]}]}, "mode must be text, got 1"),
    ({"grids": [{**GOOD, "mode": ["fast"]}]}, "mode must be one of auto, full, reduced"),
    ({"grids": [{**GOOD, "buckets": []}]}, "grids[0] (simulate): buckets: empty axis"),
    ({"grids": [{**GOOD, "buckets": [4, 4]}]}, "buckets: repeated value"),
    ({"grids": [{k: v for k, v in GOOD.items() if k != "family"}]}, "option 'family' is required"),
    ({"grids": [{**GOOD, "overlap": [0.5]}]}, "give exactly one of overlap, cosine, got"),
    ({"grids": [{k: v for k, v in GOOD.items() if k != "cosine"}]}, "got neither"),
    ({"grids": [GOOD, "simhash"]}, "grids[1]: expected a table of options"),
]


@pytest.mark.parametrize(("raw", "message"), BAD)
def test_bad_spec_is_one_line_naming_the_problem(raw, message):
    with pytest.raises(ValueError) as err:
        parse_spec(raw)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("s.yaml", "seed: 1", "must end in .toml or .json"),
        ("s.json", "{", "is not valid JSON"),
        ("s.toml", "grids = [", "is not valid TOML"),
        ("missing.toml", None, "cannot read"),
    ],
)
def test_bad_spec_file(tmp_path, name, text, message):
    if text is not None:
        (tmp_path / name).write_text(text)
    with pytest.raises(ValueError, match=message):
        load_spec(tmp_path / name)
