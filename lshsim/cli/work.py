"""The line between checking a command line and doing its work.

Every command handler checks all of its input first, then calls :func:`start_work` once, just
before it imports JAX or torch, writes a file or starts a progress bar. Normally the call does
nothing. Inside :func:`checks_only` it raises :class:`ChecksPassed` instead, so a test (the
option fuzzer, ``tests/cli/test_fuzz_options.py``) can run every command's parsing and
checks in process on hostile values without ever doing the work, and can see that a refused
command left its ``--out`` as it found it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["ChecksPassed", "checks_only", "start_work"]

_STATE = threading.local()


class ChecksPassed(Exception):
    """Raised by :func:`start_work` inside :func:`checks_only`: every check passed."""


def start_work() -> None:
    """Mark the end of a command's checks (raises :class:`ChecksPassed` in :func:`checks_only`).

    Raises:
        ChecksPassed: only inside :func:`checks_only`.
    """
    if getattr(_STATE, "checks_only", False):
        raise ChecksPassed


@contextlib.contextmanager
def checks_only() -> Iterator[None]:
    """Within this block a command stops at :func:`start_work` by raising :class:`ChecksPassed`.

    Yields:
        Nothing; the previous mode is restored on exit.
    """
    previous = getattr(_STATE, "checks_only", False)
    _STATE.checks_only = True
    try:
        yield
    finally:
        _STATE.checks_only = previous
