"""Sphinx configuration of the lshsim documentation (docs/).

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (the README's test command
runs it: tests/docs/test_build.py). Pages are MyST Markdown; the tutorials are notebooks rendered
from their stored outputs (``docs/execute.py`` runs them; the build never executes code); the
proofs in ``proofs/`` are rendered in place of the stubs under ``docs/proofs/``; the API pages come
from the docstrings.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

import lshsim  # noqa: E402

project = "lshsim"
author = "the lshsim authors"
copyright = "2026, the lshsim authors"
release = lshsim.__version__

extensions = [
    "myst_nb",  # MyST Markdown pages and notebooks (it loads myst_parser itself)
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

exclude_patterns = ["_build", "tutorials/src", "examples.toml", "**/.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# the notebooks are rendered from their stored outputs: the build runs no code
nb_execution_mode = "off"

html_theme = "furo"
# No table-of-contents entry per documented object: furo copies the whole site's toctree into
# every page's navigation, and with the API pages' thousands of object entries that copy was
# 13.6 of the build's 47.6 s (cProfile); the build takes 32.5 s without them. The API pages
# still list and link every object; the sidebar and "On this page" stop at section titles.
toc_object_entries = False
html_title = "lshsim"
html_static_path: list[str] = []

autodoc_default_options = {"show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # "Attributes:" as fields, not a second description of each field
napoleon_custom_sections = [("Params", "params_style")]  # the families' parameter sections

# The proofs live in proofs/ (where GitHub shows them); docs/proofs/NAME.md is a stub whose text
# is replaced by proofs/NAME.md as Sphinx reads it, with the proof's links to the repository
# (../lshsim/..., ../tests/...) made relative to docs/proofs/.
_PROOF_LINK = re.compile(r"\[([^\]]*)\]\(\.\./([^)]*)\)")


def _proof_link(match: re.Match) -> str:
    """A proof's link to the repository, seen from docs/proofs/ (a folder's link: its text).

    Args:
        match: ``[text](../path)``.

    Returns:
        ``[text](../../path)``, or ``text`` alone where ``path`` is a folder (Sphinx links
        files, not folders).
    """
    text, path = match.group(1), match.group(2)
    if (ROOT / path.split("#")[0]).is_dir():
        return text
    return f"[{text}](../../{path})"


# Places the toctrees keep for pages other work adds (guide/intervals*, cli/*): a glob line
# that matches no page yet is dropped as the page is read (Sphinx warns on an empty glob).
_OPTIONAL_GLOBS = {"index": ["cli/*"], "guide/index": ["intervals*"]}


def _drop_empty_globs(app, docname: str, source: list[str]) -> None:
    """Drop the optional toctree globs that match no page (``source-read`` hook).

    Args:
        app: the Sphinx application.
        docname: the document being read.
        source: a one-element list holding the document's text, changed in place.
    """
    folder = (DOCS / docname).parent
    for pattern in _OPTIONAL_GLOBS.get(docname, []):
        if not any(folder.glob(pattern + ".md")):
            source[0] = re.sub(rf"(?m)^{re.escape(pattern)}\n", "", source[0])


# The order of the proofs' toctree: these first, any other proof after them by name.
_PROOF_ORDER = ["theorem1", "lsh_exponent", "ngram", "lookups_beyond", "theorem2"]


def proof_names() -> list[str]:
    """The proofs of ``proofs/`` (file stems) in the order the Proofs page lists them.

    Returns:
        :data:`_PROOF_ORDER`'s names that exist, then the other proofs sorted.
    """
    names = sorted(p.stem for p in (ROOT / "proofs").glob("*.md"))
    return [n for n in _PROOF_ORDER if n in names] + [n for n in names if n not in _PROOF_ORDER]


def _write_proof_stubs(app) -> None:
    """Write a stub docs/proofs/NAME.md per proof (``builder-inited`` hook; git ignores them).

    Args:
        app: the Sphinx application.
    """
    names = proof_names()
    for old in (DOCS / "proofs").glob("*.md"):
        if old.stem != "index" and old.stem not in names:
            old.unlink()
    for name in names:
        stub = DOCS / "proofs" / f"{name}.md"
        text = f"% rendered from proofs/{name}.md as Sphinx reads it (docs/conf.py)\n# {name}\n"
        if not stub.exists() or stub.read_text(encoding="utf-8") != text:
            stub.write_text(text, encoding="utf-8")


def _list_figures(app, docname: str, source: list[str]) -> None:
    """Put every PNG of figures/ on the Figures page (``source-read`` hook).

    Args:
        app: the Sphinx application.
        docname: the document being read.
        source: a one-element list holding the document's text, changed in place.
    """
    if docname != "guide/figures":
        return
    blocks = []
    for png in sorted((ROOT / "figures").rglob("*.png")):
        rel = png.relative_to(ROOT).as_posix()
        blocks.append(f"## `{rel}`\n\n![{png.stem}](../../{rel})\n")
    source[0] = source[0].replace("FIGURE-LIST", "\n".join(blocks))


def _render_proof(app, docname: str, source: list[str]) -> None:
    """Replace a proof stub's text by the proof it names (``source-read`` hook).

    Args:
        app: the Sphinx application.
        docname: the document being read.
        source: a one-element list holding the document's text, replaced in place.
    """
    if docname == "proofs/index":
        source[0] = source[0].replace("PROOF-PAGES", "\n".join(proof_names()))
        return
    if not docname.startswith("proofs/"):
        return
    proof = ROOT / "proofs" / (docname.split("/", 1)[1] + ".md")
    source[0] = _PROOF_LINK.sub(_proof_link, proof.read_text(encoding="utf-8"))


# The API reference: one page per subpackage (and one for the top-level modules), each holding
# an automodule section per public module (names without a leading underscore), written at the
# start of every build into api/_generated/ (ignored by git: nothing is cached between builds).
# One page per subpackage keeps the build within its budget (a page per module, about 200,
# tripled the build's time: the theme renders the whole navigation on every page).
API_OUT = DOCS / "api" / "_generated"


def _public_modules(package: str) -> list[str]:
    """Dotted names of a package and its public modules, depth first.

    Args:
        package: a dotted package name, e.g. ``"lshsim.hashing"``.

    Returns:
        The package itself, then every module below it whose path has no part starting with an
        underscore (``__main__`` and private helpers are left out), sorted.
    """
    import importlib
    import pkgutil

    mod = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(mod.__path__, package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def _own_names(module: str) -> list[str]:
    """The public names a module defines itself (not those it re-exports).

    A name re-exported by a package (``lshsim.hashing.FAMILIES``) is documented once, in the
    module that defines it, so every cross-reference has one target.

    Args:
        module: a dotted module name.

    Returns:
        The names of ``__all__`` (or, without it, the names not starting with ``_``) that are
        functions or classes of this module, or assigned at its top level, in source order.
    """
    import ast
    import importlib
    import inspect

    mod = importlib.import_module(module)
    try:
        tree = ast.parse(inspect.getsource(mod))
    except (OSError, TypeError):
        return []
    assigned: list[str] = []
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            assigned.append(node.name)
        assigned += [t.id for t in targets if isinstance(t, ast.Name)]
    public = getattr(mod, "__all__", None)
    names = [n for n in assigned if (n in public if public is not None else not n.startswith("_"))]
    return list(dict.fromkeys(names))


def api_pages() -> dict[str, list[str]]:
    """The API pages: page name -> the modules documented on it.

    Returns:
        ``{"lshsim": [top-level public modules], "lshsim.hashing": [...], ...}``.
    """
    import pkgutil

    pages: dict[str, list[str]] = {"lshsim": ["lshsim"]}
    for info in pkgutil.iter_modules(lshsim.__path__, "lshsim."):
        if info.name.split(".")[-1].startswith("_"):
            continue
        if info.ispkg:
            pages[info.name] = _public_modules(info.name)
        else:
            pages["lshsim"].append(info.name)
    return pages


def _write_api(app) -> None:
    """Write the API pages (``builder-inited`` hook).

    Args:
        app: the Sphinx application.
    """
    API_OUT.mkdir(parents=True, exist_ok=True)
    pages = api_pages()
    for old in API_OUT.glob("*.rst"):
        if old.stem not in pages:
            old.unlink()
    for page, modules in pages.items():
        lines = [page, "=" * len(page), ""]
        for name in modules:
            if name != page:
                lines += [name, "-" * len(name), ""]
            lines.append(f".. automodule:: {name}")
            own = _own_names(name)
            if own:
                lines.append("   :members: " + ", ".join(own))
            lines.append("")
        text = "\n".join(lines)
        path = API_OUT / f"{page}.rst"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def _render_numbers(app, docname: str, source: list[str]) -> None:
    """Render the page's result numbers and tables from figures/ (``source-read`` hook).

    The comments that mark them (``docs/render_numbers.py``) are dropped; the site shows the
    committed results whatever the page's text says. Connected last (priority 900), after the
    proofs are read in.

    Args:
        app: the Sphinx application.
        docname: the document being read.
        source: a one-element list holding the document's text, changed in place.
    """
    from docs.number_sources import Sources
    from docs.render_numbers import render

    source[0] = render(source[0], Sources(ROOT / "figures"), keep_markers=False)


def setup(app) -> dict[str, bool]:
    """Register the proof renderer, the API page writer and the result numbers' renderer.

    Args:
        app: the Sphinx application.

    Returns:
        Sphinx's extension metadata.
    """
    app.connect("builder-inited", _write_api)
    app.connect("builder-inited", _write_proof_stubs)
    app.connect("source-read", _render_proof)
    app.connect("source-read", _drop_empty_globs)
    app.connect("source-read", _list_figures)
    app.connect("source-read", _render_numbers, priority=900)
    return {"parallel_read_safe": True}
