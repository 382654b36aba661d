"""The ordering map: which lookup collides most over overlap ``f`` and buckets ``n``.

With the Token-ID = Softmax crossover and Theorem 1's claimed band. Data in, :class:`Figure` out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter

from lshsim.plots.style import (
    LEGEND_FONT,
    as_array,
    get_key,
    new_figure,
    pow2_exponents,
    pow2_label,
    same_length,
)

__all__ = ["plot_ordering_map"]

#: Fill colours of the winners, in label order.
_PALETTE = ["#9ecae1", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9"]


def cell_edges(centres: np.ndarray) -> np.ndarray:
    """Return cell edges around sorted ``centres`` (midpoints, half a step beyond the ends)."""
    if centres.size == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = (centres[1:] + centres[:-1]) / 2
    return np.concatenate([[2 * centres[0] - mid[0]], mid, [2 * centres[-1] - mid[-1]]])


def _lg(x: np.ndarray) -> np.ndarray:
    """``log2 x`` where ``x > 0``, NaN elsewhere."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log2(np.where(x > 0, x, 1.0)), np.nan)


def _check_grid(
    f: np.ndarray, log2n: np.ndarray, winner: np.ndarray, labels: list[str], where: str
) -> None:
    """Raise ``ValueError`` unless ``winner`` is a ``(log2n, f)`` grid of label indices."""
    if winner.shape != (log2n.size, f.size):
        raise ValueError(
            f"{where}: 'winner' must have shape (len(log2n), len(f)) = {(log2n.size, f.size)}, "
            f"got {winner.shape}"
        )
    if not labels:
        raise ValueError(f"{where}: 'labels' must be non-empty")
    valid = np.isfinite(winner)
    if ((winner[valid] < 0) | (winner[valid] >= len(labels))).any():
        raise ValueError(f"{where}: 'winner' values must be indices in [0, {len(labels) - 1}]")
    if f.size == 0 or log2n.size == 0:
        raise ValueError(f"{where}: 'f' and 'log2n' must be non-empty")


def _draw_lines(ax: Any, crossover: Any, claimed: Any, where: str) -> None:
    """The claimed band ``1/f <= n*(f) <= 1 + 1.71/f`` (hatched) and the crossover ``n*(f)``."""
    cf = as_array(get_key(crossover, "f", f"{where}['crossover']"), f"{where}['crossover']['f']")
    cn = as_array(get_key(crossover, "n", f"{where}['crossover']"), f"{where}['crossover']['n']")
    same_length(f"{where}['crossover']", f=cf, n=cn)
    w = f"{where}['claimed']"
    kf = as_array(get_key(claimed, "f", w), f"{w}['f']")
    klo = as_array(get_key(claimed, "n_lo", w), f"{w}['n_lo']")
    khi = as_array(get_key(claimed, "n_hi", w), f"{w}['n_hi']")
    same_length(w, f=kf, n_lo=klo, n_hi=khi)
    ax.fill_between(
        kf,
        _lg(klo),
        _lg(khi),
        facecolor="none",
        edgecolor="0.2",
        hatch="///",
        lw=0.0,
        alpha=0.6,
        zorder=2,
    )
    ax.plot(kf, _lg(klo), "--", color="0.2", lw=1.0, zorder=3)
    ax.plot(kf, _lg(khi), "--", color="0.2", lw=1.0, zorder=3)
    ax.plot(cf, _lg(cn), "-", color="#B2182B", lw=2.0, marker="o", ms=3, zorder=4)


def _ordering_legend(ax: Any, colors: list[str], labels: list[str]) -> None:
    handles: list[Any] = [
        Patch(facecolor=c, edgecolor="0.5", label=lab)
        for c, lab in zip(colors, labels, strict=True)
    ]
    handles += [
        Line2D(
            [], [], color="#B2182B", lw=2.0, marker="o", ms=3, label="n*(f): Token-ID = Softmax"
        ),
        Patch(
            facecolor="none", edgecolor="0.2", hatch="///", label="claimed 1/f ≤ n*(f) ≤ 1 + 1.71/f"
        ),
    ]
    ax.legend(
        handles=handles,
        title="highest collision",
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize=LEGEND_FONT,
        title_fontsize=LEGEND_FONT,
        frameon=False,
    )


def plot_ordering_map(data: Mapping[str, Any]) -> Figure:
    """Map which family has the highest collision probability over overlap ``f`` and buckets ``n``.

    Overlays the measured crossover ``n*(f)`` where Token-ID and Softmax collide equally and the
    theorem's claimed band ``1/f <= n*(f) <= 1 + 1.71/f``.

    Args:
        data: ``{"f": [...], "log2n": [...], "labels": [...], "winner": [[int]] (row i = log2n[i],
            column j = f[j]), "crossover": {"f", "n"}, "claimed": {"f", "n_lo", "n_hi"}}``.

    Returns:
        A one-panel figure; the y axis is ``log2 n`` labelled ``2^k``.

    Raises:
        KeyError: If a required key is missing.
        ValueError: If ``winner`` has the wrong shape or an index outside ``labels``.
    """
    where = "ordering_map"
    f = as_array(get_key(data, "f", where), f"{where}['f']")
    log2n = as_array(get_key(data, "log2n", where), f"{where}['log2n']")
    labels = [str(x) for x in get_key(data, "labels", where)]
    winner = np.asarray(get_key(data, "winner", where), dtype=float)
    crossover = get_key(data, "crossover", where)
    claimed = get_key(data, "claimed", where)
    _check_grid(f, log2n, winner, labels, where)

    f_order, n_order = np.argsort(f), np.argsort(log2n)
    f, log2n = f[f_order], log2n[n_order]
    winner = winner[np.ix_(n_order, f_order)]
    colors = [_PALETTE[i % len(_PALETTE)] for i in range(len(labels))]
    cmap = ListedColormap(colors)
    norm = BoundaryNorm(np.arange(len(labels) + 1) - 0.5, cmap.N)

    fig = new_figure(8.2, 4.8)
    ax = fig.add_subplot()
    ax.pcolormesh(
        cell_edges(f),
        cell_edges(log2n),
        np.ma.masked_invalid(winner),
        cmap=cmap,
        norm=norm,
        shading="flat",
        rasterized=True,
    )
    _draw_lines(ax, crossover, claimed, where)

    y_lo, y_hi = cell_edges(log2n)[[0, -1]]
    ax.set_xlim(*cell_edges(f)[[0, -1]])
    ax.set_ylim(y_lo, y_hi)
    ax.yaxis.set_major_locator(FixedLocator(pow2_exponents(y_lo, y_hi, max_ticks=9)))
    ax.yaxis.set_major_formatter(FuncFormatter(pow2_label))
    ax.set_xlabel("overlap f")
    ax.set_ylabel("buckets n (log scale)")
    ax.set_title("Family with the highest collision probability")
    _ordering_legend(ax, colors, labels)
    return fig
