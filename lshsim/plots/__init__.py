"""Figures for the reproduction: plain data in, :class:`matplotlib.figure.Figure` out.

Every ``plot_*`` function takes the already-loaded JSON payload of one experiment (dicts and lists,
overlap keys as strings such as ``"0.1"``) and returns a new figure. Figures are built with
:class:`matplotlib.figure.Figure` directly, so nothing touches pyplot's global state and the module
works under any backend (Agg included). A missing key raises :class:`KeyError` naming the key and
the figure; malformed values raise :class:`ValueError`.

Colours are consistent across figures: the overlap ``f`` always maps to the same colour of a
truncated viridis map over ``f`` in [0.1, 0.9], and :func:`save_figure` writes each format
atomically.

Example:
    >>> fig = FIGURES["rho_vs_f"](data)  # doctest: +SKIP
    >>> save_figure(fig, Path("figures/rho_vs_f"))  # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import BoundaryNorm, Colormap, ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

__all__ = [
    "FIGURES",
    "F_NORM",
    "PNG_DPI",
    "f_color",
    "plot_collision_vs_n",
    "plot_ordering_map",
    "plot_rho_vs_f",
    "plot_sentence_cosine",
    "plot_tokenid_vs_minhash",
    "save_figure",
]

#: Resolution of saved PNG files.
PNG_DPI = 150
#: Overlap range that the sequential colour map spans.
F_NORM = Normalize(vmin=0.1, vmax=0.9)
#: Viridis without its pale-yellow end, which is hard to see on white.
F_CMAP: Colormap = ListedColormap(colormaps["viridis"](np.linspace(0.0, 0.88, 256)), "viridis_f")
#: Smallest probability drawn on log axes; smaller values (and zeros) are clipped or dropped.
Y_FLOOR = 1e-6
#: Qualitative colours for families and other categories (Okabe-Ito, colour-blind safe).
CATEGORY_COLORS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#D55E00",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
_LEGEND_FONT = "small"


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def f_color(f: float | str) -> tuple[float, float, float, float]:
    """Return the RGBA colour of overlap ``f`` (shared by every figure).

    Args:
        f: Overlap in [0, 1], as a number or a string key such as ``"0.3"``.

    Returns:
        The RGBA tuple of ``f`` in the truncated viridis map over [0.1, 0.9].
    """
    return F_CMAP(F_NORM(float(f)))


def _get(data: Mapping[str, Any], key: str, where: str) -> Any:
    """Return ``data[key]`` or raise a ``KeyError`` that names the key and where it was expected."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {type(data).__name__}")
    try:
        return data[key]
    except KeyError:
        raise KeyError(f"{where}: missing key {key!r}") from None


def _array(values: Any, where: str) -> np.ndarray:
    """Return ``values`` as a 1-D float array, or raise ``ValueError`` naming ``where``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: expected a list of numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{where}: expected a 1-D list, got shape {arr.shape}")
    return arr


def _same_length(where: str, **arrays: np.ndarray) -> None:
    """Raise ``ValueError`` unless all ``arrays`` have the same length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{where}: lists must have equal lengths, got {lengths}")


def _pow2_label(k: float, _pos: Any = None) -> str:
    """Format an exponent ``k`` as the mathtext label ``2^k``."""
    return rf"$2^{{{round(k)}}}$"


def _pow2_exponents(lo: float, hi: float, max_ticks: int = 7) -> list[int]:
    """Return integer exponents in ``[lo, hi]`` with an even stride, at most ``max_ticks``."""
    k_lo, k_hi = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
    if k_hi < k_lo:
        return [round(lo)]
    step = max(1, math.ceil((k_hi - k_lo + 1) / max_ticks))
    start = k_lo + (-k_lo) % step  # prefer multiples of the stride
    ks = list(range(start, k_hi + 1, step))
    return ks or [k_lo]


