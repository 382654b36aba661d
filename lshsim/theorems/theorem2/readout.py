"""Reading the sweep: minimal widths that reach a target loss, their medians, the ratio A / B.

Pure Python (no JAX), so figures and reports can re-summarise saved rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from lshsim.theorems.theorem2.architectures import ARCHITECTURES


def minimal_width(widths: Sequence[int], losses: Sequence[float], target_loss: float) -> int | None:
    """Smallest swept width whose held-out loss is at most ``target_loss``.

    Args:
        widths: Swept widths (any order).
        losses: Held-out loss at each width (NaN counts as not reached).
        target_loss: The threshold.

    Returns:
        The width, or ``None`` if no swept width reaches the target.
    """
    if len(widths) != len(losses):
        raise ValueError(f"losses: expected {len(widths)} values, got {len(losses)}")
    reached = [w for w, loss in zip(widths, losses, strict=True) if loss <= target_loss]
    return min(reached) if reached else None


def median_width(values: Sequence[int | None]) -> float | None:
    """Median of per-seed minimal widths, ``None`` (never reached) ranked above every width.

    Args:
        values: One minimal width (or ``None``) per seed.

    Returns:
        The median (mean of the two middle values for an even count), or ``None`` if a middle
        value is ``None``.
    """
    if not values:
        raise ValueError("values: need at least one seed")
    mid = sorted(values, key=lambda v: math.inf if v is None else v)
    mid = mid[(len(mid) - 1) // 2 : len(mid) // 2 + 1]
    return None if None in mid else float(sum(mid)) / len(mid)  # type: ignore[arg-type]


def summarise(rows: Sequence[Mapping[str, Any]], target_loss: float) -> dict[str, Any]:
    """Minimal widths per seed and their median, per ``d`` and arch, and the ratio A / B.

    Args:
        rows: ``run_sweep``'s rows (``d, arch, width, replicate, heldout_nmse``).
        target_loss: The threshold.

    Returns:
        The minimal widths and the ratios, a dict
        ``{"minimal": {str(d): {arch: {"per_seed", "per_seed_over_d", "median",
        "median_over_d"}}}, "ratio": {str(d): median A / median B or None}}``.
    """
    minimal: dict[str, Any] = {}
    for d in sorted({int(r["d"]) for r in rows}):
        minimal[str(d)] = {}
        for arch in ARCHITECTURES:
            mine = [r for r in rows if r["d"] == d and r["arch"] == arch]
            per_seed = []
            for rep in sorted({r["replicate"] for r in mine}):
                runs = [r for r in mine if r["replicate"] == rep]
                losses = [r["heldout_nmse"] for r in runs]
                per_seed.append(minimal_width([r["width"] for r in runs], losses, target_loss))
            med = median_width(per_seed)
            minimal[str(d)][arch] = {
                "per_seed": per_seed,
                "per_seed_over_d": [None if w is None else w / d for w in per_seed],
                "median": med,
                "median_over_d": None if med is None else med / d,
            }
    meds = {k: (v["A"]["median"], v["B"]["median"]) for k, v in minimal.items()}
    ratio = {k: None if a is None or b is None else a / b for k, (a, b) in meds.items()}
    return {"minimal": minimal, "ratio": ratio}
