"""One cell of a sweep: the command and options it runs, its key and its seed.

A cell is one command run at one value of every option. Its **key** is the compact, key-sorted
JSON of ``{"command": ..., option: value, ...}`` over the options it runs with (those its grid
gives, and the CLI defaults that are not None, such as ``simulate``'s ``mode = "full"``), so
the same cell has the same key in any grid, any spec and any order. Its **seed** is::

    SeedSequence([sweep_seed, *w]).generate_state(1, uint64)[0]

where ``w`` are the eight little-endian 32-bit words of the key's SHA-256: it depends on the
sweep's seed and the cell's coordinates only, never on its position in a schedule, the number
of workers or Python's per-process ``hash()``. ``lshsim simulate ... --seed SEED`` with a row's
options and ``seed`` gives the row's numbers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Cell", "cell_key", "cell_seed"]


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
