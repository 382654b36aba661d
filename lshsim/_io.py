"""Atomic file writes: a reader never sees a half-written file, and a crash leaves none."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    The parent folder is created. Text is written as UTF-8. On any error the temporary file is
    removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
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
