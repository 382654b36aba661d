"""A sweep's results on disk: a Parquet dataset of part files, and its spec beside them.

The folder holds ``_sweep.json`` (the canonical spec, its SHA-256, the cell count and the
sweep's random id) and ``part-NNNNN.parquet`` files, one row per finished cell. A part is
written whole to a hidden temporary file and renamed (:func:`lshsim._io.write_atomic`), so a
sweep killed at any moment leaves only complete parts; ``--resume`` reads their ``cell`` keys
and runs the rest, so every cell ends up in exactly one row.

The folder has one owner at a time: a running sweep holds an exclusive ``flock`` on
``_sweep.lock`` (released by the kernel when the process dies, so a killed sweep never blocks
its ``--resume``); a second sweep into the folder, or a ``--resume`` of the running one, is
refused in one line. Each part records the id of the sweep that wrote it (Parquet key-value
metadata :data:`OWNER_KEY`): ``--resume`` and ``--plot`` refuse a part of another sweep (even
of the same grid) and a cell stored twice. A folder removed while the sweep runs ends it with
an error, never with exit 0 and a re-created folder of orphan parts.

Names starting with ``_`` or ``.`` are skipped by Parquet readers, so
``pyarrow.parquet.read_table(DIR)`` (or ``pandas.read_parquet(DIR)``) reads the rows alone;
figures go under ``_figures/``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
from pathlib import Path
from typing import Any

from lshsim._io import check_output_dir, write_atomic
from lshsim.sweep.runner import RESULT_COLUMNS, VERSION_COLUMNS
from lshsim.sweep.spec import Spec, commands, spec_hash

#: The spec file inside a sweep's folder.
META = "_sweep.json"
#: The lock file of a running sweep (skipped by Parquet readers: it starts with ``_``).
LOCK = "_sweep.lock"
#: The format versions of :data:`META`: 2 adds ``sweep_id`` (parts of 1 carry no owner); 3:
#: ``simulate``'s mode defaults to ``auto`` and a cell's key holds the mode it resolved to; 4:
#: rows carry ``pairs`` and ``effective_trials`` (the interval's independent units).
FORMAT = 4
FORMATS = (1, 2, 3, 4)
#: The Parquet metadata key of a part: the id of the sweep that wrote it.
OWNER_KEY = b"lshsim.sweep_id"
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

    def __init__(self, path: Path, spec: Spec, sweep_id: str | None = None):
        self.path = path
        self.spec = spec
        self.schema = _schema(columns(spec))
        #: The id of the sweep in the folder (None: a format-1 sweep, whose parts have none).
        self.sweep_id = sweep_id
        self._lock: int | None = None
        self._created = False

    def lock(self) -> None:
        """Own the folder (created if missing): an exclusive ``flock`` on :data:`LOCK`.

        Raises:
            ValueError: another process holds it (a sweep running into the same folder), or
                the folder or its lock cannot be created.
        """
        import fcntl

        try:
            if not self.path.exists():
                self.path.mkdir(parents=True)
                self._created = True
            fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:  # e.g. under /proc or /sys, which refuse new entries
            raise ValueError(
                f"--out: cannot create {self.path} ({exc.strerror or type(exc).__name__})"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise ValueError(
                f"--out: {self.path} is in use by a running sweep ({holder}); wait for it to "
                "end (then --resume continues it) or give another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        self._lock = fd

    def unlock(self) -> None:
        """Release the folder; remove it again if this sweep created it and wrote nothing."""
        if self._lock is None:
            return
        os.close(self._lock)  # releases the flock
        self._lock = None
        if self._created and self.path.is_dir():
            left = {p.name for p in self.path.iterdir()}
            if left <= {LOCK}:
                (self.path / LOCK).unlink(missing_ok=True)
                self.path.rmdir()

    def begin(self, cells: int) -> None:
        """Write :data:`META` (spec, hash, ``cells``, a new sweep id) unless there; drop temps."""
        if (self.path / META).exists():
            for stale in self.path.glob(".part-*.tmp"):  # a killed sweep's unfinished part
                stale.unlink()
            return
        self.sweep_id = secrets.token_hex(8)
        meta = {
            "format": FORMAT,
            "spec": self.spec.canonical(),
            "spec_sha256": self.spec.sha256(),
            "cells": cells,
            "sweep_id": self.sweep_id,
        }
        write_atomic(self.path / META, json.dumps(meta, indent=1) + "\n")

    def parts(self) -> list[Path]:
        """The finished part files, in index order."""
        if not self.path.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.path.iterdir() if (m := PART.fullmatch(p.name))]
        return [p for _, p in sorted(found)]

    def _read_part(self, part: Path, columns: list[str] | None = None):
        """One part's table, checked to be this sweep's; a damaged part is named."""
        import pyarrow.parquet as pq

        try:
            meta = pq.read_metadata(part).metadata or {}
            table = pq.read_table(part, columns=columns, schema=None if columns else self.schema)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(
                f"{part}: not a readable Parquet part ({why}); move it away and --resume "
                "recomputes its cells"
            ) from None
        owner = meta.get(OWNER_KEY)
        if owner is not None:
            owner = owner.decode()
        if owner != self.sweep_id:
            whose = "no sweep id" if owner is None else f"sweep {owner}"
            raise ValueError(
                f"{part}: written by {whose}, not by the sweep of this folder ({self.sweep_id}); "
                "a foreign part: move it away"
            )
        return table

    def finished(self) -> set[str]:
        """The keys of the cells already in a part.

        Raises:
            ValueError: a part is unreadable or another sweep's, or a cell appears twice.
        """
        keys: set[str] = set()
        for part in self.parts():
            for key in self._read_part(part, ["cell"]).column("cell").to_pylist():
                if key in keys:
                    raise ValueError(
                        f"{part}: cell {key} is already in another part; not a clean sweep "
                        "(a copied part? move it away)"
                    )
                keys.add(key)
        return keys

    def tables(self) -> list:
        """Every part's table, checked as :meth:`finished` checks them."""
        self.finished()
        return [self._read_part(p) for p in self.parts()]

    def write_part(self, rows: list[dict[str, Any]]) -> Path:
        """Write ``rows`` as the next part, atomically; return its path.

        Raises:
            ValueError: the folder (or its :data:`META`) was removed while the sweep ran.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not (self.path / META).is_file():
            raise ValueError(
                f"--out: {self.path} (or its {META}) was removed while the sweep ran; "
                f"{len(rows)} computed rows are lost and nothing more is written"
            )
        parts = self.parts()
        index = int(PART.fullmatch(parts[-1].name).group(1)) + 1 if parts else 0
        schema = self.schema
        if self.sweep_id is not None:
            schema = schema.with_metadata({OWNER_KEY: self.sweep_id.encode()})
        table = pa.Table.from_pylist(rows, schema=schema)
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
        The store, locked (:meth:`Store.begin` writes :data:`META` when the first work
        starts; :meth:`Store.unlock` releases the folder).

    Raises:
        ValueError: ``path`` is not a writable folder, or a running sweep owns it; without
            ``resume``, it is not empty; with ``resume``, it holds no sweep, or the sweep of
            another spec.
    """
    path = check_output_dir(path, "--out")
    store = Store(path, spec)
    try:
        store.lock()
        if any(p.name != LOCK for p in path.iterdir()):
            if not resume:
                raise ValueError(
                    f"--out: {path} is not empty; add --resume to continue the sweep in it, or "
                    "give a new folder"
                )
            meta = _read_meta(path)
            sha, old = spec.sha256(), meta["spec_sha256"]
            if old != sha:
                raise ValueError(
                    f"--resume: SPEC (sha256 {sha[:12]}) differs from the sweep in {path} "
                    f"(sha256 {old[:12]}); give a new --out"
                )
            if meta["format"] < 3:
                raise ValueError(
                    f"--resume: the sweep in {path} was written before simulate's --mode "
                    "default became auto (its cells' keys name the old default); give a new --out"
                )
            if meta["format"] < 4:
                raise ValueError(
                    f"--resume: the sweep in {path} was written before rows carried pairs and "
                    "effective_trials (its parts have other columns); give a new --out"
                )
            store.sweep_id = meta.get("sweep_id")
    except BaseException:
        store.unlock()
        raise
    return store


def _read_meta(path: Path) -> dict:
    """The checked :data:`META` of a sweep's folder."""
    try:
        meta = json.loads((path / META).read_text())
        ok = meta["format"] in FORMATS and spec_hash(meta["spec"]) == meta["spec_sha256"]
        ok = ok and (meta["format"] == 1 or isinstance(meta["sweep_id"], str))
    except FileNotFoundError:
        raise ValueError(f"{path} holds no sweep ({META} is missing)") from None
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
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
        ValueError: ``path`` holds no sweep, or a part that is unreadable, another sweep's or
            a copy (a cell stored twice).
    """
    import pyarrow as pa

    from lshsim.sweep.spec import parse_spec

    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"{path} is not a folder")
    meta = _read_meta(path)
    store = Store(path, parse_spec(meta["spec"]), meta.get("sweep_id"))
    tables = [t.replace_schema_metadata(None) for t in store.tables()]
    return pa.concat_tables(tables) if tables else store.schema.empty_table()
