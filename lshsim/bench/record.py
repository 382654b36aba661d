"""The JSON record an ``experiments/`` script writes: the command that reproduces it, the file.

Each script builds a dict whose ``"command"`` (:func:`command_line`) reruns it, then prints
the JSON or writes it to its ``--out`` file (:func:`write_record`). The file is written
atomically (:func:`lshsim._io.write_atomic`): a reader never sees half a record, and a killed
run leaves the committed one untouched.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic


def command_line(script: str, argv: list[str] | None = None, prefix: str = "") -> str:
    """The shell command that reproduces a record.

    Args:
        script: the script's path from the repository root (``"experiments/rotation_gap.py"``).
        argv: its arguments (default ``sys.argv[1:]``); each is quoted with :func:`shlex.join`,
            so a path with spaces splits back into one argument.
        prefix: written before ``python``, e.g. an environment setting
            (``"OPENBLAS_NUM_THREADS=1 "``, with its trailing space).

    Returns:
        ``f"{prefix}python {script} {args}"``, stripped (no trailing space without arguments).
    """
    args = shlex.join(sys.argv[1:] if argv is None else argv)
    return f"{prefix}python {script} {args}".strip()


def write_record(doc: dict[str, Any], out: Path | None) -> None:
    """Print a record's JSON on stdout, or write it to ``out``.

    The JSON is indented by one space and ends with a newline; NumPy scalars are written as
    numbers (``default=float``). A file is written atomically, complete or absent, and
    ``wrote PATH`` goes to stderr, so that stdout stays clean for a pipe.

    Args:
        doc: the record (JSON-serialisable, NumPy scalars allowed).
        out: the file to write, or ``None`` to print the JSON.
    """
    text = json.dumps(doc, indent=1, default=float) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    write_atomic(out, text)
    print(f"wrote {out}", file=sys.stderr)
