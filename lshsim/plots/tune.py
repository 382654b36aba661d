"""The tuned scheme's S-curve: ``P_{k,L}(s)`` against the similarity, with the targets."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

__all__ = ["plot_tuning"]


def plot_tuning(
    similarities: np.ndarray, curve: np.ndarray, single: np.ndarray, data: dict
) -> Figure:
    """One panel: the amplified S-curve, one function's law, and the thresholds.

    Args:
        similarities: float64[S], the x axis.
        curve: ``P_{k,L}`` at each similarity (the tuned scheme).
        single: one function's law at each similarity (``k = L = 1``).
        data: the :meth:`lshsim.tune.Tuning.to_dict` of the result.

    Returns:
        The figure.
    """
    best, inputs = data["best"], data["inputs"]
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(similarities, curve, color="C0", lw=2, label=f"k = {best['k']}, L = {best['L']}")
    ax.plot(similarities, single, color="0.5", lw=1, ls="--", label="one function")
    if data["form"] == "sensitivity":
        ax.axvline(inputs["far"], color="C3", lw=0.8)
        ax.axvline(inputs["near"], color="C2", lw=0.8)
        ax.plot(
            [inputs["near"]],
            [inputs["recall"]],
            "v",
            color="C2",
            label=f"recall >= {inputs['recall']:g} at {inputs['near']:g}",
        )
        ax.plot(
            [inputs["far"]],
            [inputs["false_positive"]],
            "^",
            color="C3",
            label=f"false positive <= {inputs['false_positive']:g} at {inputs['far']:g}",
        )
    else:
        ax.axvline(
            inputs["threshold"], color="k", lw=0.8, label=f"threshold {inputs['threshold']:g}"
        )
    ax.set_xlabel(data["similarity"])
    ax.set_ylabel("P(the pair meets in some table)")
    ax.set_ylim(-0.02, 1.02)
    n = "" if data["n"] is None else f", n = {data['n']}"
    ax.set_title(
        f"{data['family']}{n}: FP {best['false_positive']:.3g}, recall {best['recall']:.3g}",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper left")
    return fig
