"""A sweep's cells: the Cartesian product of each grid, each cell checked by the library.

What one cell is, with its key and seed, is :mod:`lshsim.sweep.cell` (re-exported here).
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Iterator

from lshsim.estimate import estimate_collision
from lshsim.estimation.inputs import resolve_mode
from lshsim.sweep.cell import Cell, cell_key, cell_seed
from lshsim.sweep.runner import check_cell, library_names
from lshsim.sweep.spec import Spec, commands

__all__ = [
    "MAX_CELLS",
    "Cell",
    "cell_key",
    "cell_keys",
    "cell_seed",
    "enumerate_cells",
    "grid_size",
    "resolved_mode",
]

#: Most cells one spec may enumerate (they are held in memory).
MAX_CELLS = 10**6


def grid_size(grid: dict) -> int:
    """The number of cells of one grid (the product of its axis lengths)."""
    return math.prod(len(v) for k, v in grid.items() if k != "command")


def resolved_mode(command: str, options: dict) -> dict:
    """``options`` with ``simulate``'s ``mode = "auto"`` resolved to the mode that runs.

    So a cell's key (and seed) names ``full`` or ``reduced``
    (:func:`lshsim.estimation.inputs.resolve_mode`), never ``auto``.

    Args:
        command: the cell's command.
        options: its options (CLI names).

    Returns:
        ``options``, or a copy with ``mode`` resolved; unchanged where the family or its
        parameters are refused (:func:`lshsim.sweep.runner.check_cell` then names them).
    """
    if command != "simulate" or options.get("mode") != "auto":
        return options
    names = library_names()
    kw = {names.get(k, k): v for k, v in options.items()}
    own = inspect.signature(estimate_collision).parameters
    params = {k: v for k, v in kw.items() if k not in own and k not in ("family", "n")}
    try:
        mode = resolve_mode(kw["family"], kw["n"], params, "auto")
    except (KeyError, ValueError, TypeError):
        return options
    return {**options, "mode": mode}


def _keyed_options(spec: Spec) -> Iterator[tuple[int, str, dict, str]]:
    """``(grid index, command, options, key)`` of each cell, grid after grid, repeats included."""
    total = sum(grid_size(g) for g in spec.grids)
    if total > MAX_CELLS:
        raise ValueError(f"SPEC: the grids hold {total} cells; at most {MAX_CELLS}")
    for i, grid in enumerate(spec.grids):
        command = grid["command"]
        opts = commands()[command].options
        names = [k for k in grid if k != "command"]
        fixed = {k: o.default for k, o in opts.items() if k not in grid and o.default is not None}
        for values in itertools.product(*(grid[k] for k in names)):
            given = {**fixed, **dict(zip(names, values, strict=True))}
            options = {k: given[k] for k in opts if k in given}  # the parser's order
            options = resolved_mode(command, options)
            yield i, command, options, cell_key(command, options)


def cell_keys(spec: Spec) -> set[str]:
    """The keys of every cell of ``spec`` (:func:`enumerate_cells`' keys, without seeds or checks).

    Args:
        spec: the checked spec.

    Returns:
        The set of keys.

    Raises:
        ValueError: more than :data:`MAX_CELLS` cells.
    """
    return {key for *_, key in _keyed_options(spec)}


def enumerate_cells(spec: Spec, check: bool = True) -> list[Cell]:
    """Every cell of ``spec``, grid after grid, each grid in row-major order of its axes.

    A cell listed by two grids (the same key) is kept once, at its first grid.

    Args:
        spec: the checked spec.
        check: validate each cell with the library's checks
            (:func:`lshsim.sweep.runner.check_cell`) before returning any.

    Returns:
        The cells.

    Raises:
        ValueError: more than :data:`MAX_CELLS` cells, or a cell the library refuses (the
            message names the grid and the cell).
    """
    cells: dict[str, Cell] = {}
    for i, command, options, key in _keyed_options(spec):
        if key not in cells:
            cell = Cell(command, options, key, cell_seed(spec.seed, key), i)
            if check:
                try:
                    check_cell(cell)
                except ValueError as exc:
                    raise ValueError(f"{cell.describe()}: {exc}") from None
            cells[key] = cell
    return list(cells.values())
