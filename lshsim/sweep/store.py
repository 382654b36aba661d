"""A sweep's results on disk: a Parquet dataset of part files, and its spec beside them.

The folder holds ``_sweep.json`` (the canonical spec, its SHA-256 and the cell count) and
``part-NNNNN.parquet`` files, one row per finished cell. A part is written whole to a hidden
temporary file and renamed (:func:`lshsim._io.write_atomic`), so a sweep killed at any moment
leaves only complete parts; ``--resume`` reads their ``cell`` keys and runs the rest, so every
cell ends up in exactly one row. Names starting with ``_`` or ``.`` are skipped by Parquet
readers, so ``pyarrow.parquet.read_table(DIR)`` (or ``pandas.read_parquet(DIR)``) reads the
rows alone; figures go under ``_figures/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lshsim._io import check_output_dir, write_atomic
from lshsim.sweep.runner import RESULT_COLUMNS, VERSION_COLUMNS
from lshsim.sweep.spec import Spec, commands, spec_hash

#: The spec file inside a sweep's folder.
META = "_sweep.json"
#: The format version of :data:`META`.
FORMAT = 1
#: Part files: ``part-<index>.parquet``.
PART = re.compile(r"part-(\d+)\.parquet")
#: Arrow types of the option kinds.
KIND_TYPES = {"int": "int64", "float": "float64", "str": "string"}


def columns(spec: Spec) -> dict[str, str]:
    """Every column of the spec's rows and its Arrow type name, in order.

    ``command``, ``cell``, ``seed``; then each option any cell runs with (the grids' options
    and the CLI's non-None defaults, in order of first appearance); then the results and the
    versions.

    Args:
        spec: the checked spec.

    Returns:
        Column -> Arrow type name (``int64``, ``float64``, ``uint64``, ``string``).

    Raises:
        ValueError: two commands give one option different types.
    """
    out = {"command": "string", "cell": "string", "seed": "uint64"}
    for grid in spec.grids:
        for name, opt in commands()[grid["command"]].options.items():
            if name not in grid and opt.default is None:
                continue
            kind = KIND_TYPES[opt.kind]
            if out.setdefault(name, kind) != kind:
                raise ValueError(f"SPEC: option {name!r} has type {kind} and {out[name]}")
    return {**out, **RESULT_COLUMNS, **dict.fromkeys(VERSION_COLUMNS.values(), "string")}


def _schema(cols: dict[str, str]):
    import pyarrow as pa

    return pa.schema([(name, pa.type_for_alias(t)) for name, t in cols.items()])


class Store:
    """The Parquet store of one sweep (open it with :func:`open_store`).

    Attributes:
        path: the folder.
        spec: the sweep's spec.
    """

    def __init__(self, path: Path, spec: Spec):
        self.path = path
        self.spec = spec
        self.schema = _schema(columns(spec))

    def begin(self, cells: int) -> None:
        """Write :data:`META` (the spec, its hash, ``cells``) unless there; drop stale temps."""
        if (self.path / META).exists():
            for stale in self.path.glob(".part-*.tmp"):  # a killed sweep's unfinished part
                stale.unlink()
            return
        meta = {
            "format": FORMAT,
            "spec": self.spec.canonical(),
            "spec_sha256": self.spec.sha256(),
            "cells": cells,
        }
        write_atomic(self.path / META, json.dumps(meta, indent=1) + "\n")

    def parts(self) -> list[Path]:
        """The finished part files, in index order."""
        if not self.path.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.path.iterdir() if (m := PART.fullmatch(p.name))]
        return [p for _, p in sorted(found)]

    def finished(self) -> set[str]:
        """The keys of the cells already in a part.

        Raises:
            ValueError: a cell appears twice (the folder was written by something else).
        """
        import pyarrow.parquet as pq

        keys: set[str] = set()
        for part in self.parts():
            for key in pq.read_table(part, columns=["cell"]).column("cell").to_pylist():
                if key in keys:
                    raise ValueError(f"{self.path}: cell {key} is in two parts; not a clean sweep")
                keys.add(key)
        return keys

    def write_part(self, rows: list[dict[str, Any]]) -> Path:
        """Write ``rows`` as the next part, atomically; return its path."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        parts = self.parts()
        index = int(PART.fullmatch(parts[-1].name).group(1)) + 1 if parts else 0
        table = pa.Table.from_pylist(rows, schema=self.schema)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        path = self.path / f"part-{index:05d}.parquet"
        write_atomic(path, sink.getvalue().to_pybytes())
        return path


def open_store(path: str | Path, spec: Spec, *, resume: bool) -> Store:
    """Check the output folder for a new sweep, or for resuming one; write nothing yet.

    Args:
        path: the output folder (``--out``).
        spec: the checked spec.
        resume: continue the sweep already in ``path`` (a missing or empty folder starts one).

    Returns:
        The store (:meth:`Store.begin` writes :data:`META` when the first work starts).

    Raises:
        ValueError: ``path`` is not a writable folder; without ``resume``, it is not empty;
            with ``resume``, it holds no sweep, or the sweep of another spec.
    """
    path = check_output_dir(path, "--out")
    if path.is_dir() and any(path.iterdir()):
        if not resume:
            raise ValueError(
                f"--out: {path} is not empty; add --resume to continue the sweep in it, or "
                "give a new folder"
            )
        sha, old = spec.sha256(), _read_meta(path)["spec_sha256"]
        if old != sha:
            raise ValueError(
                f"--resume: SPEC (sha256 {sha[:12]}) differs from the sweep in {path} "
                f"(sha256 {old[:12]}); give a new --out"
            )
    return Store(path, spec)


def _read_meta(path: Path) -> dict:
    """The checked :data:`META` of a sweep's folder."""
    try:
        meta = json.loads((path / META).read_text())
        ok = meta["format"] == FORMAT and spec_hash(meta["spec"]) == meta["spec_sha256"]
    except FileNotFoundError:
        raise ValueError(f"{path} holds no sweep ({META} is missing)") from None
    except (OSError, ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise ValueError(f"{path}/{META} is not a sweep's spec file (unreadable or altered)")
    return meta


def read_table(path: str | Path):
    """Every row of the sweep in ``path``, as one ``pyarrow.Table``.

    Args:
        path: a sweep's folder.

    Returns:
        The rows of all finished parts, in part order (the empty table of the spec's columns
        when none is finished).

    Raises:
        ValueError: ``path`` holds no sweep.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lshsim.sweep.spec import parse_spec

    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"{path} is not a folder")
    store = Store(path, parse_spec(_read_meta(path)["spec"]))
    tables = [pq.read_table(p, schema=store.schema) for p in store.parts()]
    return pa.concat_tables(tables) if tables else store.schema.empty_table()
