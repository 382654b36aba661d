"""A sweep's cells: the Cartesian product of each grid, each cell checked by the library.

What one cell is, with its key and seed, is :mod:`lshsim.sweep.cell` (re-exported here).
"""

from __future__ import annotations

import itertools
import math

from lshsim.sweep.cell import Cell, cell_key, cell_seed
from lshsim.sweep.runner import check_cell
from lshsim.sweep.spec import Spec, commands

__all__ = ["MAX_CELLS", "Cell", "cell_key", "cell_seed", "enumerate_cells", "grid_size"]

#: Most cells one spec may enumerate (they are held in memory).
MAX_CELLS = 10**6


def grid_size(grid: dict) -> int:
    """The number of cells of one grid (the product of its axis lengths)."""
    return math.prod(len(v) for k, v in grid.items() if k != "command")


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
    total = sum(grid_size(g) for g in spec.grids)
    if total > MAX_CELLS:
        raise ValueError(f"SPEC: the grids hold {total} cells; at most {MAX_CELLS}")
    cells: dict[str, Cell] = {}
    for i, grid in enumerate(spec.grids):
        command = grid["command"]
        opts = commands()[command].options
        names = [k for k in grid if k != "command"]
        fixed = {k: o.default for k, o in opts.items() if k not in grid and o.default is not None}
        for values in itertools.product(*(grid[k] for k in names)):
            given = {**fixed, **dict(zip(names, values, strict=True))}
            options = {k: given[k] for k in opts if k in given}  # the parser's order
            key = cell_key(command, options)
            if key not in cells:
                cell = Cell(command, options, key, cell_seed(spec.seed, key), i)
                if check:
                    try:
                        check_cell(cell)
                    except ValueError as exc:
                        raise ValueError(f"{cell.describe()}: {exc}") from None
                cells[key] = cell
    return list(cells.values())