def _log2_xaxis(ax: Any, n_values: Sequence[float]) -> None:
    """Put ``ax``'s x axis on a base-2 log scale with ``2^k`` tick labels spanning ``n_values``."""
    ax.set_xscale("log", base=2)
    n = np.asarray([v for v in n_values if v > 0], dtype=float)
    if n.size == 0:
        return
    ks = _pow2_exponents(math.log2(n.min()), math.log2(n.max()))
    ax.xaxis.set_major_locator(FixedLocator([2.0**k for k in ks]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p: _pow2_label(math.log2(x))))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def _sorted_f_keys(keys: Any) -> list[str]:
    """Return overlap keys sorted numerically; raise ``ValueError`` for a non-numeric key."""
    out = []
    for k in keys:
        try:
            float(k)
        except (TypeError, ValueError):
            raise ValueError(f"overlap key {k!r} is not a number") from None
        out.append(k)
    return sorted(out, key=float)


def _positive(y: np.ndarray, floor: float = Y_FLOOR) -> np.ndarray:
    """Return ``y`` with values below ``floor`` (zeros, negatives) replaced by NaN."""
    y = y.astype(float, copy=True)
    y[~(y >= floor)] = np.nan
    return y


def _marker_handle(label: str) -> Line2D:
    """Legend entry for Monte-Carlo points: an open grey circle."""
    return Line2D([], [], color="0.25", ls="none", marker="o", ms=4, mfc="white", label=label)


def _new_figure(width: float, height: float) -> Figure:
    """Return an empty constrained-layout figure of the given size in inches."""
    return Figure(figsize=(width, height), layout="constrained")


# --------------------------------------------------------------------------------------------
# 1. collision probability against n
# --------------------------------------------------------------------------------------------


