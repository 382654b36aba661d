"""Figures of the collision studies, data in and :class:`Figure` out.

Collision probability against ``n`` and ``rho`` against ``f``, from the studies' JSON payloads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lshsim.plots.style import (
    CATEGORY_COLORS,
    F_CMAP,
    F_NORM,
    LEGEND_FONT,
    Y_FLOOR,
    as_array,
    f_color,
    get_key,
    log2_xaxis,
    marker_handle,
    new_figure,
    positive,
    same_length,
)

__all__ = ["plot_collision_vs_n", "plot_rho_vs_f"]


# --------------------------------------------------------------------------------------------
# 1. collision probability against n
# --------------------------------------------------------------------------------------------


def _curve(c: Any, kind: str, f: str, w: str) -> tuple[np.ndarray, np.ndarray]:
    """The checked ``n`` and ``p`` lists of an exact or rate curve."""
    n = as_array(get_key(c, "n", f"{w}[{kind!r}][{f!r}]"), f"{w}[{kind!r}][{f!r}]['n']")
    p = as_array(get_key(c, "p", f"{w}[{kind!r}][{f!r}]"), f"{w}[{kind!r}][{f!r}]['p']")
    same_length(f"{w}[{kind!r}][{f!r}]", n=n, p=p)
    return n, p


def _draw_mc(ax: Any, f: str, c: Any, w: str) -> tuple[np.ndarray, float]:
    """Monte Carlo points with 95% CI bars; return ``n`` and the smallest estimate drawn."""
    wf = f"{w}['mc'][{f!r}]"
    n = as_array(get_key(c, "n", wf), f"{wf}['n']")
    est = as_array(get_key(c, "estimate", wf), f"{wf}['estimate']")
    lo = as_array(get_key(c, "ci_low", wf), f"{wf}['ci_low']")
    hi = as_array(get_key(c, "ci_high", wf), f"{wf}['ci_high']")
    same_length(wf, n=n, estimate=est, ci_low=lo, ci_high=hi)
    keep = est >= Y_FLOOR
    if not keep.any():
        return n, 1.0
    e = est[keep]
    yerr = np.vstack(
        [
            np.clip(e - np.maximum(lo[keep], Y_FLOOR), 0.0, None),
            np.clip(hi[keep] - e, 0.0, None),
        ]
    )
    ax.errorbar(
        n[keep],
        e,
        yerr=yerr,
        fmt="o",
        ms=3.5,
        color=f_color(f),
        mfc="white",
        mew=1.1,
        elinewidth=1.0,
        capsize=2,
        zorder=3,
    )
    return n, float(e.min())


def _collision_panel(ax: Any, family: str, curves: Any, where: str) -> tuple[list[float], float]:
    """Draw one family's panel; return the ``n`` values drawn and the smallest probability."""
    if not isinstance(curves, Mapping):
        raise ValueError(f"{where}: panels[{family!r}] must be a mapping")
    all_n: list[float] = []
    y_min = 1.0
    w = f"{where}: panels[{family!r}]"
    for f, c in (curves.get("exact") or {}).items():
        n, p = _curve(c, "exact", f, w)
        p = positive(p)
        ax.plot(n, p, "-", color=f_color(f), lw=1.6, zorder=2)
        all_n.extend(n)
        if np.isfinite(p).any():
            y_min = min(y_min, float(np.nanmin(p)))
    for f, c in (curves.get("rate") or {}).items():
        n, p = _curve(c, "rate", f, w)
        ax.plot(n, positive(p), "--", color=f_color(f), lw=1.0, alpha=0.9, zorder=1)
        all_n.extend(n)
    for f, c in (curves.get("mc") or {}).items():
        n, low = _draw_mc(ax, f, c, w)
        y_min = min(y_min, low)
        all_n.extend(n)
    ax.set_yscale("log")
    ax.set_title(str(family))
    ax.grid(True, which="major", alpha=0.3)
    if not all_n:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center")
    return all_n, y_min


def _collision_legends(
    fig: Figure, axes: list[Any], overlaps: list[float], color_label: str
) -> None:
    """The shared style legend on top and the colour bar of ``f``."""
    style_handles = [
        Line2D([], [], color="0.25", lw=1.6, ls="-", label="exact"),
        marker_handle("Monte Carlo (95% CI)"),
        Line2D([], [], color="0.25", lw=1.0, ls="--", label="asymptotic rate"),
    ]
    fig.legend(
        handles=style_handles,
        loc="outside upper center",
        ncols=3,
        fontsize=LEGEND_FONT,
        frameon=False,
    )
    sm = ScalarMappable(norm=F_NORM, cmap=F_CMAP)
    cbar = fig.colorbar(sm, ax=axes, shrink=0.85, pad=0.02)
    cbar.set_label(color_label)
    if overlaps:
        cbar.set_ticks(sorted(set(overlaps)))


