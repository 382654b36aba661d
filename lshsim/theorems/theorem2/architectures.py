"""The two student architectures of Theorem 2 and the parameter type they share (no JAX)."""

from __future__ import annotations

from typing import Any

#: The two student architectures (a plain dict so the script, tests and figure share it).
ARCHITECTURES: dict[str, str] = {"A": "input-only lookup", "B": "lookups at upper layers + output"}

Params = dict[str, Any]


def check_arch(arch: str) -> None:
    """``ValueError`` naming ``arch`` unless it is one of :data:`ARCHITECTURES`."""
    if arch not in ARCHITECTURES:
        raise ValueError(f"arch: must be one of {sorted(ARCHITECTURES)}, got {arch!r}")
