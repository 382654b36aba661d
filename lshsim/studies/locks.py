"""Which lock file the running environment was installed from, for the record of a run.

The checkout's ``requirements/lock*.txt`` (written by ``experiments/lock.sh`` with ``uv pip
compile --generate-hashes``) pin every package of an environment. :func:`lock_record` says
which of them the installed packages match, pin for pin, and that file's SHA-256, so a
``results.json`` names the exact environment its numbers came from.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
from pathlib import Path

__all__ = ["LOCK_GLOB", "installed", "lock_record", "mismatches", "pins"]

#: The lock files, relative to the checkout's root.
LOCK_GLOB = "requirements/lock*.txt"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


def _normalise(name: str) -> str:
    """PEP 503 name: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(text: str) -> dict[str, str]:
    """``{name: version}`` of the ``name==version`` lines of a requirements file.

    Args:
        text: the file's text (hash and comment lines are skipped).

    Returns:
        The pins, names normalised (PEP 503).
    """
    out = {}
    for line in text.splitlines():
        match = _PIN.match(line)
        if match:
            out[_normalise(match.group(1))] = match.group(2)
    return out


def installed() -> dict[str, str]:
    """``{name: version}`` of every installed distribution (names normalised)."""
    out = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out.setdefault(_normalise(name), dist.version)
    return out


def mismatches(locked: dict[str, str], have: dict[str, str]) -> list[str]:
    """What differs between the pins ``locked`` and the installed versions ``have``.

    Returns:
        One entry per pin not met (``"numpy 2.5.0 (locked 2.4.6)"``, ``"ruff missing"``).
    """
    out = []
    for name, version in sorted(locked.items()):
        if name not in have:
            out.append(f"{name} missing")
        elif have[name] != version:
            out.append(f"{name} {have[name]} (locked {version})")
    return out


def lock_record(root: Path | str | None = None) -> dict[str, str]:
    """Which lock file the environment matches: ``{"lock": ..., "lock_sha256": ...}``.

    The first lock file (largest first) whose every pin is installed at its version; else
    ``lock`` says ``none`` and how the closest one differs. Empty when the package does not
    run from a checkout holding lock files.

    Args:
        root: the checkout (default: the one this package runs from).
    """
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    files = sorted(root.glob(LOCK_GLOB), key=lambda p: (-p.stat().st_size, p.name))
    if not files:
        return {}
    have = installed()
    closest = None
    for path in files:
        data = path.read_bytes()
        missing = mismatches(pins(data.decode("utf-8", "replace")), have)
        rel = path.relative_to(root).as_posix()
        if not missing:
            return {"lock": rel, "lock_sha256": hashlib.sha256(data).hexdigest()}
        if closest is None or len(missing) < len(closest[1]):
            closest = (rel, missing)
    rel, missing = closest
    more = f"; {len(missing) - 3} more" if len(missing) > 3 else ""
    return {"lock": f"none (closest {rel}: {', '.join(missing[:3])}{more})"}
