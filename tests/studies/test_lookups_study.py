"""The ``collision_beyond`` study (quick) and its figure: data, seeds, Monte Carlo vs exact."""

from __future__ import annotations

import dataclasses
import json

import pytest
from matplotlib.figure import Figure

from lshsim import theory
from lshsim.plots.lookups import plot_collision_beyond
from lshsim.studies import STUDIES
from lshsim.studies.lookups import collision_beyond


@pytest.fixture(scope="module")
def quick():
    return STUDIES["collision_beyond"]("quick", 3)


def test_quick_data_exact_and_monte_carlo(quick):
    """Product keys' curve is P_vor(sqrt n, a)^2; its Monte-Carlo intervals cover it (95%
    intervals at 4 points: a miss would be a 1-in-5 event at most, so a fixed seed that
    covers all is checked, not chance); the top-k lines start at P_vor (k = 1)."""
    for f, panel in quick["panels"].items():
        pk = panel["exact"]["productkey"]
        for n, p in zip(pk["n"], pk["p"], strict=True):
            assert p == pytest.approx(theory.voronoi_probability(int(n**0.5), float(f)) ** 2)
        mc = panel["mc"]
        for n, lo, hi in zip(mc["n"], mc["ci_low"], mc["ci_high"], strict=True):
            assert lo <= theory.productkey_probability(n, float(f)) <= hi
    top = quick["topk"]
    k1 = top["exact_voronoi"]["1"]
    assert k1["p"][0] == pytest.approx(theory.voronoi_probability(k1["n"][0], top["cosine"]))


def test_same_seed_same_numbers():
    """Seeded: the same seed reproduces the data, another seed changes the Monte Carlo (a
    tiny config of the same compute function)."""
    cfg = dataclasses.replace(
        STUDIES["collision_beyond"].config("quick"),
        beyond_cosines=(0.5,), beyond_log2n=(2,), beyond_mc_samples=300, topk_ks=(2,),
        topk_log2n=(4,), topk_mc_log2n=(4,), topk_mc_samples=100,
    )  # fmt: skip
    first, again, other = (collision_beyond(cfg, s) for s in (5, 5, 6))
    assert json.dumps(first) == json.dumps(again)
    assert first["panels"]["0.5"]["mc"] != other["panels"]["0.5"]["mc"]
    assert first["topk"]["mc_productkey"] != other["topk"]["mc_productkey"]


def test_figure(quick, tmp_path):
    """One panel per cosine and the top-k panel, labelled; a missing key is named."""
    fig = plot_collision_beyond(quick)
    assert isinstance(fig, Figure) and len(fig.axes) == len(quick["cosines"]) + 1
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    with pytest.raises(KeyError, match="topk"):
        plot_collision_beyond({"panels": quick["panels"]})


def test_ngram_curve_is_the_exact_two_gram_rate():
    """The panel's 2-gram curve at l = 40 is q + (1-q)/n with q = s(s-1)/(l(l-1)), s = f l,
    computed here by hand."""
    import lshsim.studies.lookups as lookups

    cfg = dataclasses.replace(
        STUDIES["collision_beyond"].config("quick"), beyond_log2n=(2, 4), beyond_mc_log2n=()
    )
    curve = lookups._collision_panel(cfg, 0.5, [])["exact"]["ngram"]
    q = 20 * 19 / (40 * 39)
    assert curve["n"] == [4, 16]
    assert curve["p"] == pytest.approx([q + (1 - q) / 4, q + (1 - q) / 16], rel=1e-12)


def test_topk_lines_start_at_n_equal_k():
    """The exact top-k lines are drawn from n >= k only (k = n gives 1)."""
    import lshsim.studies.lookups as lookups

    cfg = dataclasses.replace(
        STUDIES["collision_beyond"].config("default"),
        topk_ks=(1, 4), topk_log2n=(1, 2, 3), topk_mc_log2n=(),
    )  # fmt: skip
    exact = lookups._topk_panel(cfg, [])["exact_voronoi"]
    assert exact["1"]["n"] == [2, 4, 8] and exact["4"]["n"] == [4, 8]
    assert exact["4"]["p"][0] == 1.0
