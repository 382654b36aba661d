"""The environment variables read at import, checked before anything imports their readers.

Numba reads ``NUMBA_NUM_THREADS`` once, when it is first imported: a value it cannot parse is
ignored with a multi-line warning, and a value below 1 makes the import itself fail with a
traceback. :func:`check_environment` runs first in :func:`lshsim.cli.main.main` (``import
lshsim.cli`` does not import Numba), so a bad value ends as one line and exit 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Check the environment variables the commands' libraries read at import.

    ``NUMBA_NUM_THREADS``, where set, must be what Numba accepts: an integer (Numba parses it
    with ``int``) of at least 1. Numba allows more threads than CPUs, so no upper bound.

    Args:
        environ: the environment (default ``os.environ``).

    Raises:
        ValueError: one line naming the variable, the allowed values and the value found.
    """
    env = os.environ if environ is None else environ
    raw = env.get("NUMBA_NUM_THREADS")
    if raw is None:
        return
    try:
        ok = int(raw) >= 1
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"NUMBA_NUM_THREADS must be a positive integer, got {raw!r}")
