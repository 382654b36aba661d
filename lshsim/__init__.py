"""lshsim: collision-probability simulation and exact theory for sparse-model lookups.

After "The Power of External Memory in Increasing Predictive Model Capacity".

``FAMILIES``, ``make_family`` and ``register_family`` (from :mod:`lshsim.hashing`) are
loaded on first use (PEP 562), so ``import lshsim`` does not import Numba: the command line
checks the environment Numba reads at import (``NUMBA_NUM_THREADS``) before anything imports it.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["FAMILIES", "__version__", "make_family", "register_family"]

_LAZY = ("FAMILIES", "make_family", "register_family")


def __getattr__(name: str):
    """``FAMILIES`` and ``make_family``, imported from :mod:`lshsim.hashing` on first use."""
    if name in _LAZY:
        from lshsim import hashing

        value = getattr(hashing, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the lazy ones included."""
    return sorted(set(globals()) | set(_LAZY))
