"""Derived numbers and tables of model.md and scaleout.md (``docs/render_numbers.py``).

Each derived number is a function of a :class:`docs.number_sources.Sources` (and an optional
text argument) that reads the result files through ``sources.get``; each table returns
Markdown. Names are unique across the ``docs/numbers_*.py`` modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: name -> function(sources[, arg]) -> number or text.
DERIVED: dict[str, Callable[..., Any]] = {}
#: name -> function(sources) -> Markdown table.
TABLES: dict[str, Callable[..., str]] = {}
