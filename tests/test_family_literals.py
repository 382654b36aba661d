"""No family name as a literal outside the family's own module (issue 29: one family, one place).

An :mod:`ast` scan of every module of the ``lshsim`` package. A string literal equal to a
registered family's name (a key of :data:`lshsim.hashing.FAMILIES`) is an offence where it is

* an operand of ``==`` or ``!=``, or an element of a literal tuple, list or set compared with
  ``in`` / ``not in`` (``family == "minhash"``, ``family in ("voronoi", "crosspolytope")``);
* an element of a tuple, list or set literal (``VECTOR = ("simhash", "pstable")``);
* a key of a dict literal (``{"simhash": simhash_case}``);

unless the module is the family's own (the one that defines its class, found with
:func:`inspect.getmodule`) or the registration (``lshsim/hashing/registry.py`` and
``lshsim/hashing/__init__.py``). Such lists and branches belong on the family (its attributes
and laws), in a view derived from the registry (:func:`lshsim.hashing.family_names`,
:class:`lshsim.hashing.FamilyView`), or, where a study or claim is *about* named families, in
one declaration that names them through the class (``SimHash.name``).

Not offences: docstrings, error messages and other strings that merely contain a name,
f-strings, call arguments (``make_family("simhash", ...)``) and subscripts (``rows["ngram"]``).

Two kinds of literal share a family's name but mean something else, and are skipped:

* **Lookups.** The model's lookups (:data:`lshsim.t5.configs.LOOKUPS`) include ``tokenid``,
  ``productkey`` and ``ngram``. In the modules about the model's lookups (:data:`LOOKUP_MODULES`:
  ``lshsim/t5/``, the routing and memory studies, the model's CLI checks and flags, the routing
  probe's figures) a literal that is a lookup name names the lookup (``cfg.lookup == "tokenid"``,
  ``INIT_LOOKUPS``) and is skipped. A family name that is not a lookup (``"simhash"`` as an
  ``lsh_family``) is still an offence there.
* **Parameters.** A dict key that is also the keyword of a family's parameter (NGram's
  ``ngram``, the n-gram order) names the parameter (params dicts, result records) and is
  skipped; as a comparison operand or a tuple element it is still an offence.

Each offence is printed as ``path:line: 'name' (where)``.
"""

from __future__ import annotations

import ast
import inspect
from fnmatch import fnmatch
from pathlib import Path

import lshsim
from lshsim.hashing import FAMILIES
from lshsim.t5.configs import LOOKUPS

PACKAGE = Path(lshsim.__file__).resolve().parent
ROOT = PACKAGE.parent
#: the registration may name every family
REGISTRATION = {"lshsim/hashing/registry.py", "lshsim/hashing/__init__.py"}
#: modules about the model's lookups (:func:`fnmatch.fnmatch` patterns; ``*`` spans folders)
LOOKUP_MODULES = (
    "lshsim/t5/*",
    "lshsim/studies/routing.py",
    "lshsim/studies/memory/*",
    "lshsim/cli/checks.py",
    "lshsim/cli/model*.py",
    "lshsim/plots/probe.py",
)
#: files with offences left to their owners (issue 29); remove an entry once its file is clean


def _rel(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def _own_modules() -> dict[str, set[str]]:
    """Family name -> the package-relative paths that may name it as a literal."""
    own = {}
    for name, cls in FAMILIES.items():
        paths = set(REGISTRATION)
        module = inspect.getmodule(cls)
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve().is_relative_to(ROOT):
            paths.add(_rel(Path(file)))
        own[name] = paths
    return own


def _parameter_names() -> set[str]:
    return {p.name for cls in FAMILIES.values() for p in cls.parameters} | {
        p.option for cls in FAMILIES.values() for p in cls.parameters
    }


def _is_lookup_module(rel: str) -> bool:
    return any(fnmatch(rel, pattern) for pattern in LOOKUP_MODULES)


def offences(path: Path) -> list[str]:
    """The family-name literals of one module, as ``path:line: 'name' (where)``."""
    rel = _rel(path)
    own = _own_modules()
    skip = set(LOOKUPS) if _is_lookup_module(rel) else set()
    params = _parameter_names()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    found: dict[tuple[int, int], str] = {}

    def check(node: ast.AST, where: str, *, key: bool = False) -> None:
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return
        name = node.value
        if name not in FAMILIES or rel in own[name] or name in skip:
            return
        if key and name in params:
            return
        found.setdefault((node.lineno, node.col_offset), f"{rel}:{node.lineno}: {name!r} ({where})")

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands[:-1], operands[1:], strict=True):
                if isinstance(op, ast.Eq | ast.NotEq):
                    check(left, "comparison")
                    check(right, "comparison")
                elif isinstance(op, ast.In | ast.NotIn) and isinstance(
                    right, ast.Tuple | ast.List | ast.Set
                ):
                    for element in right.elts:
                        check(element, "comparison")
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            for element in node.elts:
                check(element, f"{type(node).__name__.lower()} literal")
        elif isinstance(node, ast.Dict):
            for k in node.keys:
                if k is not None:
                    check(k, "dict key", key=True)
    return [found[k] for k in sorted(found)]


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_no_family_literals_outside_their_modules():
    """No module of lshsim names a family by a literal in a comparison,
    a tuple/list/set literal or a dict key, outside the family's own module."""
    assert MODULES, "no modules found"
    found = [o for path in MODULES for o in offences(path)]
    print("\n".join(found))
    assert not found, "family-name literals (derive from lshsim.hashing.FAMILIES):\n" + "\n".join(
        found
    )
