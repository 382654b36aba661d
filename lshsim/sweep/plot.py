"""``lshsim sweep --plot``: the standard figures of a sweep, drawn from its Parquet rows.

Collision probability against ``n``, one panel per family, in the style of ``lshsim
reproduce``'s ``collision_vs_n`` (:func:`lshsim.plots.plot_collision_vs_n`): per cosine (or
overlap) the exact values as a line (``exact``, from ``theory`` cells or ``simulate`` cells that
have one) and the estimates with their 95% intervals as points. Options that change the target
(``dim``, ``length``, ``rotation``, ...) split the rows into one figure each; options that only
change the precision (:data:`PRECISION`) are drawn together.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lshsim.hashing import FAMILIES
from lshsim.sweep.runner import RESULT_COLUMNS, VERSION_COLUMNS
from lshsim.sweep.store import FIGURES

#: Columns that place a value in a figure: panel, x, colour.
AXES = ("family", "buckets", "cosine", "overlap")
#: Options that change how precisely a value is computed, not the value.
PRECISION = ("samples", "mode", "cosines")
#: Columns that are not options.
NOT_OPTIONS = ("command", "cell", "seed", *RESULT_COLUMNS, *VERSION_COLUMNS.values())


def collision_figures(rows: Sequence[dict[str, Any]]) -> list[tuple[dict, dict]]:
    """Group a sweep's rows into the data of :func:`lshsim.plots.plot_collision_vs_n`.

    Args:
        rows: the sweep's rows as dicts (``read_table(DIR).to_pylist()``).

    Returns:
        One ``(group, data)`` per figure: ``group`` the fixed options that set it apart,
        ``data`` the ``{"overlaps", "panels"}`` payload, plus ``"color_label"``.
    """
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        if row.get("family") is None or row.get("buckets") is None:
            continue
        fixed = tuple(
            (k, v)
            for k, v in row.items()
            if k not in NOT_OPTIONS and k not in AXES and k not in PRECISION and v is not None
        )
        groups.setdefault(fixed, []).append(row)
    return [(dict(k), _panels(v)) for k, v in sorted(groups.items(), key=lambda kv: str(kv[0]))]


def _panels(rows: list[dict]) -> dict:
    """The ``collision_vs_n`` payload of one group of rows."""
    exact: dict[str, dict[str, dict[int, float]]] = {}
    points: dict[str, dict[str, list[tuple]]] = {}
    sims: set[float] = set()
    kinds = set()
    for row in rows:
        kind = "cosine" if row.get("cosine") is not None else "overlap"
        sim = row[kind]
        kinds.add(kind)
        sims.add(sim)
        family, f, n = row["family"], str(sim), row["buckets"]
        if row["exact"] is not None:
            exact.setdefault(family, {}).setdefault(f, {})[n] = row["exact"]
        if row["estimate"] is not None:
            est = (n, row["estimate"], row["ci_low"], row["ci_high"])
            points.setdefault(family, {}).setdefault(f, []).append(est)
    panels = {}
    for family in [f for f in FAMILIES if f in exact or f in points]:
        panel: dict[str, dict] = {}
        for f, curve in exact.get(family, {}).items():
            ns = sorted(curve)
            panel.setdefault("exact", {})[f] = {"n": ns, "p": [curve[n] for n in ns]}
        for f, pts in points.get(family, {}).items():
            cols = list(zip(*sorted(pts), strict=True))
            names = ("n", "estimate", "ci_low", "ci_high")
            panel.setdefault("mc", {})[f] = {k: list(c) for k, c in zip(names, cols, strict=True)}
        panels[family] = panel
    label = " / ".join({"overlap": "overlap f", "cosine": "cosine a"}[k] for k in sorted(kinds))
    return {"overlaps": sorted(sims), "panels": panels, "color_label": label}


def prepare_plot(
    path: str | Path, figures: str | Path | None = None
) -> tuple[Path, list[tuple[dict, dict]]]:
    """Every check of :func:`plot_sweep`, and the figures' data; nothing is written.

    Args:
        path: a sweep's folder.
        figures: where the figures go (default ``path/_figures``); not elsewhere inside the
            sweep's folder, which holds only what the sweep writes.

    Returns:
        ``(folder, groups)``: where to write, and :func:`collision_figures` of the rows.

    Raises:
        ValueError: one line naming the file or option: ``path`` holds no sweep, a file the
            sweep did not write or a bad part (:func:`lshsim.sweep.store.read_table`), no
            finished row to draw, or ``figures`` is not a writable folder.
    """
    from lshsim._io import check_output_dir
    from lshsim.sweep.store import read_table

    rows = read_table(path).to_pylist()
    target = check_output_dir(Path(path) / FIGURES if figures is None else figures, "--figures")
    inside = _inside(target, Path(path))
    if inside is not None and inside.parts[:1] != (FIGURES,):
        raise ValueError(
            f"--figures: {target} is inside the sweep's folder {path}, which holds only what "
            f"the sweep writes; give {Path(path) / FIGURES} (the default) or another folder"
        )
    groups = collision_figures(rows)
    if not groups:
        raise ValueError(f"--plot: {path} has no finished row with a family and buckets yet")
    return target, groups


def _inside(path: Path, folder: Path) -> Path | None:
    """``path`` relative to ``folder`` where it lies inside (or is) it, else None."""
    try:
        return path.resolve().relative_to(folder.resolve())
    except (ValueError, OSError, RuntimeError):  # not inside; a symlink loop
        return None


def draw_plot(target: Path, groups: list[tuple[dict, dict]]) -> list[Path]:
    """Draw the figures of :func:`prepare_plot` (PNG and SVG) into ``target``.

    Args:
        target: the folder (created if missing).
        groups: :func:`collision_figures` of the rows.

    Returns:
        The written files: ``collision_vs_n.png``/``.svg``, or ``collision_vs_n-<i>.*`` per
        group when the rows fall in several.
    """
    from lshsim.plots import plot_collision_vs_n, save_figure

    written = []
    for i, (group, data) in enumerate(groups):
        data = dict(data)
        fig = plot_collision_vs_n(data, color_label=data.pop("color_label"))
        if group:
            fig.suptitle(", ".join(f"{k}={v}" for k, v in group.items()), fontsize="medium")
        stem = "collision_vs_n" if len(groups) == 1 else f"collision_vs_n-{i + 1}"
        written += save_figure(fig, target / stem)
    return written


def plot_sweep(path: str | Path, figures: str | Path | None = None) -> list[Path]:
    """Draw the standard figures of the sweep in ``path`` (PNG and SVG).

    Args:
        path: a sweep's folder.
        figures: where to write them (default ``path/_figures``).

    Returns:
        The written files: ``collision_vs_n.png``/``.svg``, or ``collision_vs_n-<i>.*`` per
        group when the rows fall in several.

    Raises:
        ValueError: as :func:`prepare_plot`.
    """
    return draw_plot(*prepare_plot(path, figures))
