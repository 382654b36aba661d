"""Figures of the memory studies (:mod:`lshsim.studies.memory`): data in, Figure out.

Each study compares model variants trained with a few seeds. A figure has one panel per metric
(by default held-out span accuracy, the paper's "pretrain accuracy", and held-out
cross-entropy; :data:`CONTENT_ACCURACY` is an optional third) and shows for
every variant its per-seed values (small open markers), their mean (a filled marker) and a
95% Student-t interval of the mean. The baseline's mean is drawn across each panel as a dashed
reference line, its interval as a grey band.

Two layouts:

* :func:`plot_groups`: one column per variant (Tables 1, 4 and 5 of the paper), coloured by
  series (the lookup method, say);
* :func:`plot_sweep`: Figure 2's layout, the softmax lookup's rank on the x axis and one line
  per bucket count.

Figures are built with :class:`matplotlib.figure.Figure` (no pyplot state, any backend).
Save them with :func:`lshsim.plots.save_figure`.

References:
    The paper, Tables 1, 4-8 and Figure 2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from lshsim.plots.style import CATEGORY_COLORS

__all__ = ["CONTENT_ACCURACY", "METRICS", "plot_groups", "plot_sweep", "t_interval"]

#: Default panels of a figure: (key of the per-seed values, axis label).
METRICS = (
    ("accuracy", "held-out span accuracy"),
    ("loss", "held-out cross-entropy (nats/token)"),
)
#: An optional panel: accuracy on the span-content tokens only (no sentinels, no EOS).
CONTENT_ACCURACY = ("content_accuracy", "span-content accuracy\n(no sentinels, EOS)")


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of the mean of ``values``.

    Args:
        values: one value per seed (non-finite values are dropped).
        confidence: coverage of the interval, in ``(0, 1)``.

    Returns:
        ``(mean, lo, hi)``; ``lo`` and ``hi`` are NaN with fewer than two values, all three
        NaN with none.

    Raises:
        ValueError: if ``confidence`` is not in ``(0, 1)``.
    """
    from scipy import stats

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence: must be in (0, 1), got {confidence!r}")
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if x.size < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half


def _values(group: Mapping[str, Any], key: str, where: str) -> list[float]:
    if key not in group:
        raise KeyError(f"{where}: group {group.get('label', '?')!r} has no {key!r} values")
    return [math.nan if v is None else float(v) for v in group[key]]


def _baseline_band(ax: Any, values: Sequence[float]) -> None:
    """Dashed line at the baseline mean, grey band over its interval."""
    mean, lo, hi = t_interval(values)
    if not math.isfinite(mean):
        return
    ax.axhline(mean, color="0.3", ls="--", lw=1, zorder=1, label="baseline mean")
    if math.isfinite(lo):
        ax.axhspan(lo, hi, color="0.85", zorder=0, lw=0)


def _seed_offsets(n: int, width: float) -> np.ndarray:
    """Horizontal offsets of ``n`` per-seed markers around their column."""
    return np.linspace(-width, width, n) if n > 1 else np.zeros(n)


def _errorbar(ax: Any, x: float, values: Sequence[float], color: Any, **kw: Any) -> None:
    mean, lo, hi = t_interval(values)
    if not math.isfinite(mean):
        return
    err = None if not math.isfinite(lo) else [[mean - lo], [hi - mean]]
    ax.errorbar([x], [mean], yerr=err, fmt="o", color=color, ms=6, capsize=4, lw=1.5, **kw)


