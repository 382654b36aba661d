"""``lshsim theory``/``simulate`` with ``--topk``, ``--half-cosines`` and product keys."""

from __future__ import annotations

import json
import math

import pytest

from lshsim import theory
from lshsim.cli.main import main


def _json(argv, capsys):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_theory_topk_and_productkey(capsys):
    """overlap = probability = the library's exact value; half-cosines multiply."""
    out = _json(["theory", "--family", "voronoi", "--buckets", "64", "--cosine", "0.5",
                 "--topk", "3", "--json"], capsys)  # fmt: skip
    assert out["overlap"] == out["probability"] == theory.voronoi_topk_overlap(64, 3, 0.5)
    out = _json(["theory", "--family", "productkey", "--buckets", "256", "--half-cosines",
                 "0.4,0.8", "--json"], capsys)  # fmt: skip
    assert out["probability"] == pytest.approx(theory.productkey_probability(256, 0.4, 0.8))
    out = _json(["theory", "--family", "productkey", "--buckets", "256", "--cosine", "0.5",
                 "--topk", "1", "--json"], capsys)  # fmt: skip
    assert out["overlap"] == pytest.approx(theory.productkey_probability(256, 0.5))


def test_productkey_topk_goes_up_to_the_root_of_n(capsys):
    """k <= sqrt(n) for theory and simulate alike (the bound once took the root twice)."""
    out = _json(["theory", "--family", "productkey", "--buckets", "16", "--cosine", "0.5",
                 "--topk", "3", "--json"], capsys)  # fmt: skip
    assert out["topk"] == 3 and 0 < out["overlap"] < 1


def _memoised_law(monkeypatch, cls):
    """Make ``cls.topk_overlap_law`` remember its results by call (positional and keyword
    arguments as given): the test's own call with the arguments the CLI used returns the CLI's
    result instead of computing the 2048-cosine average again (4 s for voronoi); any other
    arguments still compute afresh, so a CLI that passed another n, k, f, dim, length, draws
    or seed still fails the comparison."""
    original, seen = cls.topk_overlap_law, {}

    def law(_cls, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in seen:
            seen[key] = original(*args, **kwargs)
        return seen[key]

    monkeypatch.setattr(cls, "topk_overlap_law", classmethod(law))


@pytest.mark.parametrize(("family", "n", "k"), [("voronoi", 16, 2), ("productkey", 256, 3)])
def test_theory_topk_on_sentences_is_the_law_and_agrees_with_simulate(
    family, n, k, capsys, monkeypatch
):
    """theory --topk --overlap: the family's sentence-model law; simulate's estimate within
    4 standard errors of the two combined."""
    from lshsim.hashing import get_family

    _memoised_law(monkeypatch, get_family(family))
    law = _json(["theory", "--family", family, "-n", str(n), "--topk", str(k), "--overlap",
                 "0.6", "--cosines", "2048", "--seed", "3", "--json"], capsys)  # fmt: skip
    mean, se = get_family(family).topk_overlap_law(n, k, 0.6, dim=64, length=32, draws=2048, seed=3)
    assert (law["overlap"], law["std_error"], law["sentence_overlap"]) == (mean, se, 0.6)
    mc = _json(["simulate", "--family", family, "-n", str(n), "--topk", str(k), "--overlap",
                "0.6", "--samples", "3000", "--json"], capsys)  # fmt: skip
    assert abs(mc["overlap"] - mean) < 4 * math.hypot(mc["std_error"], se), (mc, law)


def test_simulate_topk(capsys):
    """simulate --topk prints the overlap with its interval."""
    out = _json(["simulate", "--family", "productkey", "--buckets", "64", "--cosine", "0.7",
                 "--topk", "2", "--dim", "8", "--samples", "300", "--json"], capsys)  # fmt: skip
    assert out["ci_low"] <= out["overlap"] == out["probability"] <= out["ci_high"]
    assert out["topk"] == 2 and out["pairs"] == 300


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["theory", "--family", "productkey", "--buckets", "1000", "--cosine", "0.5"],
         "n (buckets) must be a perfect square"),
        (["theory", "--family", "voronoi", "--buckets", "8", "--cosine", "0.5", "--topk", "9"],
         "topk (k)"),
        (["theory", "--family", "productkey", "--buckets", "16", "--cosine", "0.5",
          "--topk", "5"], "topk (k) must be an integer in [1, 4]"),  # sqrt(n), not n^(1/4)
        (["simulate", "--family", "productkey", "--buckets", "16", "--cosine", "0.5",
          "--topk", "5"], "topk (k) must be an integer in [1, 4]"),
        (["theory", "--family", "productkey", "--buckets", "64", "--half-cosines", "0.5"],
         "--half-cosines must be two numbers"),
        (["theory", "--family", "productkey", "--buckets", "64", "--half-cosines", "0.5,1.2"],
         "--half-cosines must be in [-1, 1]"),
        (["theory", "--family", "voronoi", "--buckets", "64", "--half-cosines", "0.5,0.5"],
         "--half-cosines applies to productkey"),
        (["theory", "--family", "crosspolytope", "--buckets", "64", "--cosine", "0.5",
          "--topk", "2"], "no exact law"),
        (["theory", "--family", "crosspolytope", "-n", "64", "--topk", "2", "--overlap", "0.5"],
         "no exact law for the top-k overlap on the sentence model"),
        (["theory", "--family", "voronoi", "-n", "64", "--topk", "2", "--overlap", "0.5",
          "--vocab", "100"], "--vocab has no effect with --topk"),
        (["simulate", "--family", "crosspolytope", "--buckets", "16", "--cosine", "0.5",
          "--topk", "2", "--mode", "reduced"], "mode='reduced' is not available"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_one_line(argv, match, capsys):
    """Exit 2, one line naming the parameter, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
