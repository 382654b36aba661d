"""Family classes whose names the registry refuses (they are CLI values: one word, no dash)."""

from __future__ import annotations

from tests.plugins.minimal_family import Minimal

#: The refused names: a newline, a space, a tab, an option's look, a lone dash, nothing.
BAD_NAMES = ("two\nlines", "has space", "tab\tname", "--cosine", "-", "")


def bad_family(name: str) -> type[Minimal]:
    """A copy of ``toyminimal`` named ``name``."""
    return type("BadName", (Minimal,), {"name": name, "__module__": __name__})


#: A family named like an option, for an entry point (``tests.plugins.bad_names:Dashed``).
Dashed = bad_family("--cosine")
