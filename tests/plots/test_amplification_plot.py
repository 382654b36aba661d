"""The amplification figure: two labelled panels from synthetic data, near ties hatched, and
bad data named (no quadrature: the data are written here)."""

from __future__ import annotations

import copy

import pytest
from matplotlib.figure import Figure

from lshsim.plots.amplification import NEAR_TIE, plot_amplification_map


def _data():
    return {
        "cosines": [0.3, 0.6, 0.9],
        "budgets": [64.0, 256.0],
        "families": ["simhash", "voronoi", "crosspolytope"],
        "winner": [[2, 2], [2, 2], [0, 2]],
        "margin": [[1.2, 1.3], [1.1, None], [1.01, 1.02]],
        "log_miss": {
            "simhash": [[-0.1, -0.4], [-0.2, -0.9], [-0.5, -2.0]],
            "voronoi": [[-0.05, -0.3], [-0.1, 0.0], [-0.3, -1.5]],
            "crosspolytope": [[-0.12, -0.5], [-0.22, -1.2], [-0.49, -2.04]],
        },
        "curve_cosine": 0.9,
        "points": 2**20,
    }


def test_two_labelled_panels_and_hatched_ties():
    fig = plot_amplification_map(_data())
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
        assert ax.get_legend() is not None
    hatched = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert len(hatched) == 2  # the margins below NEAR_TIE: 1.01 and 1.02
    assert NEAR_TIE > 1.02
    assert "0.9" in fig.axes[1].get_title()
    assert len(fig.axes[1].get_lines()) == 3


@pytest.mark.parametrize("key", ["cosines", "winner", "log_miss", "curve_cosine"])
def test_missing_key_is_named(key):
    data = copy.deepcopy(_data())
    del data[key]
    with pytest.raises(KeyError, match=repr(key)):
        plot_amplification_map(data)


def test_bad_winner_is_refused():
    data = _data()
    data["winner"] = [[0, 5], [2, 2], [0, 2]]
    with pytest.raises(ValueError, match="index 'families'"):
        plot_amplification_map(data)
    data["winner"] = [[0, 1]]
    with pytest.raises(ValueError, match="shape"):
        plot_amplification_map(data)
