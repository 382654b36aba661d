"""Sweeps: grids of ``simulate`` and ``theory`` cells, run anywhere, stored as Parquet.

One module per idea, in the order a sweep uses them:

* :mod:`~lshsim.sweep.spec`: the SPEC (TOML or JSON), checked against the CLI's own parsers,
  its canonical form and SHA-256;
* :mod:`~lshsim.sweep.cells`: the cells (each grid's Cartesian product), their keys and seeds
  (from the sweep's seed and the cell's coordinates, never its position);
* :mod:`~lshsim.sweep.runner`: one cell through the library (an estimate, the exact value);
* :mod:`~lshsim.sweep.store`: the Parquet dataset, written in atomic parts, and resume;
  :func:`read_table` reads a sweep's folder back (its rows only; a file the sweep did not
  write is an error naming it);
* :mod:`~lshsim.sweep.execute`: in process or on Dask (a LocalCluster or a scheduler);
* :mod:`~lshsim.sweep.plot`: the standard figures from the stored rows.

``lshsim sweep`` (:mod:`lshsim.cli.sweep`) is the command; ``lshsim reproduce``'s Monte-Carlo
grids run their cells through :func:`run_grid` in process, so a cell gives the same number in
a sweep and in a study. Dask and pyarrow are the ``sweep`` extra, imported only where used.
"""

from __future__ import annotations

from lshsim.sweep.cells import Cell, cell_key, cell_seed, enumerate_cells
from lshsim.sweep.runner import run_cell
from lshsim.sweep.spec import Spec, load_spec, parse_spec
from lshsim.sweep.store import read_table


def run_grid(seed: int, grids: list[dict]) -> list[dict]:
    """Run grids in this process, without a store; return the cells' rows in grid order.

    The engine of the Monte-Carlo studies of ``lshsim reproduce``: a sweep with the same seed
    and grids stores the same rows (except ``seconds``).

    Args:
        seed: the sweep seed.
        grids: grids as in a SPEC (``{"command": ..., option: [values], ...}``).

    Returns:
        One row per cell (:func:`lshsim.sweep.runner.run_cell`), grid after grid, each grid
        in row-major order of its axes.
    """
    spec = parse_spec({"seed": seed, "grids": grids})
    return [run_cell(c) for c in enumerate_cells(spec)]


__all__ = [
    "Cell",
    "Spec",
    "cell_key",
    "cell_seed",
    "enumerate_cells",
    "load_spec",
    "parse_spec",
    "read_table",
    "run_cell",
    "run_grid",
]
