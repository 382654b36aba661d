"""Figures of the routing probe (:mod:`lshsim.t5.probe`): data in, Figure out.

* :func:`plot_routing_init`: one panel per lookup, collision rate against the overlap ``f``
  for every layer: the measured rates with their 95% intervals (markers), the theory given
  the measured cosines (solid line) and the paper's idealisation, the theory at cosine ``f``
  (dashed grey).
* :func:`plot_routing_trained`: measured against predicted, one point per (layer, overlap),
  at initialisation and after training, with the diagonal ``measured = predicted``.

Figures are built with :class:`matplotlib.figure.Figure` (no pyplot state, any backend); save
them with :func:`lshsim.plots.save_figure`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from lshsim.plots.style import CATEGORY_COLORS

__all__ = ["plot_hf_router", "plot_routing_init", "plot_routing_trained", "plot_tap"]

_THEORY = {
    "softmax": "Voronoi",
    "lsh": "SimHash",
    "tokenid": "token equality",
    "productkey": "Voronoi(s) x Voronoi(s)",
    "ngram": "2-gram equality + 1/m",
}


def _layers(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["layer"] for r in rows))


def _column(rows, layer: str, key: str) -> np.ndarray:
    return np.array([r[key] for r in rows if r["layer"] == layer], dtype=np.float64)


def _errorbars(ax, rows, layer: str, i: int, x: np.ndarray, **kw) -> None:
    """A layer's measured rates at ``x`` with their 95% intervals, in the layer's colour."""
    m = _column(rows, layer, "measured")
    lo, hi = _column(rows, layer, "ci_low"), _column(rows, layer, "ci_high")
    color = CATEGORY_COLORS[i % len(CATEGORY_COLORS)]
    ax.errorbar(x, m, yerr=[m - lo, hi - m], fmt="o", ms=4, color=color, capsize=2, **kw)


def plot_routing_init(data: Mapping[str, Any]) -> Figure:
    """Collision rate against ``f`` per layer, at initialisation, one panel per lookup.

    Args:
        data: ``{"lookups": {name: {"rows": [...], "buckets": n}}, "config": str}`` with the
            probe's rows (:data:`lshsim.t5.probe.ROW_KEYS`).
    """
    lookups = data["lookups"]
    fig = Figure(figsize=(4.2 * len(lookups), 3.8), layout="constrained")
    axes = fig.subplots(1, len(lookups), squeeze=False)[0]
    for ax, (name, entry) in zip(axes, lookups.items(), strict=True):
        rows = entry["rows"]
        for i, layer in enumerate(_layers(rows)):
            f = _column(rows, layer, "overlap")
            _errorbars(
                ax, rows, layer, i, f + 0.006 * (i - 1.5), mfc="none", label=f"{layer} measured"
            )
            color = CATEGORY_COLORS[i % len(CATEGORY_COLORS)]
            ax.plot(f, _column(rows, layer, "predicted"), "-", color=color, lw=1.2)
        f = _column(rows, _layers(rows)[0], "overlap")
        ax.plot(
            f,
            _column(rows, _layers(rows)[0], "predicted_at_f"),
            "--",
            color="0.45",
            lw=1.2,
            label="theory at cosine f",
        )
        ax.set_title(
            f"{name} ({entry['buckets']} buckets): theory = {_THEORY.get(name, name)}",
            fontsize="medium",
        )
        ax.set_xlabel("token overlap f of the sentence pair")
        ax.set_ylabel("P(same bucket) at an aligned position")
        ax.set_ylim(0, 1)
        ax.set_xlim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].plot([], [], "-", color="0.2", label="theory given measured cosines")
    axes[0].legend(fontsize="x-small", loc="upper left")
    fig.suptitle(
        f"Routing probe at initialisation ({data.get('config', '')}): measured (95% CI) vs theory",
        fontsize="medium",
    )
    return fig


def plot_routing_trained(data: Mapping[str, Any]) -> Figure:
    """Measured against predicted per (layer, overlap), before and after training.

    Args:
        data: ``{"lookups": {name: {"before": {"rows": [...]}, "after": {"rows": [...]},
            "steps": int, "buckets": int}}, "config": str}``; one row of panels per lookup.
    """
    lookups = data["lookups"]
    fig = Figure(figsize=(8.6, 4.1 * len(lookups)), layout="constrained")
    axes = fig.subplots(len(lookups), 2, sharex=True, sharey=True, squeeze=False)
    for row, (name, entry) in zip(axes, lookups.items(), strict=True):
        titles = {
            "before": f"{name} ({entry['buckets']} buckets) at initialisation",
            "after": f"{name} after {entry['steps']} training steps",
        }
        for ax, key in zip(row, ("before", "after"), strict=True):
            rows = entry[key]["rows"]
            for i, layer in enumerate(_layers(rows)):
                _errorbars(ax, rows, layer, i, _column(rows, layer, "predicted"), label=layer)
            ax.plot([0, 1], [0, 1], "--", color="0.5", lw=1, label="measured = predicted")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_aspect("equal")
            ax.grid(alpha=0.3)
            ax.set_title(titles[key], fontsize="medium")
            ax.set_ylabel("measured collision rate (95% CI)")
        row[0].legend(fontsize="x-small", loc="upper left")
    for ax in axes[-1]:
        ax.set_xlabel("predicted: random-lookup theory at the measured cosines")
    fig.suptitle(
        f"Routing probe of {data.get('config', '')} before and after training: on the diagonal "
        "= routes like a random lookup",
        fontsize="medium",
    )
    return fig


def _draw_tap(ax, data: Mapping[str, Any], title: str) -> None:
    """One tapped router's panel: measured (95% CI) and predicted per layer, the law's curve."""
    rows, curve = data["rows"], data["curve"]
    x_key = curve["x"]
    for i, layer in enumerate(_layers(rows)):
        _errorbars(ax, rows, layer, i, _column(rows, layer, x_key), label=layer)
        color = CATEGORY_COLORS[i % len(CATEGORY_COLORS)]
        ax.plot(_column(rows, layer, x_key), _column(rows, layer, "predicted"), "x", color=color)
    if curve["law"] is not None:
        ax.plot(curve["at"], curve["law"], "--", color="0.45", lw=1.2, label="random router")
    ax.plot([], [], "x", color="0.2", label="random router at the measured cosines")
    what = "top-1 agreement" if data["top_k"] == 1 else f"top-{data['top_k']} overlap"
    ax.set_xlabel("cosine of the router inputs" if x_key == "cosine" else "token overlap f")
    ax.set_ylabel(f"{what} at an aligned position")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left", ncol=2)
    ax.set_title(title, fontsize="medium")


def plot_tap(data: Mapping[str, Any]) -> Figure:
    """A tapped router's collisions against the cosine per layer, beside the random-router law.

    Args:
        data: :func:`lshsim.probe.measure.describe`'s dict: ``model``, ``law``, ``experts``,
            ``top_k``, ``rows`` and ``curve`` (``x`` is ``"cosine"``, or ``"overlap"`` for a
            hash of token ids; ``at`` and ``law``, ``law`` ``None`` where it has no closed
            curve).
    """
    fig = Figure(figsize=(5.6, 4.2), layout="constrained")
    title = f"{data['model']}: {data['experts']} experts, law {data['law']} (95% CI)"
    _draw_tap(fig.subplots(), data, title)
    return fig


def plot_hf_router(data: Mapping[str, Any]) -> Figure:
    """The trained tiny Mixtral beside itself at initialisation (``routing_hf``'s data).

    Args:
        data: ``{"model": {...}, "before": describe-dict, "after": describe-dict,
            "train": {"steps": ...}}``.
    """
    fig = Figure(figsize=(10.4, 4.2), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    steps = data["train"]["steps"]
    for ax, key, label in zip(
        axes, ("before", "after"), ("at initialisation", f"after {steps} steps"), strict=True
    ):
        _draw_tap(ax, data[key], f"tiny Mixtral {label}")
    fig.suptitle(
        f"A Mixtral router ({data['model']['experts']} experts, top-{data['model']['top_k']}) "
        "against a random router at the same cosines",
        fontsize="medium",
    )
    return fig
