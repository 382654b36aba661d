"""The package's layout rules (issue 17), checked on the source so a regression fails CI.

One invariant per test: module and function sizes, no ``sys.path`` edits in ``experiments/``,
no imports of ``tests`` outside ``tests/``, and every import path the README shows.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lshsim"
MAX_MODULE_LINES = 650
MAX_FUNCTION_LINES = 120


def _sources(*folders: str) -> list[Path]:
    """The Python files under ``folders``, a docs build's output (``_build``: downloads) aside."""
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py") if "_build" not in p.parts)


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def test_no_module_over_the_line_limit():
    """Every module of the package and of the docs' code has at most 650 lines."""
    long = {
        str(p.relative_to(ROOT)): n
        for p in _sources("lshsim", "docs")
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_over_the_line_limit():
    """Every function of the package and the docs' code, nested ones included, has <= 120 lines."""
    long = {}
    for p in _sources("lshsim", "docs"):
        for fn in _functions(ast.parse(p.read_text())):
            length = fn.end_lineno - fn.lineno + 1
            if length > MAX_FUNCTION_LINES:
                long[f"{p.relative_to(ROOT)}:{fn.lineno} {fn.name}"] = length
    assert long == {}


def test_experiments_do_not_edit_sys_path():
    """Scripts call the installed package; none edits ``sys.path``."""
    edits = [
        str(p.relative_to(ROOT))
        for p in _sources("experiments")
        if re.search(r"sys\.path\.(insert|append)|sys\.path\s*=", p.read_text())
    ]
    assert edits == []


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_nothing_outside_tests_imports_tests():
    """The package and the scripts never import the test suite (references: lshsim.testing)."""
    offenders = [
        str(p.relative_to(ROOT))
        for p in _sources("lshsim", "experiments")
        if any(m == "tests" or m.startswith("tests.") for m in _imported_modules(p))
    ]
    assert offenders == []


def test_every_package_has_a_docstring():
    """Each package's ``__init__`` says what the package holds."""
    missing = [
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("__init__.py")
        if len(ast.get_docstring(ast.parse(p.read_text())) or "") < 20
    ]
    assert missing == []


#: The import paths the README shows, as (module, names).
README_IMPORTS = [
    ("lshsim.hashing", ["FAMILIES", "make_family"]),
    ("lshsim.estimate", ["estimate_collision"]),
    ("lshsim.theory", ["probability", "rho", "limit_rho", "collision_probability"]),
    ("lshsim.strategies", []),
    ("lshsim.cli.main", ["main"]),
    ("lshsim.t5.configs", ["get_config"]),
    ("lshsim.t5.model", ["T5", "init_params"]),
    ("lshsim.t5.hf", ["load_hf_checkpoint", "save_hf_checkpoint"]),
]


@pytest.mark.parametrize(("module", "names"), README_IMPORTS)
def test_readme_import_paths_work(module, names):
    """Every public import path shown in the README imports and has its names."""
    if module.startswith("lshsim.t5.") and module != "lshsim.t5.configs":
        pytest.importorskip("jax")
    mod = importlib.import_module(module)
    assert [n for n in names if not hasattr(mod, n)] == []


def test_readme_shows_only_listed_import_paths():
    """The list above covers every ``from lshsim... import`` line of the README's code blocks."""
    text = (ROOT / "README.md").read_text()
    shown = set(re.findall(r"^\s*from (lshsim[\w.]*) import", text, flags=re.MULTILINE))
    shown |= set(re.findall(r"^\s*import (lshsim[\w.]*)", text, flags=re.MULTILINE))
    listed = {m for m, _ in README_IMPORTS} | {"lshsim"}
    assert shown - listed == set()


def test_the_package_never_sets_the_test_suites_compile_caches():
    """The persistent JAX and Numba caches are the test suite's (tests/conftest.py): no module
    of the package names their variables or JAX's cache option, so a user's run, a benchmark
    or a compile timing starts from a cold cache unless the user set one."""
    names = re.compile(r"JAX_COMPILATION_CACHE_DIR|jax_compilation_cache_dir|NUMBA_CACHE_DIR")
    setters = [str(p.relative_to(ROOT)) for p in _sources("lshsim") if names.search(p.read_text())]
    assert setters == []