def plot_collision_vs_n(data: Mapping[str, Any], color_label: str = "overlap f") -> Figure:
    """Plot collision probability against the number of buckets, one panel per family.

    Per overlap ``f`` a panel shows the exact curve (solid), the Monte Carlo estimate with its
    95% confidence interval (markers with error bars) and the asymptotic rate (dashed), all in the
    colour of ``f``. Any of the three may be missing for a family or an overlap. Probabilities
    below ``1e-6`` (and zero Monte Carlo estimates) are not drawn.

    Args:
        data: ``{"overlaps": [...], "panels": {family: {"exact": {f: {"n", "p"}},
            "mc": {f: {"n", "estimate", "ci_low", "ci_high"}}, "rate": {f: {"n", "p"}}}}}``.
        color_label: the colour bar's label (``lshsim sweep --plot``: ``cosine a`` where the
            colours are cosines).

    Returns:
        The figure: panels in a grid of up to 3 columns, a shared style legend and a colour bar
        for ``f``.

    Raises:
        KeyError: If a required key is missing.
        ValueError: If ``panels`` is empty or lists have mismatched lengths.
    """
    where = "collision_vs_n"
    overlaps = [float(f) for f in get_key(data, "overlaps", where)]
    panels = get_key(data, "panels", where)
    if not isinstance(panels, Mapping) or not panels:
        raise ValueError(f"{where}: 'panels' must be a non-empty mapping of family -> curves")

    families = list(panels)
    ncols = min(3, len(families))
    nrows = math.ceil(len(families) / ncols)
    fig = new_figure(4.0 * ncols + 1.2, 3.4 * nrows + 0.6)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    flat = list(axes.flat)
    for ax in flat[len(families) :]:
        fig.delaxes(ax)

    y_min = 1.0
    n_seen: list[float] = []
    for ax, family in zip(flat, families, strict=False):
        all_n, low = _collision_panel(ax, family, panels[family], where)
        n_seen.extend(all_n)
        y_min = min(y_min, low)

    log2_xaxis(flat[0], n_seen)  # shared by every panel
    bottom = max(Y_FLOOR, 10 ** math.floor(math.log10(y_min))) if y_min < 1 else 1e-3
    flat[0].set_ylim(bottom, 1.5)
    for ax in flat[: len(families)]:
        ax.set_xlabel("buckets n")
        ax.set_ylabel("collision probability")
        ax.tick_params(labelleft=True, labelbottom=True)
    _collision_legends(fig, flat[: len(families)], overlaps, color_label)
    return fig


# --------------------------------------------------------------------------------------------
# 2. rho against f
# --------------------------------------------------------------------------------------------

_FIT_FORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sqrt(1-f)": lambda f: np.sqrt(np.clip(1.0 - f, 0.0, None)),
    "1-f": lambda f: 1.0 - f,
    "f": lambda f: f,
}


def plot_rho_vs_f(data: Mapping[str, Any]) -> Figure:
    """Plot the collision exponent ``rho = -log P / log n`` against overlap, one line per family.

    Fitted families get a dashed reference curve ``c * form(f)`` in the family's colour.

    Args:
        data: ``{"n": int, "f": [...], "rho": {family: [...]}, "fits": {family: {"form", "c"}}}``
            with ``form`` one of ``"sqrt(1-f)"``, ``"1-f"``, ``"f"``.

    Returns:
        A one-panel figure with the legend outside the axes.

    Raises:
        KeyError: If a required key is missing.
        ValueError: If a fit form is unknown or a ``rho`` list does not match ``f``.
    """
    where = "rho_vs_f"
    n = get_key(data, "n", where)
    f = as_array(get_key(data, "f", where), f"{where}['f']")
    rho = get_key(data, "rho", where)
    fits = data.get("fits") or {}
    if not isinstance(rho, Mapping) or not rho:
        raise ValueError(f"{where}: 'rho' must be a non-empty mapping of family -> list")

    fig = new_figure(7.8, 4.6)
    ax = fig.add_subplot()
    colors = {fam: CATEGORY_COLORS[i % len(CATEGORY_COLORS)] for i, fam in enumerate(rho)}
    for fam, values in rho.items():
        r = as_array(values, f"{where}['rho'][{fam!r}]")
        same_length(f"{where}['rho'][{fam!r}]", f=f, rho=r)
        ax.plot(f, r, "-", marker="o", ms=3, lw=1.8, color=colors[fam], label=str(fam))

    f_dense = np.linspace(float(np.nanmin(f)), float(np.nanmax(f)), 200) if f.size else f
    for fam, fit in fits.items():
        form = get_key(fit, "form", f"{where}['fits'][{fam!r}]")
        c = float(get_key(fit, "c", f"{where}['fits'][{fam!r}]"))
        if form not in _FIT_FORMS:
            raise ValueError(
                f"{where}: fits[{fam!r}]['form'] must be one of {sorted(_FIT_FORMS)}, got {form!r}"
            )
        ax.plot(
            f_dense,
            c * _FIT_FORMS[form](f_dense),
            "--",
            lw=1.1,
            color=colors.get(fam, "0.4"),
            label=f"{c:.2f} {form} ({fam} fit)",
        )

    ax.set_xlabel("overlap f")
    ax.set_ylabel("rho = -log P / log n")
    n_txt = (
        f"n = $2^{{{round(math.log2(n))}}}$" if n > 0 and math.log2(n).is_integer() else f"n = {n}"
    )
    ax.set_title(f"Collision exponent rho against overlap ({n_txt} = {n:,} buckets)")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(bottom=0.0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=LEGEND_FONT, frameon=False)
    return fig
