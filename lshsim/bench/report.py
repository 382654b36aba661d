"""What the benchmarks share to talk to their user: progress lines, the report, option types.

Progress goes to stderr (:func:`log`), so that stdout carries only the report: a table, or
the JSON payload when asked for (:func:`emit`). An ``experiments/`` script's JSON record
holds the command that reruns it (:func:`command_line`) and is printed or written to its
``--out`` file (:func:`write_record`). Files are written atomically
(:func:`lshsim._io.write_atomic`): a reader never sees half a record, and a killed run leaves
the committed one untouched. Both write the same JSON (:func:`to_json`).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic


def log(msg: str) -> None:
    """Print a progress line on stderr, flushed at once.

    Args:
        msg: the line.
    """
    print(msg, file=sys.stderr, flush=True)


def to_json(payload: dict[str, Any]) -> str:
    """The JSON text of a report or record: indented by one space, ending with a newline.

    Args:
        payload: JSON-serialisable values; NumPy scalars are written as numbers.

    Returns:
        The text.
    """
    return json.dumps(payload, indent=1, default=float) + "\n"


def emit(payload: dict[str, Any], table: str, *, as_json: bool, out: str | Path | None) -> None:
    """Print a benchmark's report and save its JSON (shared by the bench scripts).

    JSON on stdout (the table on stderr) or the table on stdout; the JSON is written
    atomically to ``out`` when given.

    Args:
        payload: the JSON-serialisable results.
        table: the human-readable report.
        as_json: print the JSON on stdout (and the table on stderr).
        out: also write the JSON to this file.
    """
    if as_json:
        log(table)
        sys.stdout.write(to_json(payload))
    else:
        print(table)
    if out:
        write_atomic(out, to_json(payload))


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

    The JSON is :func:`to_json`'s. A file is written atomically, complete or absent, and
    ``wrote PATH`` goes to stderr, so that stdout stays clean for a pipe.

    Args:
        doc: the record (JSON-serialisable, NumPy scalars allowed).
        out: the file to write, or ``None`` to print the JSON.
    """
    if out is None:
        sys.stdout.write(to_json(doc))
        return
    write_atomic(out, to_json(doc))
    print(f"wrote {out}", file=sys.stderr)


def positive(text: str) -> int:
    """Argparse type: an integer >= 1.

    Args:
        text: the option's value.

    Returns:
        The integer.
    """
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def non_negative(text: str) -> int:
    """Argparse type: an integer >= 0.

    Args:
        text: the option's value.

    Returns:
        The integer.
    """
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value
