"""Figure of product keys, n-grams and top-k routing: collision against ``n``, top-k overlap.

One panel per cosine ``a = f`` with every family's exact curve (product keys at ``n = 4^j``,
with Monte-Carlo points and 95% intervals), and one panel of top-k overlap against ``n``:
Voronoi's exact overlap per ``k`` (lines) and the product keys' Monte Carlo (points).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lshsim.hashing import (
    CrossPolytope,
    MinHash,
    NGram,
    ProductKey,
    PStable,
    SimHash,
    TokenID,
    Voronoi,
)
from lshsim.plots.style import (
    CATEGORY_COLORS,
    LEGEND_FONT,
    Y_FLOOR,
    as_array,
    family_style,
    get_key,
    log2_xaxis,
    marker_handle,
    new_figure,
    positive,
    same_length,
)

__all__ = ["plot_collision_beyond"]

#: each family's exact curve format; its colour is the category colour at its place here
#: (stable across panels)
FAMILY_CURVES = {
    SimHash: "-",
    PStable: "-",
    Voronoi: "-",
    CrossPolytope: "--",
    ProductKey: "-o",
    MinHash: "-",
    TokenID: "-",
    NGram: "-",
}
FIGURE = "collision_beyond"


def _family_color(family: str) -> str:
    family_style(FAMILY_CURVES, family, FIGURE)
    idx = [c.name for c in FAMILY_CURVES].index(family)
    return CATEGORY_COLORS[idx % len(CATEGORY_COLORS)]


def _family_curve(family: str) -> str:
    return family_style(FAMILY_CURVES, family, FIGURE)


def _points(ax: Any, cells: Any, where: str, color: str) -> list[float]:
    n = as_array(get_key(cells, "n", where), f"{where}['n']")
    if n.size == 0:
        return []
    est = as_array(get_key(cells, "estimate", where), f"{where}['estimate']")
    lo = as_array(get_key(cells, "ci_low", where), f"{where}['ci_low']")
    hi = as_array(get_key(cells, "ci_high", where), f"{where}['ci_high']")
    same_length(where, n=n, estimate=est, ci_low=lo, ci_high=hi)
    keep = est >= Y_FLOOR
    e = est[keep]
    yerr = np.vstack([np.clip(e - np.maximum(lo[keep], Y_FLOOR), 0, None),
                      np.clip(hi[keep] - e, 0, None)])  # fmt: skip
    ax.errorbar(n[keep], e, yerr=yerr, fmt="o", ms=3.5, color=color, mfc="white", mew=1.1,
                elinewidth=1.0, capsize=2, zorder=3)  # fmt: skip
    return list(n)


def _lines(ax: Any, curves: Any, where: str, color_of, style_of) -> list[float]:
    if not isinstance(curves, Mapping):
        raise ValueError(f"{where} must be a mapping")
    all_n: list[float] = []
    for name, c in curves.items():
        n = as_array(get_key(c, "n", where), f"{where}[{name!r}]['n']")
        p = as_array(get_key(c, "p", where), f"{where}[{name!r}]['p']")
        same_length(f"{where}[{name!r}]", n=n, p=p)
        style = style_of(name)
        label = "product keys, top-1 exact" if name == "pk_top1" else str(name)
        ax.plot(n, positive(p), style, ms=2.5, color=color_of(name), lw=1.5, label=label)
        all_n.extend(n)
    return all_n


def plot_collision_beyond(data: Mapping[str, Any]) -> Figure:
    """Collision against ``n`` per cosine (every family), and the top-k overlap panel.

    Args:
        data: the ``collision_beyond`` study's payload.

    Returns:
        A figure with ``len(cosines) + 1`` panels.
    """
    where = FIGURE
    panels = get_key(data, "panels", where)
    topk = get_key(data, "topk", where)
    fig = new_figure(4.0 * (len(panels) + 1), 3.6)
    axes = fig.subplots(1, len(panels) + 1, squeeze=False)[0]
    for ax, (f, panel) in zip(axes, panels.items(), strict=False):
        w = f"{where}: panels[{f!r}]"
        all_n = _lines(
            ax, get_key(panel, "exact", w), f"{w}['exact']", _family_color, _family_curve
        )
        all_n += _points(ax, get_key(panel, "mc", w), f"{w}['mc']", _family_color(ProductKey.name))
        ax.set_yscale("log")
        log2_xaxis(ax, all_n)
        ax.set_title(f"cosine a = f = {f}")
        ax.set_xlabel("buckets n")
        ax.set_ylabel("collision probability")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=LEGEND_FONT, frameon=False, ncols=2)
    ax = axes[-1]
    w = f"{where}: topk"
    ks = list(get_key(topk, "exact_voronoi", w))

    def k_color(k: str) -> str:
        return CATEGORY_COLORS[ks.index(k) % len(CATEGORY_COLORS)] if k in ks else "0.3"

    all_n = _lines(
        ax, get_key(topk, "exact_voronoi", w), f"{w}['exact_voronoi']", k_color, lambda _: "-"
    )
    pk_top1 = {"pk_top1": get_key(topk, "exact_productkey_top1", w)}
    all_n += _lines(
        ax, pk_top1, f"{w}['exact_productkey_top1']", lambda _: k_color("1"), lambda _: ":"
    )
    for k, cells in get_key(topk, "mc_productkey", w).items():
        all_n += _points(ax, cells, f"{w}['mc_productkey'][{k!r}]", k_color(k))
    ax.set_yscale("log")
    log2_xaxis(ax, all_n)
    ax.set_title(f"top-k overlap, a = {get_key(topk, 'cosine', w)}")
    ax.set_xlabel("buckets n")
    ax.set_ylabel("E|T_k(x) ∩ T_k(y)| / k")
    ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], color=k_color(k), lw=1.5, label=f"k = {k}") for k in ks]
    handles += [Line2D([], [], color="0.25", lw=1.5, label="voronoi, exact"),
                Line2D([], [], color="0.25", lw=1.5, ls=":", label="product keys k = 1, exact"),
                marker_handle("product keys (PKM top-k), MC 95% CI")]  # fmt: skip
    ax.legend(handles=handles, fontsize=LEGEND_FONT, frameon=False)
    return fig