def plot_collision_vs_n(data: Mapping[str, Any]) -> Figure:
    """Plot collision probability against the number of buckets, one panel per family.

    Per overlap ``f`` a panel shows the exact curve (solid), the Monte Carlo estimate with its
    95% confidence interval (markers with error bars) and the asymptotic rate (dashed), all in the
    colour of ``f``. Any of the three may be missing for a family or an overlap. Probabilities
    below ``1e-6`` (and zero Monte Carlo estimates) are not drawn.

    Args:
        data: ``{"overlaps": [...], "panels": {family: {"exact": {f: {"n", "p"}},
            "mc": {f: {"n", "estimate", "ci_low", "ci_high"}}, "rate": {f: {"n", "p"}}}}}``.

    Returns:
        The figure: panels in a grid of up to 3 columns, a shared style legend and a colour bar
        for ``f``.

    Raises:
        KeyError: If a required key is missing.
        ValueError: If ``panels`` is empty or lists have mismatched lengths.
    """
    where = "collision_vs_n"
    overlaps = [float(f) for f in _get(data, "overlaps", where)]
    panels = _get(data, "panels", where)
    if not isinstance(panels, Mapping) or not panels:
        raise ValueError(f"{where}: 'panels' must be a non-empty mapping of family -> curves")

    families = list(panels)
    ncols = min(3, len(families))
    nrows = math.ceil(len(families) / ncols)
    fig = _new_figure(4.0 * ncols + 1.2, 3.4 * nrows + 0.6)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    flat = list(axes.flat)
    for ax in flat[len(families) :]:
        fig.delaxes(ax)

    y_min = 1.0
    n_seen: list[float] = []
    for ax, family in zip(flat, families, strict=False):
        curves = panels[family]
        if not isinstance(curves, Mapping):
            raise ValueError(f"{where}: panels[{family!r}] must be a mapping")
        all_n: list[float] = []
        w = f"{where}: panels[{family!r}]"

        for f, c in (curves.get("exact") or {}).items():
            n = _array(_get(c, "n", f"{w}['exact'][{f!r}]"), f"{w}['exact'][{f!r}]['n']")
            p = _array(_get(c, "p", f"{w}['exact'][{f!r}]"), f"{w}['exact'][{f!r}]['p']")
            _same_length(f"{w}['exact'][{f!r}]", n=n, p=p)
            p = _positive(p)
            ax.plot(n, p, "-", color=f_color(f), lw=1.6, zorder=2)
            all_n.extend(n)
            if np.isfinite(p).any():
                y_min = min(y_min, float(np.nanmin(p)))

        for f, c in (curves.get("rate") or {}).items():
            n = _array(_get(c, "n", f"{w}['rate'][{f!r}]"), f"{w}['rate'][{f!r}]['n']")
            p = _array(_get(c, "p", f"{w}['rate'][{f!r}]"), f"{w}['rate'][{f!r}]['p']")
            _same_length(f"{w}['rate'][{f!r}]", n=n, p=p)
            ax.plot(n, _positive(p), "--", color=f_color(f), lw=1.0, alpha=0.9, zorder=1)
            all_n.extend(n)

        for f, c in (curves.get("mc") or {}).items():
            wf = f"{w}['mc'][{f!r}]"
            n = _array(_get(c, "n", wf), f"{wf}['n']")
            est = _array(_get(c, "estimate", wf), f"{wf}['estimate']")
            lo = _array(_get(c, "ci_low", wf), f"{wf}['ci_low']")
            hi = _array(_get(c, "ci_high", wf), f"{wf}['ci_high']")
            _same_length(wf, n=n, estimate=est, ci_low=lo, ci_high=hi)
            keep = est >= Y_FLOOR
            if keep.any():
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
                y_min = min(y_min, float(e.min()))
            all_n.extend(n)

        n_seen.extend(all_n)
        ax.set_yscale("log")
        ax.set_title(str(family))
        ax.grid(True, which="major", alpha=0.3)
        if not all_n:
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center")

    _log2_xaxis(flat[0], n_seen)  # shared by every panel
    bottom = max(Y_FLOOR, 10 ** math.floor(math.log10(y_min))) if y_min < 1 else 1e-3
    flat[0].set_ylim(bottom, 1.5)
    for ax in flat[: len(families)]:
        ax.set_xlabel("buckets n")
        ax.set_ylabel("collision probability")
        ax.tick_params(labelleft=True, labelbottom=True)

    style_handles = [
        Line2D([], [], color="0.25", lw=1.6, ls="-", label="exact"),
        _marker_handle("Monte Carlo (95% CI)"),
        Line2D([], [], color="0.25", lw=1.0, ls="--", label="asymptotic rate"),
    ]
    fig.legend(
        handles=style_handles,
        loc="outside upper center",
        ncols=3,
        fontsize=_LEGEND_FONT,
        frameon=False,
    )
    sm = ScalarMappable(norm=F_NORM, cmap=F_CMAP)
    cbar = fig.colorbar(sm, ax=flat[: len(families)], shrink=0.85, pad=0.02)
    cbar.set_label("overlap f")
    if overlaps:
        cbar.set_ticks(sorted(set(overlaps)))
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
    n = _get(data, "n", where)
    f = _array(_get(data, "f", where), f"{where}['f']")
    rho = _get(data, "rho", where)
    fits = data.get("fits") or {}
    if not isinstance(rho, Mapping) or not rho:
        raise ValueError(f"{where}: 'rho' must be a non-empty mapping of family -> list")

    fig = _new_figure(7.8, 4.6)
    ax = fig.add_subplot()
    colors = {fam: CATEGORY_COLORS[i % len(CATEGORY_COLORS)] for i, fam in enumerate(rho)}
    for fam, values in rho.items():
        r = _array(values, f"{where}['rho'][{fam!r}]")
        _same_length(f"{where}['rho'][{fam!r}]", f=f, rho=r)
        ax.plot(f, r, "-", marker="o", ms=3, lw=1.8, color=colors[fam], label=str(fam))

    f_dense = np.linspace(float(np.nanmin(f)), float(np.nanmax(f)), 200) if f.size else f
    for fam, fit in fits.items():
        form = _get(fit, "form", f"{where}['fits'][{fam!r}]")
        c = float(_get(fit, "c", f"{where}['fits'][{fam!r}]"))
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
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=_LEGEND_FONT, frameon=False)
    return fig


# --------------------------------------------------------------------------------------------
# 3. which family collides most
# --------------------------------------------------------------------------------------------


