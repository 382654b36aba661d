"""Bounds from memory: the bytes this machine has available, and refusing what cannot fit.

A request is refused before anything is allocated when an estimate of the bytes it needs
exceeds what the machine has available, with one line naming the option, the estimate and the
available memory (never a fixed cap on the option itself)::

    --batch: 100000000 examples need about 1.2 TB for one training step; this machine has
    21.3 GB available

Available memory is ``MemAvailable`` of ``/proc/meminfo`` (Linux: free memory plus what the
kernel can reclaim without swapping), else ``os.sysconf``'s available physical pages, else
unknown (then nothing is refused on memory grounds).
"""

from __future__ import annotations

import os

#: Decimal units, as ``free -h --si`` and disk vendors print them.
_UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")


def available_bytes(meminfo: str = "/proc/meminfo") -> int | None:
    """Bytes of memory available to a new allocation, or ``None`` if the system cannot say.

    Args:
        meminfo: the ``meminfo`` file to read (tests point it elsewhere).

    Returns:
        ``MemAvailable`` in bytes, or ``SC_AVPHYS_PAGES * SC_PAGE_SIZE``, or ``None``.
    """
    try:
        with open(meminfo) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    value, *unit = line.split()[1:]
                    return int(value) * (1024 if unit and unit[0].lower() == "kb" else 1)
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def format_bytes(n: float) -> str:
    """``n`` bytes with a decimal unit and three significant digits: ``1.2 TB``, ``21.3 GB``."""
    n = float(n)
    unit = 0
    while abs(n) >= 1000 and unit < len(_UNITS) - 1:
        n /= 1000
        unit += 1
    if unit == 0:
        return f"{n:.0f} B"
    return f"{n:.3g} {_UNITS[unit]}" if n < 1000 else f"{n:.0f} {_UNITS[unit]}"


def check_fits(
    option: str, subject: str, need: float, purpose: str, available: int | None = None
) -> None:
    """Refuse a request that needs more than the available memory, in one line.

    Args:
        option: the option's CLI spelling (``--batch``), first in the message.
        subject: what it asks for, e.g. ``"100000000 examples"`` (the verb ``need`` follows).
        need: the estimated bytes.
        purpose: what the bytes are for, e.g. ``"one training step"``.
        available: bytes available (default: :func:`available_bytes`).

    Raises:
        ValueError: ``need`` exceeds ``available`` (nothing is refused when unknown).
    """
    if available is None:
        available = available_bytes()
    if available is not None and need > available:
        raise ValueError(
            f"{option}: {subject} need about {format_bytes(need)} for {purpose}; "
            f"this machine has {format_bytes(available)} available"
        )


#: The longest work a command takes on without being asked twice: a day. Simulations, probes,
#: sweeps and calibrations whose optimistic estimate exceeds it are refused before they start
#: (training is not: the paper's runs take days, and a run checkpoints and resumes).
DAY_SECONDS = 86_400


def check_duration(option: str, subject: str, seconds: float, purpose: str) -> None:
    """Refuse work whose optimistic time estimate exceeds :data:`DAY_SECONDS`, in one line.

    The estimate should be a lower bound (a fast machine's rate), so that only work that
    cannot finish in a day anywhere is refused.

    Args:
        option: the option's CLI spelling (``--samples``), first in the message.
        subject: what it asks for, e.g. ``"10^12 pairs"`` (the verb ``take`` follows).
        seconds: the estimated seconds.
        purpose: what the time is for, e.g. ``"the estimate"``.

    Raises:
        ValueError: ``seconds`` exceeds a day.
    """
    if seconds > DAY_SECONDS:
        raise ValueError(
            f"{option}: {subject} take at least {seconds / DAY_SECONDS:.3g} days for "
            f"{purpose} (at an optimistic rate); ask for less"
        )
