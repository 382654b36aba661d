"""The one registry of lookup families, and every list of families derived from it.

Built-in families register here in :mod:`lshsim.hashing`; a family from outside the package
registers with :func:`register_family` (in process) or through the entry-point group
``lshsim.families`` (loaded when :mod:`lshsim.hashing` is imported, so every process, a
Dask worker too, sees it). Every other list of families -- the CLI's choices and help,
``lshsim families``, the sweep's options, the hypothesis strategies, the plots' order -- is
a :class:`FamilyView` of this registry, so it follows a registration.

A plug-in imported *before* lshsim (``import myplugin`` whose first line imports
:mod:`lshsim.hashing`) is still being imported when its own entry point is loaded: its class
does not exist yet. That entry point is *deferred* (no warning) and registered as soon as its
class is defined (:data:`lshsim.hashing.base.SUBCLASS_HOOKS`), or, where the entry point names
a class re-exported from another module, at the next :func:`get_family` or
:func:`family_names`. Either way each family is registered once. An entry point that cannot be
loaded is one :class:`PluginWarning` line naming it, its value and the error; the other
families are unaffected.

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
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence

from lshsim.hashing.base import SUBCLASS_HOOKS, HashFamily

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "FamilyView",
    "PluginWarning",
    "family_names",
    "get_family",
    "load_deferred",
    "load_entry_points",
    "register_family",
    "unregister_family",
]

#: The entry-point group third-party families are announced in.
ENTRY_POINT_GROUP = "lshsim.families"
#: Every family by name, in registration order: the one dict everything enumerates.
FAMILIES: dict[str, type[HashFamily]] = {}
#: Entry points met while their module was still being imported, by ``"module:attr"``.
_DEFERRED: dict[str, importlib.metadata.EntryPoint] = {}


class PluginWarning(UserWarning):
    """A family entry point that was not loaded (one line: its name, its value, the error)."""


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
    word = isinstance(name, str) and name.isprintable() and not name.startswith("-")
    if not word or not name or any(c.isspace() for c in name):
        raise ValueError(
            f"family name must be a non-empty string without whitespace or control characters, "
            f"not starting with '-' (it is a CLI value), got {name!r} for {cls!r}"
        )
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
    if _DEFERRED:
        load_deferred()
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {name!r}") from None


def family_names(predicate: Callable[[type[HashFamily]], bool] | None = None) -> tuple[str, ...]:
    """The registered names, in order, of the families where ``predicate(cls)`` holds."""
    if _DEFERRED:
        load_deferred()
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

    Each entry point names a ``HashFamily`` subclass (``module:Class``). One that cannot be
    loaded (its import raises, the attribute is missing, it is no family, its name is refused)
    is skipped with one :class:`PluginWarning` line, so one bad plug-in does not stop the
    toolkit. One whose module is still being imported (the plug-in imported lshsim) is
    deferred: registered when its class is defined (module doc).

    Returns:
        The names registered.
    """
    names = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        _DEFERRED.pop(_target(ep), None)
        try:
            cls = ep.load()
        except Exception as exc:
            if _importing(ep.module):
                _DEFERRED[_target(ep)] = ep
            else:
                _warn(ep, exc)
            continue
        if _register_entry(ep, cls):
            names.append(cls.name)
    return names


def load_deferred() -> list[str]:
    """Register the deferred entry points whose module has finished importing (module doc).

    Returns:
        The names registered.
    """
    names = []
    for key, ep in list(_DEFERRED.items()):
        if _importing(ep.module) or _DEFERRED.pop(key, None) is None:  # (None: loaded meanwhile)
            continue
        try:
            cls = ep.load()
        except Exception as exc:
            _warn(ep, exc)
            continue
        if _register_entry(ep, cls):
            names.append(cls.name)
    return names


def _target(ep: importlib.metadata.EntryPoint) -> str:
    """``"module:attr"`` of an entry point, as a class's ``__module__`` and ``__qualname__``."""
    return f"{ep.module}:{ep.attr}"


def _importing(module: str) -> bool:
    """Whether ``module`` or a package above it is being imported right now (in this thread).

    Read from the module spec's ``_initializing`` flag, which the import system sets while it
    runs the module (and reads itself to name a "partially initialized module").
    """
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        spec = getattr(sys.modules.get(".".join(parts[:i])), "__spec__", None)
        if getattr(spec, "_initializing", False):
            return True
    return False


def _register_entry(ep: importlib.metadata.EntryPoint, cls) -> bool:
    """Register an entry point's class; warn (one line) and return False if it is refused."""
    try:
        register_family(cls, replace=FAMILIES.get(getattr(cls, "name", None)) is cls)
    except Exception as exc:
        _warn(ep, exc)
        return False
    return True


def _warn(ep: importlib.metadata.EntryPoint, error: BaseException) -> None:
    """One :class:`PluginWarning` line: the entry point's name and value, and the error."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    warnings.warn_explicit(
        f"family entry point {ep.name!r} ({ep.value}) not loaded: {text}",
        PluginWarning,
        filename=ENTRY_POINT_GROUP,  # no source line under it: the warning is one line
        lineno=0,
        module=__name__,
    )


def _on_subclass(cls: type) -> None:
    """Register a new class that a deferred entry point names (:data:`SUBCLASS_HOOKS`)."""
    ep = _DEFERRED.pop(f"{cls.__module__}:{cls.__qualname__}", None)
    if ep is not None:
        _register_entry(ep, cls)


SUBCLASS_HOOKS.append(_on_subclass)