def _edges(centres: np.ndarray) -> np.ndarray:
    """Return cell edges around sorted ``centres`` (midpoints, half a step beyond the ends)."""
    if centres.size == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = (centres[1:] + centres[:-1]) / 2
    return np.concatenate([[2 * centres[0] - mid[0]], mid, [2 * centres[-1] - mid[-1]]])


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
    f = _array(_get(data, "f", where), f"{where}['f']")
    log2n = _array(_get(data, "log2n", where), f"{where}['log2n']")
    labels = [str(x) for x in _get(data, "labels", where)]
    winner = np.asarray(_get(data, "winner", where), dtype=float)
    crossover = _get(data, "crossover", where)
    claimed = _get(data, "claimed", where)
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

    f_order, n_order = np.argsort(f), np.argsort(log2n)
    f, log2n = f[f_order], log2n[n_order]
    winner = winner[np.ix_(n_order, f_order)]

    palette = ["#9ecae1", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9"]
    colors = [palette[i % len(palette)] for i in range(len(labels))]
    cmap = ListedColormap(colors)
    norm = BoundaryNorm(np.arange(len(labels) + 1) - 0.5, cmap.N)

    fig = _new_figure(8.2, 4.8)
    ax = fig.add_subplot()
    ax.pcolormesh(
        _edges(f),
        _edges(log2n),
        np.ma.masked_invalid(winner),
        cmap=cmap,
        norm=norm,
        shading="flat",
        rasterized=True,
    )

    cf = _array(_get(crossover, "f", f"{where}['crossover']"), f"{where}['crossover']['f']")
    cn = _array(_get(crossover, "n", f"{where}['crossover']"), f"{where}['crossover']['n']")
    _same_length(f"{where}['crossover']", f=cf, n=cn)
    kf = _array(_get(claimed, "f", f"{where}['claimed']"), f"{where}['claimed']['f']")
    klo = _array(_get(claimed, "n_lo", f"{where}['claimed']"), f"{where}['claimed']['n_lo']")
    khi = _array(_get(claimed, "n_hi", f"{where}['claimed']"), f"{where}['claimed']['n_hi']")
    _same_length(f"{where}['claimed']", f=kf, n_lo=klo, n_hi=khi)

    def _lg(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(x > 0, np.log2(np.where(x > 0, x, 1.0)), np.nan)

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

    y_lo, y_hi = _edges(log2n)[[0, -1]]
    ax.set_xlim(*_edges(f)[[0, -1]])
    ax.set_ylim(y_lo, y_hi)
    ax.yaxis.set_major_locator(FixedLocator(_pow2_exponents(y_lo, y_hi, max_ticks=9)))
    ax.yaxis.set_major_formatter(FuncFormatter(_pow2_label))
    ax.set_xlabel("overlap f")
    ax.set_ylabel("buckets n (log scale)")
    ax.set_title("Family with the highest collision probability")

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
        fontsize=_LEGEND_FONT,
        title_fontsize=_LEGEND_FONT,
        frameon=False,
    )
    return fig


# --------------------------------------------------------------------------------------------
# 4. sentence cosine
# --------------------------------------------------------------------------------------------

_ROW_KEYS = ("d", "l", "f", "mc_mean", "mc_sd", "theory_mean", "theory_sd")


def plot_sentence_cosine(data: Mapping[str, Any]) -> Figure:
    """Plot sentence-embedding cosine against token overlap, one panel per sentence length ``l``.

    Per dimension ``d`` (one colour each): Monte Carlo mean with ±1 sd error bars (markers, nudged
    sideways by at most 0.012 so dimensions do not hide each other) and the
    theoretical mean as a line with a ±1 sd shaded band; the identity ``cosine = f`` in grey.

    Args:
        data: ``{"rows": [{"d", "l", "f", "mc_mean", "mc_sd", "theory_mean", "theory_sd"}]}``.

    Returns:
        The figure, panels side by side (up to 3 per row) with a shared legend on top.

    Raises:
        KeyError: If ``rows`` or a row key is missing.
        ValueError: If there are no rows.
    """
    where = "sentence_cosine"
    rows = _get(data, "rows", where)
    if not rows:
        raise ValueError(f"{where}: 'rows' must be a non-empty list")
    for i, row in enumerate(rows):
        for key in _ROW_KEYS:
            _get(row, key, f"{where}['rows'][{i}]")

    ls = sorted({int(r["l"]) for r in rows})
    ds = sorted({int(r["d"]) for r in rows})
    colors = {d: CATEGORY_COLORS[i % len(CATEGORY_COLORS)] for i, d in enumerate(ds)}
    f_all = np.unique([float(r["f"]) for r in rows])
    step = float(np.diff(f_all).min()) if f_all.size > 1 else 0.1
    dodge = min(0.012, 0.25 * step / max(1, len(ds)))  # MC markers side by side, not on top
    ncols = min(3, len(ls))
    nrows = math.ceil(len(ls) / ncols)
    fig = _new_figure(3.9 * ncols + 0.4, 3.5 * nrows + 0.5)
    axes = list(fig.subplots(nrows, ncols, squeeze=False, sharey=True).flat)
    for ax in axes[len(ls) :]:
        fig.delaxes(ax)

    for ax, length in zip(axes, ls, strict=False):
        ax.plot([0, 1], [0, 1], ":", color="0.45", lw=1.0, zorder=5)
        for i, d in enumerate(ds):
            sub = sorted(
                (r for r in rows if int(r["l"]) == length and int(r["d"]) == d),
                key=lambda r: float(r["f"]),
            )
            if not sub:
                continue
            f = np.array([float(r["f"]) for r in sub])
            tm = np.array([float(r["theory_mean"]) for r in sub])
            ts = np.array([float(r["theory_sd"]) for r in sub])
            mm = np.array([float(r["mc_mean"]) for r in sub])
            ms = np.array([float(r["mc_sd"]) for r in sub])
            c = colors[d]
            ax.fill_between(f, tm - ts, tm + ts, color=c, alpha=0.18, lw=0, zorder=2)
            ax.plot(f, tm, "-", color=c, lw=1.4, zorder=3)
            ax.errorbar(
                f + dodge * (i - (len(ds) - 1) / 2),
                mm,
                yerr=ms,
                fmt="o",
                ms=3.5,
                color=c,
                mfc="white",
                mew=1.1,
                elinewidth=0.9,
                capsize=2,
                zorder=4,
            )
        ax.set_title(f"sentence length l = {length}")
        ax.set_xlabel("token overlap f")
        ax.set_xlim(0, 1)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelleft=True)
        ax.set_ylabel("cosine similarity")

    handles: list[Any] = [Patch(facecolor=colors[d], label=f"d = {d}") for d in ds]
    handles += [
        _marker_handle("Monte Carlo mean ± 1 sd"),
        Line2D([], [], color="0.25", lw=1.4, label="theory mean (band ± 1 sd)"),
        Line2D([], [], color="0.45", lw=1.0, ls=":", label="cosine = f"),
    ]
    fig.legend(
        handles=handles,
        loc="outside upper center",
        ncols=min(len(handles), 2 if ncols == 1 else 3 * ncols),  # fits the figure's width
        fontsize=_LEGEND_FONT,
        frameon=False,
    )
    return fig


