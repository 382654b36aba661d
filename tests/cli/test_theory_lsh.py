"""`lshsim theory` as an LSH researcher uses it (rho_lsh, --far, --tables, --concat) and the
cross-polytope's named constructions on the command line."""

from __future__ import annotations

import json
import math

import pytest

from lshsim.cli.main import main


def _json(argv: str, capsys) -> dict:
    assert main(argv.split()) == 0
    return json.loads(capsys.readouterr().out)


def test_theory_reports_rho_lsh_beside_rho(capsys):
    """Voronoi: P(n, 0) = 1/n, so rho_lsh = rho; p-stable (w = 4): they differ by 2.1x."""
    obj = _json("theory --family voronoi --buckets 1024 --cosine 0.5 --json", capsys)
    assert obj["far"] == 0.0 and obj["far_probability"] == pytest.approx(1 / 1024, rel=1e-12)
    assert obj["rho_lsh"] == pytest.approx(obj["rho"], rel=1e-12)
    assert obj["rho_lsh"] == pytest.approx(obj["log_probability"] / -math.log(1024), rel=1e-12)
    obj = _json("theory --family pstable --buckets 1024 --cosine 0.5 --json", capsys)
    assert obj["rho_lsh"] == pytest.approx(
        obj["log_probability"] / math.log(obj["far_probability"]), rel=1e-12
    )
    assert obj["rho_lsh"] / obj["rho"] == pytest.approx(2.1000874, rel=1e-6)
    obj = _json("theory --family simhash --buckets 16 --cosine -0.5 --json", capsys)
    assert obj["rho_lsh"] is None  # no default far cosine below a = -0.5


def test_theory_amplification(capsys):
    """--tables 20 --concat 3 --far 0.2: 1 - (1 - p^3)^20 for both cosines, cost 20 * 3 * n/2."""
    obj = _json(
        "theory --family crosspolytope --buckets 64 --cosine 0.8 --far 0.2 --tables 20 "
        "--concat 3 --json",
        capsys,
    )
    p1, p2 = obj["probability"], obj["far_probability"]
    assert obj["amplified"] == pytest.approx(1 - (1 - p1**3) ** 20, rel=1e-12)
    assert obj["amplified_far"] == pytest.approx(1 - (1 - p2**3) ** 20, rel=1e-12)
    assert obj["rho_lsh"] == pytest.approx(math.log(p1) / math.log(p2), rel=1e-12)
    assert (obj["hash_cost"], obj["query_cost"], obj["tables"], obj["concat"]) == (32, 1920, 20, 3)
    obj = _json("theory --family simhash --buckets 1024 --cosine 0.9 --tables 5 --json", capsys)
    assert obj["concat"] == 1 and obj["query_cost"] == 50 and "amplified_far" not in obj
    assert obj["amplified"] == pytest.approx(1 - (1 - obj["probability"]) ** 5, rel=1e-12)


def test_theory_help_explains_the_exponents_and_the_cost(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["theory", "--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for words in (
        "rho_lsh = ln(1/p1) / ln(1/p2)",
        "P(n, a2) = 1/n",
        "1 - (1 - p1^k)^L",
        "voronoi n",
        "crosspolytope n/2",
        "hadamard 3 D (log2 D + 1) / (2d)",
    ):
        assert words in text, words


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        ("theory --family voronoi --buckets 8 --cosine 0.5 --far 0.7", "far must be in [-1, cos"),
        ("theory --family voronoi --buckets 8 --cosine 0.5 --far -1", "far: P(n, far) = 0"),
        ("theory --family voronoi --buckets 8 --cosine 0.5 --far 3", "far must be in [-1, 1]"),
        ("theory --family voronoi --buckets 8 --cosine 0.5 --tables 0", "tables (L)"),
        ("theory --family voronoi --buckets 8 --cosine 0.5 --concat 0", "concat (k)"),
        ("theory --family voronoi --buckets 8 --overlap 0.5 --far 0.1", "--far needs --cosine"),
        ("theory --family crosspolytope --buckets 8 --cosine 0.5 --rotation orthogonal",
         "rotation='orthogonal'"),
        ("simulate --family crosspolytope --buckets 64 --cosine 0.5 --dim 8 --rotation "
         "orthogonal", "n (buckets) must be <= 2d"),
        ("simulate --family crosspolytope --buckets 8 --cosine 0.5 --rotation "
         "orthogonal --mode reduced", "exact only for rotation='gaussian-projection'"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_exit_2(argv, match, capsys):
    rc = main(argv.split())
    out = capsys.readouterr()
    assert rc == 2 and match in out.err and out.err.count("\n") == 1 and out.out == ""


def test_simulate_orthogonal_and_the_gaussian_alias(capsys):
    """--rotation orthogonal runs in full mode; --rotation gaussian is the gaussian-projection."""
    obj = _json(
        "simulate --family crosspolytope --rotation orthogonal --buckets 4 --dim 2 --cosine 0 "
        "--samples 500 --json",
        capsys,
    )
    assert obj["params"] == {"rotation": "orthogonal"} and obj["estimate"] == 0.0  # d = m = 2
    obj = _json(
        "simulate --family crosspolytope --rotation gaussian --buckets 8 --cosine 0.5 "
        "--samples 100 --json",
        capsys,
    )
    assert obj["params"] == {"rotation": "gaussian-projection"}
