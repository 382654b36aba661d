"""Derived numbers and tables of proofs/theorem2.md's section 6 (``docs/render_numbers.py``).

Theorem 2's width study (``figures/theorem2_width.json``): the median-loss and minimal-width
tables, per-seed losses, the constructions' errors and the parameter counts. Each derived
number is a function of a :class:`docs.number_sources.Sources` (and an optional text
argument) that reads the result files through ``sources.get``; each table returns Markdown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WIDTH = "theorem2_width.json"


def _t2_loss(value: float) -> str:
    """A held-out loss as proofs/theorem2.md shows it: two significant digits (``3.2e-4``)."""
    if value >= 1e-3:
        return f"{value:#.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _t2_rows(sources: Any, arch: str, d: int, width_over_d: float) -> list[float]:
    """The held-out losses (one per seed, in seed order) of one student of the width sweep."""
    archs = sources.get(WIDTH, "/data/rows/*/arch")
    dims = sources.get(WIDTH, "/data/rows/*/d")
    ratios = sources.get(WIDTH, "/data/rows/*/width_over_d")
    rows = [
        i
        for i, key in enumerate(zip(archs, dims, ratios, strict=True))
        if key == (arch, d, width_over_d)
    ]
    if not rows:
        raise ValueError(f"figures/{WIDTH}: no rows of {arch} at d = {d}, width {width_over_d} d")
    return [sources.get(WIDTH, f"/data/rows/{i}/heldout_nmse") for i in rows]


def _median(values: list[float]) -> float:
    """The median (the mean of the middle two for an even count)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def proof_t2_losses(sources: Any) -> str:
    """proofs/theorem2.md's table: the median held-out loss per student, ``d`` and width.

    Args:
        sources: the result files.

    Returns:
        Markdown: one row per (d, architecture), one column per width ratio; the cell at the
        median minimal width in bold.
    """
    losses = sources.get(WIDTH, "/data/rows/*/heldout_nmse")
    keys = zip(
        sources.get(WIDTH, "/data/rows/*/d"),
        sources.get(WIDTH, "/data/rows/*/arch"),
        sources.get(WIDTH, "/data/rows/*/width_over_d"),
        strict=True,
    )
    cells: dict[tuple[int, str], dict[float, list[float]]] = {}
    for (d, arch, ratio), loss in zip(keys, losses, strict=True):
        cells.setdefault((d, arch), {}).setdefault(ratio, []).append(loss)
    ratios = sorted({r for row in cells.values() for r in row})
    lines = [
        "| w / d | " + " | ".join(f"{r:g}" for r in ratios) + " |",
        "|---|" + "---|" * len(ratios),
    ]
    for (d, arch), row in sorted(cells.items()):
        best = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/median_over_d")
        shown = [_t2_loss(_median(row[r])) if r in row else "-" for r in ratios]
        shown = [f"**{c}**" if r == best else c for c, r in zip(shown, ratios, strict=True)]
        lines.append(f"| d = {d}, {arch} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _t2_width(value: float | None, d: int | None = None) -> str:
    """A minimal width (``none`` if never reached), or a multiple of ``d``."""
    if value is None:
        return "none"
    return f"{value:g}" if d is None else f"{value / d:g} d"


def proof_t2_minimal(sources: Any) -> str:
    """proofs/theorem2.md's table of the minimal widths at the target, per seed and median.

    Args:
        sources: the result files.

    Returns:
        Markdown: one row per ``d``.
    """
    lines = [
        "| d | A per seed | A median | B per seed | B median | ratio A / B |",
        "|---|---|---|---|---|---|",
    ]
    for d in sources.get(WIDTH, "/data/minimal"):
        cells = [str(d)]
        for arch in ("A", "B"):
            seeds = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/per_seed")
            median = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/median")
            cells.append(", ".join(_t2_width(s) for s in seeds))
            cells.append(f"{_t2_width(median)} = **{_t2_width(median, int(d))}**")
        ratio = sources.get(WIDTH, f"/data/ratio/{d}")
        cells.append("none" if ratio is None else f"**{ratio:.1f}**")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def proof_t2_median(sources: Any, arg: str) -> str:
    """A student's median held-out loss, formatted as the table: ``ARCH,D,WIDTH_OVER_D``."""
    arch, d, ratio = arg.split(",")
    return _t2_loss(_median(_t2_rows(sources, arch, int(d), float(ratio))))


def proof_t2_seed_loss(sources: Any, arg: str) -> str:
    """One seed's held-out loss: ``ARCH,D,WIDTH_OVER_D,SEED`` (seeds counted from 0)."""
    arch, d, ratio, seed = arg.split(",")
    return _t2_loss(_t2_rows(sources, arch, int(d), float(ratio))[int(seed)])


def proof_t2_loss_range(sources: Any, arg: str) -> str:
    """The range over seeds of a student's held-out loss: ``ARCH,D,WIDTH_OVER_D``."""
    arch, d, ratio = arg.split(",")
    losses = _t2_rows(sources, arch, int(d), float(ratio))
    return f"{_t2_loss(min(losses))}-{_t2_loss(max(losses))}"


def proof_t2_strict_width(sources: Any, arg: str) -> str:
    """The smallest width from which every wider width reaches the target: ``ARCH,D,SEED``."""
    arch, d, seed = arg.split(",")
    target = sources.get(WIDTH, "/data/config/target_loss")
    ratios = sources.get(WIDTH, "/data/config/width_ratios")
    reached = [_t2_rows(sources, arch, int(d), r)[int(seed)] <= target for r in ratios]
    widths = [round(r * int(d)) for r in ratios]
    for i in range(len(ratios)):
        if all(reached[i:]):
            return f"{widths[i]}"
    return "none"


def proof_t2_target_ratios(sources: Any) -> str:
    """The median ratios A / B at the other targets, as ``0.2: 2.0 (d=4), 1.5 (d=8); ...``."""
    main = sources.get(WIDTH, "/data/config/target_loss")
    dims = sources.get(WIDTH, "/data/config/dims")
    parts = []
    for target in sources.get(WIDTH, "/data/by_target"):
        if float(target) == main:
            continue
        ratios = [sources.get(WIDTH, f"/data/by_target/{target}/ratio/{d}") for d in dims]
        shown = ["none" if r is None else f"{r:.1f}" for r in ratios]
        if not parts:
            shown = [f"{s} (d={d})" for s, d in zip(shown, dims, strict=True)]
        parts.append(f"{target}: " + ", ".join(shown))
    return "; ".join(parts)


def proof_t2_seeds_reached(sources: Any, arg: str) -> int:
    """How many seeds of a student reach a target at some width: ``TARGET,ARCH,D``."""
    target, arch, d = arg.split(",")
    seeds = sources.get(WIDTH, f"/data/by_target/{target}/minimal/{d}/{arch}/per_seed")
    return sum(s is not None for s in seeds)


def proof_t2_construction(sources: Any, arg: str) -> str:
    """The largest error of the exact constructions: ``DTYPE,ARCHS,DIGITS`` (``float32,AB,1``).

    Args:
        sources: the result files.
        arg: ``float64`` or ``float32``, the constructions (``A``, ``B`` or ``AB``) and the
            digits after the point.

    Returns:
        E.g. ``2.0e-6``: the largest absolute error on the held-out sets over every ``d``.
    """
    dtype, archs, digits = arg.split(",")
    errors = [
        sources.get(WIDTH, f"/data/constructions/{d}/{arch}/max_abs_error_{dtype}")
        for d in sources.get(WIDTH, "/data/config/dims")
        for arch in archs
    ]
    mantissa, exponent = f"{max(errors):.{int(digits)}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def proof_t2_params(sources: Any, arg: str) -> int:
    """A student's parameters at its measured median minimal width: ``ARCH,D,KIND``.

    Args:
        sources: the result files.
        arg: ``A`` or ``B``, ``d``, and ``non_table`` or ``table``.

    Returns:
        :func:`lshsim.theorems.theorem2.bounds.param_counts` at that width.
    """
    from lshsim.theorems.theorem2.bounds import param_counts

    arch, d, kind = arg.split(",")
    width = sources.get(WIDTH, f"/data/minimal/{d}/{arch}/median")
    depth = sources.get(WIDTH, "/data/config/student_depth")
    categories = sources.get(WIDTH, "/data/config/n_categories")
    return param_counts(arch, int(d), int(width), depth, categories)[kind]


def proof_t2_param_ratio(sources: Any, d: str) -> float:
    """A's non-table parameters over B's at the construction widths (``2d`` and ``d``)."""
    a = sources.get(WIDTH, f"/data/params/{d}/A/non_table")
    return a / sources.get(WIDTH, f"/data/params/{d}/B/non_table")


def proof_t2_construction_ratio(sources: Any, arg: str) -> float:
    """Part (f): A's non-table parameters over B's at the construction widths: ``D,DEPTH``.

    Args:
        sources: the result files (not read: the counts are closed forms).
        arg: ``d`` and the students' depth ``D``.

    Returns:
        ``param_counts`` of A at width ``2d`` over B's at width ``d`` (the tables left out).
    """
    from lshsim.theorems.theorem2.bounds import param_counts

    d, depth = (int(x) for x in arg.split(","))
    a = param_counts("A", d, 2 * d, depth, 1)["non_table"]
    return a / param_counts("B", d, d, depth, 1)["non_table"]


def proof_t2_limit_ratio(sources: Any, depth: str) -> float:
    """Part (f): the ratio's limit as ``d`` grows, ``(8 D + 2) / (2 D + 1)``."""
    return (8 * int(depth) + 2) / (2 * int(depth) + 1)


#: name -> function(sources[, arg]) -> number or text.
DERIVED: dict[str, Callable[..., Any]] = {
    "proof_t2_median": proof_t2_median,
    "proof_t2_seed_loss": proof_t2_seed_loss,
    "proof_t2_loss_range": proof_t2_loss_range,
    "proof_t2_strict_width": proof_t2_strict_width,
    "proof_t2_target_ratios": proof_t2_target_ratios,
    "proof_t2_seeds_reached": proof_t2_seeds_reached,
    "proof_t2_construction": proof_t2_construction,
    "proof_t2_params": proof_t2_params,
    "proof_t2_param_ratio": proof_t2_param_ratio,
    "proof_t2_construction_ratio": proof_t2_construction_ratio,
    "proof_t2_limit_ratio": proof_t2_limit_ratio,
}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {
    "proof_t2_losses": proof_t2_losses,
    "proof_t2_minimal": proof_t2_minimal,
}