def plot_groups(
    groups: Sequence[Mapping[str, Any]],
    *,
    title: str = "",
    baseline: str | None = "Baseline",
    metrics: Sequence[tuple[str, str]] = METRICS,
) -> Figure:
    """One column per variant: per-seed values, mean and 95% t-interval, baseline reference.

    Args:
        groups: in column order, mappings with ``label`` (the column's name), optional
            ``series`` (variants of one series share a colour and a legend entry), and one
            list of per-seed values per metric (``accuracy``, ``loss``).
        title: the figure's title.
        baseline: the label of the group drawn as the reference line (None: none).
        metrics: the panels, top to bottom: (key, axis label) pairs.

    Returns:
        A figure with one panel per metric and one x tick per group.

    Raises:
        KeyError: if a group lacks ``label`` or a metric.
        ValueError: if ``groups`` is empty.
    """
    if not groups:
        raise ValueError("groups: nothing to plot")
    labels = [g["label"] for g in groups]
    series = list(dict.fromkeys(g.get("series") or g["label"] for g in groups))
    colors = {s: CATEGORY_COLORS[i % len(CATEGORY_COLORS)] for i, s in enumerate(series)}
    base = next((g for g in groups if g["label"] == baseline), None) if baseline else None
    width = max(6.0, 0.55 * len(groups) + 2.5)
    fig = Figure(figsize=(width, 1.2 + 2.9 * len(metrics)), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(metrics), 1, sharex=True))
    for ax, (key, ylabel) in zip(axes, metrics, strict=True):
        if base is not None:
            _baseline_band(ax, _values(base, key, "plot_groups"))
        seen: set[str] = set()
        for i, g in enumerate(groups):
            vals = _values(g, key, "plot_groups")
            s = g.get("series") or g["label"]
            color = "0.3" if base is not None and g is base else colors[s]
            xs = i + _seed_offsets(len(vals), 0.12)
            ax.scatter(xs, vals, s=14, facecolors="white", edgecolors=color, zorder=3)
            label = None if s in seen or len(series) == len(groups) else s
            seen.add(s)
            _errorbar(ax, i, vals, color, zorder=4, label=label)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", color="0.92", lw=0.8)
        ax.set_axisbelow(True)
    axes[-1].set_xticks(range(len(groups)))
    axes[-1].set_xticklabels(labels, rotation=30, ha="right", fontsize="small")
    axes[0].set_xlim(-0.6, len(groups) - 0.4)
    handles, names = axes[0].get_legend_handles_labels()
    if handles:
        axes[0].legend(handles, names, fontsize="small", loc="best")
    n = max(len(g["accuracy"]) for g in groups)
    note = f"{n} seed{'s' if n != 1 else ''}; open: per seed, filled: mean with 95% t-interval"
    fig.suptitle(f"{title}\n{note}" if title else note, fontsize="medium")
    return fig


def plot_sweep(
    cells: Sequence[Mapping[str, Any]],
    *,
    baseline: Mapping[str, Any] | None = None,
    title: str = "",
    metrics: Sequence[tuple[str, str]] = METRICS,
) -> Figure:
    """Figure 2's layout: rank on the x axis, one line per bucket count.

    Args:
        cells: mappings with ``rank``, ``buckets`` and per-seed ``accuracy`` and ``loss``
            lists, one per (rank, buckets) cell of the sweep.
        baseline: per-seed ``accuracy`` and ``loss`` of the model without lookup, drawn as the
            reference line (None: none).
        title: the figure's title.
        metrics: the panels, top to bottom: (key, axis label) pairs.

    Returns:
        A figure with one panel per metric; ranks are evenly spaced categories, and each
        bucket count is one line (a legend entry) through its cells' means.

    Raises:
        KeyError: if a cell lacks a field.
        ValueError: if ``cells`` is empty.
    """
    if not cells:
        raise ValueError("cells: nothing to plot")
    ranks = sorted({int(c["rank"]) for c in cells})
    buckets = sorted({int(c["buckets"]) for c in cells})
    xpos = {r: i for i, r in enumerate(ranks)}
    dodge = 0.08 if len(buckets) > 1 else 0.0
    shift = {b: (j - (len(buckets) - 1) / 2) * dodge for j, b in enumerate(buckets)}
    width = max(6.0, 1.3 * len(ranks) + 3.0)
    fig = Figure(figsize=(width, 1.2 + 2.9 * len(metrics)), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(metrics), 1, sharex=True))
    for ax, (key, ylabel) in zip(axes, metrics, strict=True):
        if baseline is not None:
            _baseline_band(ax, _values(baseline, key, "plot_sweep"))
        for j, b in enumerate(buckets):
            color = CATEGORY_COLORS[j % len(CATEGORY_COLORS)]
            row = sorted((c for c in cells if int(c["buckets"]) == b), key=lambda c: c["rank"])
            xs, means = [], []
            for c in row:
                vals = _values(c, key, "plot_sweep")
                x = xpos[int(c["rank"])] + shift[b]
                offs = _seed_offsets(len(vals), 0.025)
                ax.scatter(x + offs, vals, s=12, facecolors="white", edgecolors=color, zorder=3)
                _errorbar(ax, x, vals, color, zorder=4)
                xs.append(x)
                means.append(t_interval(vals)[0])
            ax.plot(xs, means, color=color, lw=1.2, zorder=2, label=f"{b} buckets")
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", color="0.92", lw=0.8)
        ax.set_axisbelow(True)
    axes[-1].set_xticks(range(len(ranks)))
    axes[-1].set_xticklabels([str(r) for r in ranks])
    axes[-1].set_xlabel("expert rank")
    axes[0].legend(fontsize="small", loc="best")
    n = max(len(c["accuracy"]) for c in cells)
    note = f"{n} seed{'s' if n != 1 else ''}; open: per seed, filled: mean with 95% t-interval"
    fig.suptitle(f"{title}\n{note}" if title else note, fontsize="medium")
    return fig
