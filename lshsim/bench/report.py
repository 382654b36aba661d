"""What the benchmarks share to talk to their user: progress lines, the report, option types.

Progress goes to stderr (:func:`log`), so that stdout carries only the report: a table, or
the JSON payload when asked for (:func:`emit`).
"""

from __future__ import annotations

import argparse
import json
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
        print(json.dumps(payload, indent=1))
    else:
        print(table)
    if out:
        write_atomic(out, json.dumps(payload, indent=1) + "\n")


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
