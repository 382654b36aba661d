"""The one registry of lookup families, and every list of families derived from it.

Built-in families register here in :mod:`lshsim.hashing`; a family from outside the package
registers with :func:`register_family` (in process) or through the entry-point group
``lshsim.families`` (loaded when :mod:`lshsim.hashing` is imported, so every process, a
Dask worker too, sees it). Every other list of families -- the CLI's choices and help,
``lshsim families``, the sweep's options, the hypothesis strategies, the plots' order -- is
a :class:`FamilyView` of this registry, so it follows a registration.

>>> from lshsim.hashing import FAMILIES, SimHash, register_family
>>> class Coin(SimHash):
...     name = "coin-example"
>>> _ = register_family(Coin)
>>> "coin-example" in FAMILIES
True
>>> unregister_family("coin-example")
"""

from __future__ import annotations

import importlib.metadata
import warnings
from collections.abc import Callable, Iterator, Sequence

from lshsim.hashing.base import HashFamily

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "FamilyView",
    "family_names",
    "get_family",
    "load_entry_points",
    "register_family",
    "unregister_family",
]

#: The entry-point group third-party families are announced in.
ENTRY_POINT_GROUP = "lshsim.families"
#: Every family by name, in registration order: the one dict everything enumerates.
FAMILIES: dict[str, type[HashFamily]] = {}


def register_family(cls: type[HashFamily], *, replace: bool = False) -> type[HashFamily]:
    """Add a family to the registry (usable as a class decorator).

    Args:
        cls: a subclass of :class:`~lshsim.hashing.HashFamily` with a new ``name``.
        replace: allow replacing a family registered under the same name.

    Returns:
        ``cls``.

    Raises:
        ValueError: not a ``HashFamily`` subclass, no name, a name taken, or a parameter that
            clashes with another family's CLI option of another type.
    """
    if not (isinstance(cls, type) and issubclass(cls, HashFamily)):
        raise ValueError(f"family must be a subclass of lshsim.hashing.HashFamily, got {cls!r}")
    name = cls.name
    if not isinstance(name, str) or not name or name != name.strip():
        raise ValueError(f"family name must be a non-empty string, got {name!r} for {cls!r}")
    if name in FAMILIES and FAMILIES[name] is not cls and not replace:
        raise ValueError(f"family name {name!r} is already registered by {FAMILIES[name]!r}")
    if not cls.help:
        raise ValueError(f"family {name!r} needs a one-line help (class attribute help)")
    for param in cls.parameters:
        for other in FAMILIES.values():
            for q in other.parameters:
                if q.option == param.option and q.type is not param.type:
                    raise ValueError(
                        f"family {name!r}: option --{param.option} is a {param.type.__name__} "
                        f"but family {other.name!r} declares it a {q.type.__name__}"
                    )
    FAMILIES[name] = cls
    return cls


def unregister_family(name: str) -> None:
    """Remove a family from the registry (tests; a no-op if absent)."""
    FAMILIES.pop(name, None)


def get_family(name: str) -> type[HashFamily]:
    """Look a family up by name; ``ValueError`` naming the choices if unknown."""
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {name!r}") from None


def family_names(predicate: Callable[[type[HashFamily]], bool] | None = None) -> tuple[str, ...]:
    """The registered names, in order, of the families where ``predicate(cls)`` holds."""
    return tuple(k for k, v in FAMILIES.items() if predicate is None or predicate(v))


class FamilyView(Sequence):
    """A live, tuple-like list of the families that satisfy a predicate (follows registration).

    Args:
        predicate: which families belong.
        doc: what the view stands for.
    """

    def __init__(self, predicate: Callable[[type[HashFamily]], bool], doc: str):
        self._predicate = predicate
        self.__doc__ = doc

    def _names(self) -> tuple[str, ...]:
        return family_names(self._predicate)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __len__(self) -> int:
        return len(self._names())

    def __getitem__(self, i):
        return self._names()[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple | list | FamilyView):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._names())


def load_entry_points() -> list[str]:
    """Register the families announced in the entry-point group ``lshsim.families``.

    Each entry point names a ``HashFamily`` subclass (``module:Class``). A broken one is
    skipped with a warning naming it, so one bad plug-in does not stop the toolkit.

    Returns:
        The names registered.
    """
    names = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
            register_family(cls, replace=FAMILIES.get(getattr(cls, "name", None)) is cls)
        except Exception as exc:
            warnings.warn(
                f"lshsim: family entry point {ep.name!r} ({ep.value}) not loaded: {exc}",
                stacklevel=2,
            )
            continue
        names.append(cls.name)
    return names
