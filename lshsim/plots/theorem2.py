"""The Theorem 2 width figure: held-out loss of both students against width / d.

Data in (the dict of :func:`lshsim.theorems.theorem2.run_sweep`, or its JSON), a
:class:`matplotlib.figure.Figure` out; nothing touches pyplot's global state. Save it with
:func:`lshsim.plots.save_figure`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

__all__ = ["ARCH_STYLE", "width_figure"]

#: Colour, marker and legend label of each architecture.
ARCH_STYLE: dict[str, dict[str, str]] = {
    "A": {"color": "#d95f02", "marker": "o", "label": "A: lookup at the input only"},
    "B": {"color": "#1b9e77", "marker": "s", "label": "B: lookups at every layer + output"},
}


def _get(data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        raise KeyError(f"width_figure: missing key {key!r}")
    return data[key]


def _arch_curves(
    ax: Any, arch: str, style: dict[str, str], mine: list, minimal_d: Mapping[str, Any]
) -> None:
    """One architecture in a panel: median line, min-max band, per-seed points, minimal width."""
    ratios = sorted({float(r["width_over_d"]) for r in mine})
    losses = [[float(r["heldout_nmse"]) for r in mine if r["width_over_d"] == x] for x in ratios]
    med = np.array([np.median(v) for v in losses])
    ax.fill_between(
        ratios, [min(v) for v in losses], [max(v) for v in losses],
        color=style["color"], alpha=0.18, lw=0,
    )  # fmt: skip
    for x, v in zip(ratios, losses, strict=True):
        ax.plot([x] * len(v), v, ls="none", marker=style["marker"], ms=3,
                color=style["color"], alpha=0.5)  # fmt: skip
    ax.plot(ratios, med, color=style["color"], marker=style["marker"], label=style["label"])
    found = minimal_d.get(arch, {}).get("median_over_d")
    if found is not None:
        ax.axvline(found, color=style["color"], ls=":", lw=1.5)
        ax.annotate(
            f"median min width\n{arch} = {found:g} d", xy=(found, 1.0),
            xycoords=("data", "axes fraction"), xytext=(3, -4),
            textcoords="offset points", va="top", fontsize=8, color=style["color"],
        )  # fmt: skip
    else:
        ax.text(
            0.98, 0.02 if arch == "A" else 0.08, f"{arch}: target not reached",
            transform=ax.transAxes, ha="right", fontsize=8, color=style["color"],
        )  # fmt: skip


def width_figure(data: Mapping[str, Any]) -> Figure:
    """Held-out normalised MSE against width / d, one panel per teacher width ``d``.

    Each architecture gets its median over seeds (line), the min-max band over seeds and the
    per-seed points; a dashed line marks the target loss and vertical dotted lines the median
    minimal widths (where the target is reached), with the theory's widths ``d`` (B) and
    ``2d`` (A) shaded lightly for reference.

    Args:
        data: ``run_sweep``'s result: ``config`` (``dims``, ``target_loss``, ``teacher_depth``,
            ``student_depth``, ``n_categories``, ``steps``, ``seeds``), ``rows`` and ``minimal``.

    Returns:
        The figure.

    Raises:
        KeyError: If a required key is missing.
        ValueError: If there are no rows for a ``d`` of the config.
    """
    config, rows, minimal = _get(data, "config"), _get(data, "rows"), _get(data, "minimal")
    dims = [int(d) for d in _get(config, "dims")]
    target = float(_get(config, "target_loss"))
    fig = Figure(figsize=(max(7.0, 5.2 * len(dims)), 5.0), layout="constrained")
    axes = fig.subplots(1, len(dims), squeeze=False)[0]
    for ax, d in zip(axes, dims, strict=True):
        panel = [r for r in rows if int(r["d"]) == d]
        if not panel:
            raise ValueError(f"width_figure: no rows for d={d}")
        ax.axvspan(0.96, 1.04, color=ARCH_STYLE["B"]["color"], alpha=0.25, lw=0)
        ax.axvspan(1.96, 2.04, color=ARCH_STYLE["A"]["color"], alpha=0.25, lw=0)
        for arch, style in ARCH_STYLE.items():
            mine = [r for r in panel if r["arch"] == arch]
            if mine:
                _arch_curves(ax, arch, style, mine, minimal.get(str(d), {}))
        ax.axhline(target, color="0.3", ls="--", lw=1, label=f"target loss {target:g}")
        ax.set_yscale("log")
        ax.set_xlabel("student width w / d")
        ax.set_ylabel("held-out normalised MSE (1 - R²)")
        ax.set_title(f"teacher width d = {d}")
        ax.grid(True, which="both", alpha=0.25)
    handles, labels = axes[0].get_legend_handles_labels()
    for arch, what in (("B", "B exact at w = d"), ("A", "A exact at w = 2d")):
        handles.append(Patch(color=ARCH_STYLE[arch]["color"], alpha=0.25))
        labels.append(f"construction: {what}")
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    fig.suptitle(
        "Theorem 2: how wide must a student be to fit y = <Psi(u), Phi(q)>?\n"
        f"teacher Phi: ReLU MLP of width d, depth {config.get('teacher_depth')}; "
        f"ReGLU students of depth {config.get('student_depth')}; "
        f"N = {config.get('n_categories')} categories; {config.get('steps')} online steps; "
        f"{config.get('seeds')} seeds (line: median, band: min-max)",
        fontsize=9,
    )
    return fig
