"""``lshsim theory`` and ``lshsim simulate`` with ``--family ngram --ngram N --heads H``."""

from __future__ import annotations

import json
import math

import pytest

from lshsim import theory
from lshsim.cli.main import main


def _json(argv, capsys) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_theory_prints_the_exact_law(capsys):
    """theory --json: probability, q, the heads' law on the primes >= m, the f^N bounds."""
    out = _json(
        "theory --family ngram --ngram 2 --heads 3 --buckets 3 --overlap 0.5 --length 16 "
        "--json".split(),
        capsys,
    )
    assert out["moduli"] == [3, 5, 7] and out["heads"] == 3 and out["windows"] == 15
    assert out["probability"] == theory.ngram_probability(2, 3, 0.5, 16, heads=3)
    assert out["shared_probability"] == pytest.approx(8 * 7 / (16 * 15), rel=1e-15)
    assert out["heads_law"][-1] == pytest.approx(out["probability"], abs=1e-15)
    assert sum(out["heads_law"]) == pytest.approx(1.0, abs=1e-15)
    lo, hi = out["limit_bounds"]
    assert lo <= out["f_power"] - out["shared_probability"] <= hi


def test_simulate_matches_theory(capsys):
    """simulate --family ngram (3 heads, fixed seed) lands within 4.5 pair-level standard
    errors of the exact all-heads rate, and counts l - N + 1 windows per pair."""
    argv = "simulate --family ngram --ngram 2 --heads 3 --buckets 3 --overlap 0.5 --length 16"
    out = _json([*argv.split(), "--samples", "6000", "--seed", "3", "--json"], capsys)
    exact = theory.ngram_probability(2, 3, 0.5, 16, heads=3)
    assert out["samples"] == 6000 * 15 and out["params"] == {"ngram": 2, "heads": 3}
    assert abs(out["estimate"] - exact) <= 4.5 * math.sqrt(exact * (1 - exact) / 6000)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        ("simulate --family ngram --buckets 7 --overlap 0.5 --ngram 40", "ngram (N)"),
        ("theory --family ngram --buckets 7 --overlap 0.5 --ngram 40", "ngram (N)"),
        ("theory --family ngram --buckets 7 --overlap 0.5 --ngram 0", "ngram (N)"),
        ("simulate --family ngram --buckets 7 --overlap 0.5 --heads 0", "heads (H)"),
        ("theory --family ngram --buckets 7 --overlap 0.5 --heads 65", "heads (H)"),
        ("simulate --family tokenid --buckets 7 --overlap 0.5 --heads 2", "--heads applies"),
        ("theory --family voronoi --buckets 7 --cosine 0.5 --ngram 2", "--ngram applies"),
        ("theory --family ngram --buckets 7 --cosine 0.5", "cosine is not defined"),
        ("simulate --family ngram --buckets 3000000000 --overlap 0.5", "n (buckets)"),
        ("simulate --family ngram --buckets 7 --overlap 0.5 --vocab 5000000000", "vocab (V)"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, match, capsys):
    """Bad --ngram / --heads / buckets / vocab: exit 2, one line naming the parameter."""
    assert main(argv.split()) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1 and "Traceback" not in err
