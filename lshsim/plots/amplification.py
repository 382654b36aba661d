"""The best family at equal query cost: a map over (cosine, budget) and the miss against cost.

Data in (the payload of the ``amplification`` study), :class:`Figure` out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter

from lshsim.hashing import CrossPolytope, SimHash, Voronoi
from lshsim.plots.ordering import cell_edges
from lshsim.plots.style import (
    CATEGORY_COLORS,
    LEGEND_FONT,
    as_array,
    family_style,
    get_key,
    new_figure,
    pow2_exponents,
    pow2_label,
)

__all__ = ["plot_amplification_map"]

#: each family's map fill (light) and the matching line colour (the category colours)
FAMILY_COLORS = {
    SimHash: ("#c7e9c0", CATEGORY_COLORS[2]),
    Voronoi: ("#fdd0a2", CATEGORY_COLORS[1]),
    CrossPolytope: ("#9ecae1", "#0072B2"),
}
#: below this ln-miss ratio of winner to runner-up a cell is hatched as a near tie
NEAR_TIE = 1.05


def _grid(data: Mapping[str, Any], where: str):
    cos = as_array(get_key(data, "cosines", where), f"{where}['cosines']")
    log2c = np.log2(as_array(get_key(data, "budgets", where), f"{where}['budgets']"))
    fams = [str(f) for f in get_key(data, "families", where)]
    winner = np.asarray(get_key(data, "winner", where), dtype=float)
    if winner.shape != (cos.size, log2c.size):
        raise ValueError(
            f"{where}: 'winner' must have shape (cosines, budgets), got {winner.shape}"
        )
    if not fams or ((winner < 0) | (winner >= len(fams))).any():
        raise ValueError(f"{where}: 'winner' values must index 'families'")
    margin = np.array(
        [[np.nan if m is None else m for m in row] for row in get_key(data, "margin", where)],
        dtype=float,
    )
    return cos, log2c, fams, winner, margin


def _map_panel(ax, cos, log2c, fams, winner, margin) -> None:
    colors = [family_style(FAMILY_COLORS, f, "amplification")[0] for f in fams]
    cmap = ListedColormap(colors)
    norm = BoundaryNorm(np.arange(len(fams) + 1) - 0.5, cmap.N)
    xe, ye = cell_edges(cos), cell_edges(log2c)
    ax.pcolormesh(xe, ye, winner.T, cmap=cmap, norm=norm, shading="flat", rasterized=True)
    for i, j in zip(*np.nonzero(margin < NEAR_TIE), strict=True):  # near ties: hatched
        cell = Rectangle((xe[i], ye[j]), xe[i + 1] - xe[i], ye[j + 1] - ye[j])
        cell.set(fill=False, hatch="///", edgecolor="0.35", linewidth=0.0)
        ax.add_patch(cell)
    ax.set_xlim(xe[0], xe[-1])
    ax.set_ylim(ye[0], ye[-1])
    ax.yaxis.set_major_locator(FixedLocator(pow2_exponents(ye[0], ye[-1], max_ticks=8)))
    ax.yaxis.set_major_formatter(FuncFormatter(pow2_label))
    ax.set_xlabel("near cosine a (far points at cosine 0)")
    ax.set_ylabel("query budget C (inner products)")
    ax.set_title("Highest recall at equal query cost")
    handles: list[Any] = [
        Patch(facecolor=c, edgecolor="0.5", label=f) for c, f in zip(colors, fams, strict=True)
    ]
    handles.append(
        Patch(
            facecolor="white", edgecolor="0.3", hatch="///", label=f"runner-up within {NEAR_TIE}x"
        )
    )
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.14),
        ncol=2,
        fontsize=LEGEND_FONT,
        frameon=False,
    )


def _miss_panel(ax, data, cos, log2c, fams, where) -> None:
    target = float(get_key(data, "curve_cosine", where))
    i = int(np.argmin(np.abs(cos - target)))
    log_miss = get_key(data, "log_miss", where)
    for f in fams:
        line = family_style(FAMILY_COLORS, f, "amplification")[1]
        ln_miss = np.asarray(get_key(log_miss, f, f"{where}['log_miss']"), dtype=float)[i]
        nines = np.where(ln_miss < 0, -ln_miss / np.log(10.0), np.nan)  # -log10 miss
        ax.plot(2.0**log2c, nines, "-o", ms=3, color=line, label=f)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("query budget C (inner products)")
    ax.set_ylabel("-log10 miss, miss = (1 - p1^k)^L")
    ax.set_title(f"Best scheme per family at a = {cos[i]:g}")
    ax.legend(fontsize=LEGEND_FONT, frameon=False, title="higher is better")
    ax.grid(True, which="major", alpha=0.3)


def plot_amplification_map(data: Mapping[str, Any]) -> Figure:
    """Which family finds a near pair most often at equal query cost, and by how much.

    Args:
        data: ``{"cosines", "budgets", "families", "winner": [[index]] (row i = cosines[i],
            column j = budgets[j]), "margin": [[ratio | None]], "log_miss": {family: [[...]]},
            "curve_cosine", "points"}`` (:func:`lshsim.theory.best_family_grid` plus the cosine
            of the right panel).

    Returns:
        A two-panel figure: the winner map (hatched where the runner-up's ln(miss) is within
        ``NEAR_TIE``) and each family's best ``-log10`` miss probability against the budget at
        ``curve_cosine``.

    Raises:
        KeyError: If a required key is missing.
        ValueError: If ``winner`` has the wrong shape or an index outside ``families``.
    """
    where = "amplification"
    cos, log2c, fams, winner, margin = _grid(data, where)
    fig = new_figure(11.0, 4.6)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1.0]})
    _map_panel(left, cos, log2c, fams, winner, margin)
    _miss_panel(right, data, cos, log2c, fams, where)
    return fig
