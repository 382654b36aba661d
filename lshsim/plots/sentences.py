"""Figures of the sentence-pair studies, data in and :class:`Figure` out.

The sentence model's cosine against the token overlap ``f`` (the exact sampler against the
moment formulas, one panel per sentence length), and Token-ID's per-token collision rate
against min-hash's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lshsim.hashing import MinHash, TokenID
from lshsim.plots.style import (
    CATEGORY_COLORS,
    LEGEND_FONT,
    as_array,
    get_key,
    marker_handle,
    new_figure,
    same_length,
)

__all__ = ["plot_sentence_cosine", "plot_tokenid_vs_minhash"]

_ROW_KEYS = ("d", "l", "f", "mc_mean", "mc_sd", "theory_mean", "theory_sd")


def _dimension(ax: Any, sub: Sequence[Mapping[str, Any]], color: Any, shift: float) -> None:
    """One dimension's theory mean (line, ±1 sd band) and Monte Carlo mean ± sd (markers)."""
    f = np.array([float(r["f"]) for r in sub])
    tm = np.array([float(r["theory_mean"]) for r in sub])
    ts = np.array([float(r["theory_sd"]) for r in sub])
    mm = np.array([float(r["mc_mean"]) for r in sub])
    ms = np.array([float(r["mc_sd"]) for r in sub])
    ax.fill_between(f, tm - ts, tm + ts, color=color, alpha=0.18, lw=0, zorder=2)
    ax.plot(f, tm, "-", color=color, lw=1.4, zorder=3)
    ax.errorbar(
        f + shift,
        mm,
        yerr=ms,
        fmt="o",
        ms=3.5,
        color=color,
        mfc="white",
        mew=1.1,
        elinewidth=0.9,
        capsize=2,
        zorder=4,
    )


def _length_panel(
    ax: Any, rows: Sequence[Mapping[str, Any]], length: int, colors: dict, dodge: float
) -> None:
    """The panel of sentence length ``length``: every dimension, and ``cosine = f``."""
    ds = list(colors)
    ax.plot([0, 1], [0, 1], ":", color="0.45", lw=1.0, zorder=5)
    for i, d in enumerate(ds):
        sub = sorted(
            (r for r in rows if int(r["l"]) == length and int(r["d"]) == d),
            key=lambda r: float(r["f"]),
        )
        if sub:
            _dimension(ax, sub, colors[d], dodge * (i - (len(ds) - 1) / 2))
    ax.set_title(f"sentence length l = {length}")
    ax.set_xlabel("token overlap f")
    ax.set_xlim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.tick_params(labelleft=True)
    ax.set_ylabel("cosine similarity")


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
    rows = get_key(data, "rows", where)
    if not rows:
        raise ValueError(f"{where}: 'rows' must be a non-empty list")
    for i, row in enumerate(rows):
        for key in _ROW_KEYS:
            get_key(row, key, f"{where}['rows'][{i}]")

    ls = sorted({int(r["l"]) for r in rows})
    ds = sorted({int(r["d"]) for r in rows})
    colors = {d: CATEGORY_COLORS[i % len(CATEGORY_COLORS)] for i, d in enumerate(ds)}
    f_all = np.unique([float(r["f"]) for r in rows])
    step = float(np.diff(f_all).min()) if f_all.size > 1 else 0.1
    dodge = min(0.012, 0.25 * step / max(1, len(ds)))  # MC markers side by side, not on top
    ncols = min(3, len(ls))
    nrows = math.ceil(len(ls) / ncols)
    fig = new_figure(3.9 * ncols + 0.4, 3.5 * nrows + 0.5)
    axes = list(fig.subplots(nrows, ncols, squeeze=False, sharey=True).flat)
    for ax in axes[len(ls) :]:
        fig.delaxes(ax)
    for ax, length in zip(axes, ls, strict=False):
        _length_panel(ax, rows, length, colors, dodge)

    handles: list[Any] = [Patch(facecolor=colors[d], label=f"d = {d}") for d in ds]
    handles += [
        marker_handle("Monte Carlo mean ± 1 sd"),
        Line2D([], [], color="0.25", lw=1.4, label="theory mean (band ± 1 sd)"),
        Line2D([], [], color="0.45", lw=1.0, ls=":", label="cosine = f"),
    ]
    fig.legend(
        handles=handles,
        loc="outside upper center",
        ncols=min(len(handles), 2 if ncols == 1 else 3 * ncols),  # fits the figure's width
        fontsize=LEGEND_FONT,
        frameon=False,
    )
    return fig


# --------------------------------------------------------------------------------------------
# Token-ID against min-hash
# --------------------------------------------------------------------------------------------


def _tokenid_minhash_points(ax: Any, data: Mapping[str, Any], f: np.ndarray, where: str) -> None:
    """Token-ID's and min-hash's Monte Carlo rates with 95% CI bars."""
    for family, name, color, marker in (
        (TokenID, "Token-ID per token", CATEGORY_COLORS[0], "o"),
        (MinHash, "min-hash", CATEGORY_COLORS[4], "s"),
    ):
        key = family.name
        block = get_key(data, key, where)
        w = f"{where}[{key!r}]"
        est = as_array(get_key(block, "estimate", w), f"{w}['estimate']")
        lo = as_array(get_key(block, "ci_low", w), f"{w}['ci_low']")
        hi = as_array(get_key(block, "ci_high", w), f"{w}['ci_high']")
        same_length(w, f=f, estimate=est, ci_low=lo, ci_high=hi)
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
    f = as_array(get_key(data, "f", where), f"{where}['f']")
    curve_f = as_array(get_key(data, "curve_f", where), f"{where}['curve_f']")
    jac = as_array(get_key(data, "jaccard", where), f"{where}['jaccard']")
    same_length(f"{where}['curve_f'/'jaccard']", curve_f=curve_f, jaccard=jac)

    fig = new_figure(6.0, 4.6)
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
    _tokenid_minhash_points(ax, data, f, where)

    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("token overlap f")
    ax.set_ylabel("collision rate")
    ax.set_title("Token-ID against min-hash collision rate")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=LEGEND_FONT, framealpha=0.9)
    return fig
