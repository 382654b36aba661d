"""Figure of the frequency-aware collision study (:mod:`lshsim.studies.frequency`).

Left: the share of occurrences whose bucket holds another distinct key against the table size
relative to the distinct keys ``m / D``, per table (lines: the ideal-hash law, shaded +-2 sd
over hash draws; points: the real hashes). Middle: per frequency band (bars: measured; error
bars: the law's mean +- 2 sd). Right: the LongCat panel, 2-gram tables at ``m = k V + delta``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from lshsim.plots.style import CATEGORY_COLORS, LEGEND_FONT, as_array, get_key, new_figure

_WHERE = "frequency_collisions"


def _table_panel(ax, data: Mapping[str, Any]) -> None:
    tables = get_key(data, "tables", _WHERE)
    distinct = {True: get_key(data, "distinct_bigrams", _WHERE),
                False: get_key(data, "distinct_tokens", _WHERE)}  # fmt: skip
    i = 0
    for name, s in tables.items():
        d = distinct["N=2" in name]
        x = as_array(get_key(s, "m", _WHERE), _WHERE) / d
        curve = get_key(s, "law", _WHERE)
        xl = as_array(curve["m"], _WHERE) / d
        events = ["head 0", "all", "any"] if "head 1" in s else ["head 0"]
        for event in events:
            mean = as_array(curve[event]["mean"], _WHERE)
            sd = as_array(curve[event]["sd"], _WHERE)
            color = CATEGORY_COLORS[i % len(CATEGORY_COLORS)]
            label = name if event == "head 0" else f"{name}, {event} heads"
            ax.plot(xl, mean, color=color, lw=1.2)
            ax.fill_between(xl, np.clip(mean - 2 * sd, 0, 1), np.clip(mean + 2 * sd, 0, 1),
                            color=color, alpha=0.15, lw=0)  # fmt: skip
            ax.plot(x, as_array(s[event]["measured"], _WHERE), "o", color=color, mfc="white",
                    ms=5, label=label)  # fmt: skip
            i += 1
    ax.set_xscale("log", base=2)
    ax.set_xlabel("table size / distinct keys, m / D")
    ax.set_ylabel("share of occurrences colliding")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=LEGEND_FONT)


def _band_panel(ax, data: Mapping[str, Any]) -> None:
    bands = get_key(data, "bands", _WHERE)
    names = bands["names"]
    tables = [k for k in bands if k not in ("names", "m_ngram", "m_productkey")]
    width = 0.8 / len(tables)
    for t, name in enumerate(tables):
        rows = bands[name]
        x = np.arange(len(names)) + (t - (len(tables) - 1) / 2) * width
        measured = [r["shares"]["head 0"]["measured"] for r in rows]
        mean = np.array([r["shares"]["head 0"]["mean"] for r in rows])
        sd = np.array([r["shares"]["head 0"]["sd"] for r in rows])
        color = CATEGORY_COLORS[(t + 2) % len(CATEGORY_COLORS)]
        ax.bar(x, measured, width, color=color, alpha=0.6, label=f"{name}, head 0")
        ax.errorbar(x, mean, yerr=2 * sd, fmt="_", color="0.2", capsize=3)
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_xlabel("key types by frequency")
    ax.set_ylabel("share colliding (bars: measured; law +-2 sd)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=LEGEND_FONT)


def _longcat_panel(ax, data: Mapping[str, Any]) -> None:
    lc = get_key(data, "longcat", _WHERE)
    x = as_array(lc["offsets"], _WHERE)
    mean, sd = as_array(lc["mean"], _WHERE), as_array(lc["sd"], _WHERE)
    ax.plot(x, mean, color="0.3", lw=1.2, label="law (ideal hash)")
    ax.fill_between(x, mean - 2 * sd, mean + 2 * sd, color="0.3", alpha=0.15, lw=0)
    ax.plot(x, as_array(lc["hashed"], _WHERE), "o", color=CATEGORY_COLORS[0], mfc="white",
            label="n-gram family")  # fmt: skip
    ax.plot(x, as_array(lc["polynomial"], _WHERE), "s", color=CATEGORY_COLORS[4],
            label="polynomial id x1 V + x2")  # fmt: skip
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel(f"delta: m = {lc['k']} V + delta (V = {lc['vocab']})")
    ax.set_ylabel("2-gram share colliding")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=LEGEND_FONT)


def plot_frequency_collisions(data: Mapping[str, Any]) -> Figure:
    """The three panels of the module docstring from the study's data."""
    fig = new_figure(15, 4.2)
    axes = fig.subplots(1, 3)
    _table_panel(axes[0], data)
    _band_panel(axes[1], data)
    _longcat_panel(axes[2], data)
    axes[0].set_title("collision share against table size")
    axes[1].set_title("per frequency band (m ~ D)")
    axes[2].set_title("LongCat: sizes near a multiple of V")
    return fig