# --------------------------------------------------------------------------------------------
# 5. Token-ID against min-hash
# --------------------------------------------------------------------------------------------


def plot_tokenid_vs_minhash(data: Mapping[str, Any]) -> Figure:
    """Plot per-token Token-ID and min-hash collision rates against overlap with their theory.

    Args:
        data: ``{"f": [...], "tokenid": {"estimate", "ci_low", "ci_high"}, "minhash": {same},
            "curve_f": [...], "jaccard": [...]}``.

    Returns:
        A one-panel figure: Monte Carlo points with 95% CI bars, ``y = f`` for Token-ID and the
        Jaccard curve ``f / (2 - f)`` for min-hash.

    Raises:
        KeyError: If a required key is missing.
        ValueError: If list lengths do not match.
    """
    where = "tokenid_vs_minhash"
    f = _array(_get(data, "f", where), f"{where}['f']")
    curve_f = _array(_get(data, "curve_f", where), f"{where}['curve_f']")
    jac = _array(_get(data, "jaccard", where), f"{where}['jaccard']")
    _same_length(f"{where}['curve_f'/'jaccard']", curve_f=curve_f, jaccard=jac)

    fig = _new_figure(6.0, 4.6)
    ax = fig.add_subplot()
    ax.plot(
        [0, 1],
        [0, 1],
        "-",
        color=CATEGORY_COLORS[0],
        lw=1.2,
        alpha=0.8,
        label="y = f (Token-ID theory)",
    )
    ax.plot(
        curve_f,
        jac,
        "-",
        color=CATEGORY_COLORS[4],
        lw=1.2,
        alpha=0.8,
        label="Jaccard f / (2 − f) (min-hash theory)",
    )
    for key, name, color, marker in (
        ("tokenid", "Token-ID per token", CATEGORY_COLORS[0], "o"),
        ("minhash", "min-hash", CATEGORY_COLORS[4], "s"),
    ):
        block = _get(data, key, where)
        w = f"{where}[{key!r}]"
        est = _array(_get(block, "estimate", w), f"{w}['estimate']")
        lo = _array(_get(block, "ci_low", w), f"{w}['ci_low']")
        hi = _array(_get(block, "ci_high", w), f"{w}['ci_high']")
        _same_length(w, f=f, estimate=est, ci_low=lo, ci_high=hi)
        yerr = np.vstack([np.clip(est - lo, 0, None), np.clip(hi - est, 0, None)])
        ax.errorbar(
            f,
            est,
            yerr=yerr,
            fmt=marker,
            ms=4.5,
            color=color,
            mfc="white",
            mew=1.2,
            elinewidth=1.0,
            capsize=2.5,
            label=f"{name}: Monte Carlo (95% CI)",
            zorder=3,
        )

    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("token overlap f")
    ax.set_ylabel("collision rate")
    ax.set_title("Token-ID against min-hash collision rate")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=_LEGEND_FONT, framealpha=0.9)
    return fig


