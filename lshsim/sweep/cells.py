"""A sweep's cells: the Cartesian product of each grid, each cell's key and each cell's seed.

A cell is one command run at one value of every option. Its **key** is the compact, key-sorted
JSON of ``{"command": ..., option: value, ...}`` over the options it runs with (those its grid
gives, and the CLI defaults that are not None, such as ``simulate``'s ``mode = "full"``), so
the same cell has the same key in any grid, any spec and any order. Its **seed** is

    SeedSequence([sweep_seed, *w]).generate_state(1, uint64)[0]

where ``w`` are the eight little-endian 32-bit words of the key's SHA-256: it depends on the
sweep's seed and the cell's coordinates only, never on its position in a schedule, the number
of workers or Python's per-process ``hash()``. ``lshsim simulate ... --seed SEED`` with a row's
options and ``seed`` gives the row's numbers.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lshsim.sweep.spec import Spec, commands

#: Most cells one spec may enumerate (they are held in memory).
MAX_CELLS = 10**6


@dataclass(frozen=True)
class Cell:
    """One cell of a sweep.

    Attributes:
        command: ``"simulate"`` or ``"theory"``.
        options: option -> value, in the command parser's order.
        key: the canonical key (:func:`cell_key`).
        seed: the cell's seed (:func:`cell_seed`).
        grid: the index of the first grid that lists the cell.
    """

    command: str
    options: dict[str, Any]
    key: str
    seed: int
    grid: int

    def describe(self) -> str:
        """``grids[i] cell {command family=... buckets=...}`` for messages."""
        opts = " ".join(f"{k}={v}" for k, v in self.options.items())
        return f"grids[{self.grid}] cell {{{self.command} {opts}}}"


def cell_key(command: str, options: dict[str, Any]) -> str:
    """The canonical key of a cell: compact JSON with sorted keys.

    Args:
        command: the cell's command.
        options: the options it runs with (typed values, None-valued ones left out).

    Returns:
        The key, e.g. ``{"buckets":64,"command":"theory","cosine":0.5,"family":"simhash"}``.
    """
    return json.dumps({"command": command, **options}, sort_keys=True, separators=(",", ":"))


def cell_seed(sweep_seed: int, key: str) -> int:
    """A cell's seed from the sweep's seed and the cell's key (see the module docstring).

    Args:
        sweep_seed: the spec's seed, an int >= 0.
        key: the cell's key (:func:`cell_key`).

    Returns:
        An int in ``[0, 2^64)``.
    """
    words = np.frombuffer(hashlib.sha256(key.encode()).digest(), dtype="<u4")
    seq = np.random.SeedSequence([sweep_seed, *(int(w) for w in words)])
    return int(seq.generate_state(1, dtype=np.uint64)[0])


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
    from lshsim.sweep.runner import check_cell

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
