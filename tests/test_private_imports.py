"""No module of ``lshsim/`` imports another module's private (underscore) names.

A private name is a module's own business; a second module that needs it makes it part of an
interface, which should then be public (and documented). Imports inside functions count too.
Dunder names (``__version__``) are not private.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lshsim"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _offences() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        here = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or node.module is None or node.level:
                continue
            if not node.module.startswith("lshsim") or node.module == here:
                continue
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                    rel = path.relative_to(PACKAGE.parent)
                    out.append(f"{rel}:{node.lineno}: from {node.module} import {name}")
    return out


def test_no_module_imports_another_modules_private_names():
    offences = _offences()
    assert not offences, "private names imported across modules:\n" + "\n".join(offences)
