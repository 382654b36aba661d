"""Atomic file writes: a reader never sees a half-written file, and a crash leaves none."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


def _open_temporary(path: Path) -> tuple[int, Path]:
    """Create a fresh temporary file beside ``path``; return its descriptor and name.

    The file is opened with mode ``0o666``, so the kernel applies the process's umask (and a
    folder's default ACL) exactly as for a plain ``open(path, "w")``: ``0o644`` under umask
    022. The umask is never read or changed, so this is thread-safe. A file replacing an
    existing ``path`` keeps that file's permission bits, as ``open`` does.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue
        break
    try:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
    except FileNotFoundError:
        pass
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    return fd, tmp


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    The parent folder is created. Text is written as UTF-8. A new file gets the mode a plain
    ``open(path, "w")`` would give it (``0o666`` less the umask: ``0o644`` under umask 022);
    a replaced file keeps its mode. On any error the temporary file is removed and ``path`` is
    untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = _open_temporary(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_output_dir(path: str | Path, option: str = "--out") -> Path:
    """Check, before any work, that ``path`` is a folder this process can create or write into.

    Nothing is created. Call it at the start of a command that writes into ``path``, so a bad
    output path fails in a second with one line instead of after the computation.

    Args:
        path: the output folder (it may not exist yet).
        option: how the caller names the parameter in the message (e.g. ``--out``).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: one line naming ``option``: ``path`` is an existing file, lies under a
            file, or neither it nor its nearest existing parent folder is writable.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option}: {path} is an existing file, not a folder")
    ancestor = path
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"{option}: {path} lies under {ancestor}, which is a file")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ValueError(f"{option}: {ancestor} is not writable")
    return path