# --------------------------------------------------------------------------------------------
# registry and saving
# --------------------------------------------------------------------------------------------

#: Data key name -> figure function.
FIGURES: dict[str, Callable[[Mapping[str, Any]], Figure]] = {
    "collision_vs_n": plot_collision_vs_n,
    "rho_vs_f": plot_rho_vs_f,
    "ordering_map": plot_ordering_map,
    "sentence_cosine": plot_sentence_cosine,
    "tokenid_vs_minhash": plot_tokenid_vs_minhash,
}


def save_figure(fig: Figure, stem: Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write ``fig`` to ``stem.<fmt>`` for each format, atomically.

    Each file is first written to a hidden temporary file in the target directory and then moved
    into place with :func:`os.replace`, so readers never see a partial figure. PNG files are
    written at :data:`PNG_DPI`; SVG output carries no date, so it is reproducible.

    Args:
        fig: The figure to save.
        stem: Output path without extension (any suffix in the name is kept, e.g. ``fig.v1``).
            Missing parent directories are created.
        formats: File formats (extensions) supported by matplotlib, e.g. ``("png", "svg")``.

    Returns:
        The written paths, in the order of ``formats``.

    Raises:
        ValueError: If a format is not supported.
    """
    stem = Path(stem)
    supported = fig.canvas.get_supported_filetypes()
    for fmt in formats:
        if fmt not in supported:
            raise ValueError(f"format {fmt!r} is not supported; choose from {sorted(supported)}")
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        target = stem.parent / f"{stem.name}.{fmt}"
        kwargs: dict[str, Any] = {"format": fmt}
        if fmt == "png":
            kwargs["dpi"] = PNG_DPI
        elif fmt == "svg":
            kwargs["metadata"] = {"Date": None}
        fd, tmp = tempfile.mkstemp(prefix=f".{stem.name}.", suffix=f".{fmt}.tmp", dir=stem.parent)
        try:
            # a fixed salt makes the SVG element ids, hence the files, identical run to run
            with os.fdopen(fd, "wb") as fh, matplotlib.rc_context({"svg.hashsalt": "lshsim"}):
                fig.savefig(fh, **kwargs)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(target)
    return written
