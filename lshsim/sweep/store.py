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

The folder holds nothing else: :func:`read_table` (``lshsim.sweep.read_table``, what ``--plot``
reads), ``--resume`` and ``--plot`` refuse a file the sweep did not write (``notes.txt``, a
stray ``x.parquet``) in one line naming it, as they refuse another sweep's part. Names starting
with ``_`` or ``.`` are skipped by Parquet readers, so ``pyarrow.parquet.read_table(DIR)``
reads the rows alone too, but it reads a foreign part as if it were the sweep's; figures go
under ``_figures/``.
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
from lshsim.sweep.cells import cell_keys
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
#: The temporary file of a part or of :data:`META` being written
#: (:func:`lshsim._io.write_atomic`); a killed sweep may leave one, :meth:`Store.begin` removes
#: a part's.
TEMPORARY = re.compile(r"\.(part-\d+\.parquet|_sweep\.json)\.[0-9a-f]+\.tmp")
#: The default folder of ``--plot``'s figures, inside the sweep's (skipped by Parquet readers).
FIGURES = "_figures"
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


def _foreign_column(found, schema) -> str | None:
    """What makes a part's Arrow schema ``found`` not a sweep's (``schema``), or None.

    A part may lack a column (a sweep of an older format has fewer), never have another one,
    one of another type, or lack the cell key.
    """
    for field in found:
        i = schema.get_field_index(field.name)
        if i < 0:
            return f"column {one_line(field.name)} is not a column of the sweep's rows"
        if not field.type.equals(schema.field(i).type):
            return (
                f"column {one_line(field.name)} has type {field.type}, not {schema.field(i).type}"
            )
    if "cell" not in found.names:
        return "it has no column cell"
    return None


def one_line(text: str, limit: int = 80) -> str:
    """``text`` as it may stand in a one-line message: escaped if unprintable, cut if long.

    Args:
        text: a name or value read from a file.
        limit: the most characters kept.

    Returns:
        ``text``, or its ``ascii()`` form without quotes where it holds a newline or another
        unprintable character; ``...`` where it was cut.
    """
    text = text if text.isprintable() else ascii(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Store:
    """The Parquet store of one sweep (open it with :func:`open_store`).

    Attributes:
        path: the folder.
        spec: the sweep's spec.
    """

    def __init__(self, path: Path, spec: Spec, sweep_id: str | None = None, version: int = FORMAT):
        self.path = path
        self.spec = spec
        self.schema = _schema(columns(spec))
        #: The id of the sweep in the folder (None: a format-1 sweep, whose parts have none).
        self.sweep_id = sweep_id
        #: The format of the sweep's :data:`META` (before 3, cells' keys named another mode).
        self.version = version
        self._keys: set[str] | None = None
        self._lock: int | None = None
        self._created = False

    def keys(self) -> set[str] | None:
        """The keys of the spec's cells (None for a sweep of a format before 3)."""
        if self._keys is None and self.version >= 3:
            self._keys = cell_keys(self.spec)
        return self._keys

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
            holder = _holder_of(fd)
            os.close(fd)
            raise ValueError(_in_use(self.path, holder)) from None
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
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not part.is_file():  # a folder; a FIFO, which a read would wait on forever
            raise ValueError(f"{part}: not a regular file, so not a part; move it away")
        try:
            meta = pq.read_metadata(part)
            bad = _foreign_column(meta.schema.to_arrow_schema(), self.schema)
            table = pq.read_table(
                part,
                columns=columns,
                schema=None if columns else self.schema,
                page_checksum_verification=True,  # where the part has checksums
            )
            table.validate(full=True)  # e.g. text that is not UTF-8
        except (OSError, ValueError, pa.ArrowException) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(
                f"{part}: not a readable Parquet part ({one_line(why)}); move it away and "
                "--resume recomputes its cells"
            ) from None
        owner = (meta.metadata or {}).get(OWNER_KEY)
        if owner is not None:
            owner = owner.decode(errors="replace")
        if owner != self.sweep_id:
            whose = "no sweep id" if owner is None else f"sweep {one_line(owner)}"
            raise ValueError(
                f"{part}: written by {whose}, not by the sweep of this folder ({self.sweep_id}); "
                "a foreign part: move it away"
            )
        if bad:
            raise ValueError(f"{part}: {bad}, not this sweep's (an altered part?); move it away")
        return table

    def finished(self) -> set[str]:
        """The keys of the cells already in a part.

        Raises:
            ValueError: a part is unreadable or another sweep's, or a cell appears twice.
        """
        keys: set[str] = set()
        spec_keys = self.keys()
        for part in self.parts():
            for key in self._read_part(part, ["cell"]).column("cell").to_pylist():
                if key in keys:
                    raise ValueError(
                        f"{part}: cell {one_line(str(key))} is already in another part; not a "
                        "clean sweep (a copied part? move it away)"
                    )
                if spec_keys is not None and key not in spec_keys:
                    raise ValueError(
                        f"{part}: cell {one_line(str(key))} is not a cell of the sweep's spec "
                        "(a damaged or altered part); move it away and --resume recomputes "
                        "its cells"
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
        pq.write_table(table, sink, write_page_checksum=True)  # a damaged page is named
        path = self.path / f"part-{index:05d}.parquet"
        write_atomic(path, sink.getvalue().to_pybytes())
        return path


def check_store(path: str | Path, spec: Spec, *, resume: bool, parts: bool = True) -> Path:
    """Check the output folder for a new sweep, or for resuming one; read only.

    Nothing is created, locked or written, so a command can make every check before its work
    starts (:func:`lshsim.cli.work.start_work`).

    Args:
        path: the output folder (``--out``).
        spec: the checked spec.
        resume: continue the sweep already in ``path``.
        parts: with ``resume``, also read every part's cells (:meth:`Store.finished`).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: ``path`` is not a writable folder, or a running sweep owns it; without
            ``resume``, it is not empty; with ``resume``, it holds no sweep (missing or empty
            included), the sweep of another spec or of an older format, a file the sweep did
            not write, or a part that is unreadable, another sweep's or a copy.
    """
    path = check_output_dir(path, "--out")
    if path.is_dir():
        _check_not_running(path)
    _check_contents(path, spec, resume, parts)
    return path


def _check_contents(path: Path, spec: Spec, resume: bool, parts: bool) -> None:
    """The checks of :func:`check_store` on what the folder holds."""
    if not resume:
        if path.is_dir() and any(p.name != LOCK for p in _entries(path)):
            raise ValueError(
                f"--out: {path} is not empty; add --resume to continue the sweep in it, or "
                "give a new folder"
            )
        return
    meta = _read_meta(path, "--resume: ")
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
    check_own_files(path)
    if parts:
        Store(path, spec, meta.get("sweep_id")).finished()


def open_store(path: str | Path, spec: Spec, *, resume: bool) -> Store:
    """Check the output folder for a new sweep, or for resuming one, and own it.

    The checks of :func:`check_store` (but a part's, which :meth:`Store.finished` makes), once
    before the folder is created and locked and, but for the lock's, once more after.

    Args:
        path: the output folder (``--out``).
        spec: the checked spec.
        resume: continue the sweep already in ``path``.

    Returns:
        The store, locked (:meth:`Store.begin` writes :data:`META` when the first work
        starts; :meth:`Store.unlock` releases the folder).

    Raises:
        ValueError: as :func:`check_store`.
    """
    path = check_store(path, spec, resume=resume, parts=False)  # refused: nothing created
    store = Store(path, spec)
    try:
        store.lock()
        _check_contents(path, spec, resume, parts=False)  # again, now that it is ours
        if resume:
            store.sweep_id = _read_meta(path).get("sweep_id")
    except BaseException:
        store.unlock()
        raise
    return store


def _holder_of(fd: int) -> str:
    """What the process holding a lock wrote into it (its pid and host)."""
    text = os.read(fd, 200).decode("utf-8", "replace").strip()
    return one_line(text) if text else "another process"


def _in_use(path: Path, holder: str) -> str:
    """The error of a folder that a running sweep holds."""
    return (
        f"--out: {path} is in use by a running sweep ({holder}); wait for it to end (then "
        "--resume continues it) or give another folder"
    )


def _check_not_running(path: Path) -> None:
    """Refuse a folder whose :data:`LOCK` a running sweep holds; lock and write nothing."""
    import fcntl

    if not (path / LOCK).is_file():
        return
    try:
        fd = os.open(path / LOCK, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return  # unreadable: Store.lock names the folder
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # released at once, below
    except BlockingIOError:
        raise ValueError(_in_use(path, _holder_of(fd))) from None
    except OSError:
        return
    finally:
        os.close(fd)  # drops the shared lock


def _entries(path: Path) -> list[Path]:
    """The entries of a folder, or a one-line error."""
    try:
        return list(path.iterdir())
    except OSError as exc:
        raise ValueError(f"{path}: cannot list the folder ({exc.strerror or exc})") from None


def foreign_files(path: str | Path) -> list[Path]:
    """The entries of a sweep's folder that the sweep did not write, by name.

    A sweep writes :data:`META`, :data:`LOCK`, ``part-NNNNN.parquet`` files, the temporary
    files of :func:`lshsim._io.write_atomic` (:data:`TEMPORARY`, left by a killed sweep) and
    ``--plot``'s :data:`FIGURES` folder; everything else is foreign.

    Args:
        path: a sweep's folder.

    Returns:
        The foreign entries, sorted.

    Raises:
        ValueError: the folder cannot be listed.
    """
    own = {META, LOCK}
    return sorted(
        p
        for p in _entries(Path(path))
        if not (
            p.name in own
            or PART.fullmatch(p.name)
            or TEMPORARY.fullmatch(p.name)
            or (p.name == FIGURES and p.is_dir())
        )
    )


def check_own_files(path: str | Path) -> None:
    """Refuse a file in a sweep's folder that the sweep did not write (:func:`foreign_files`).

    Args:
        path: a sweep's folder.

    Raises:
        ValueError: one line naming the first foreign file (and how many more there are).
    """
    foreign = foreign_files(path)
    if foreign:
        first = one_line(str(foreign[0]), limit=1000)
        more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise ValueError(
            f"{first}: not a file of the sweep in {path}{more}; a sweep's folder holds only "
            f"{META}, {LOCK}, part-NNNNN.parquet files and {FIGURES}/: move it away"
        )


def _read_meta(path: Path, prefix: str = "") -> dict:
    """The checked :data:`META` of a sweep's folder (``prefix`` starts the missing one's error)."""
    file = path / META
    if not file.exists():
        hint = "; drop --resume to start a sweep (in an empty folder)" if prefix else ""
        raise ValueError(f"{prefix}{path} holds no sweep ({META} is missing){hint}")
    try:
        if not file.is_file():  # a folder; a FIFO, which a read would wait on forever
            raise ValueError
        meta = json.loads(file.read_text(encoding="utf-8"))
        ok = type(meta["format"]) is int and meta["format"] in FORMATS
        ok = ok and isinstance(meta["spec_sha256"], str)
        ok = ok and spec_hash(meta["spec"]) == meta["spec_sha256"]
        ok = ok and (meta["format"] == 1 or isinstance(meta["sweep_id"], str))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        ok = False
    if not ok:
        raise ValueError(f"{file} is not a sweep's spec file (unreadable or altered)")
    return meta


def read_table(path: str | Path):
    """The rows of the sweep in ``path``, as one ``pyarrow.Table``: its rows and only its rows.

    Every part is checked to be this sweep's (its owner id, one row per cell), and the
    folder to hold nothing the sweep did not write, so a stray or copied file is an error,
    never rows mixed into the sweep's.

    Args:
        path: a sweep's folder.

    Returns:
        The rows of all finished parts, in part order (the empty table of the spec's columns
        when none is finished).

    Raises:
        ValueError: one line naming the file: ``path`` holds no sweep or an altered
            :data:`META`, a file the sweep did not write, or a part that is unreadable,
            another sweep's or a copy (a cell stored twice).
    """
    import pyarrow as pa

    from lshsim.sweep.spec import parse_spec

    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"{path} is not a folder")
    meta = _read_meta(path)
    try:
        store = Store(path, parse_spec(meta["spec"]), meta.get("sweep_id"), meta["format"])
    except ValueError as exc:
        raise ValueError(f"{path / META}: its spec is not a valid spec ({exc})") from None
    check_own_files(path)
    tables = [t.replace_schema_metadata(None) for t in store.tables()]
    return pa.concat_tables(tables) if tables else store.schema.empty_table()
