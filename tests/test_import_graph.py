"""No import circles in ``lshsim`` (issue 29), counted on the source with ``ast``.

Every ``import`` / ``from ... import`` statement of a module counts, wherever it stands (inside
functions too: a deferred import is still a dependency). Importing ``a.b.c`` also runs
``a/__init__`` and ``a/b/__init__``, so it adds an edge to each of those packages; ``from pkg
import name`` adds an edge to ``pkg.name`` when that is a module, else to ``pkg`` (and to
``pkg``'s own packages). The packages that contain a module are already being imported when it
runs, so passing through them is no edge; reading a name from one of them (``from pkg import
name`` in ``pkg/x.py``, ``name`` defined in ``pkg/__init__``) is. The graph must have no
strongly connected component of more than one module.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "lshsim"


def _modules() -> dict[str, Path]:
    """Dotted name -> file, for every module and package ``__init__`` of ``lshsim``."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _package_of(name: str, path: Path) -> str:
    """The package a module's relative imports start from."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The ``lshsim`` modules that ``name`` imports, with the packages that run on the way."""
    found: set[str] = set()
    own = set(_prefixes(name))  # the module itself and the packages holding it: already running
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(name, path).split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [
                f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                for a in node.names
            ]
        else:
            continue
        for target in targets:
            found.add(target)  # what the statement reads, even from its own package
            found.update(p for p in _prefixes(target)[:-1] if p not in own)  # run on the way
    return {t for t in found if t in modules and t != name}


def import_graph() -> dict[str, set[str]]:
    """Module -> the ``lshsim`` modules its import statements run."""
    modules = _modules()
    return {name: _targets(name, path, modules) for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                out.append(sorted(component))
    return out


def shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest circle through the component's first module, as a closed path."""
    inside = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node] & inside):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return component


def _describe(graph: dict[str, set[str]], components: list[list[str]]) -> str:
    lines = []
    for component in components:
        lines.append(f"circle of {len(component)} modules: {', '.join(component)}")
        lines.append("  e.g. " + " -> ".join(shortest_cycle(graph, component)))
    return "\n".join(lines)


def test_tarjan_finds_circles_and_only_them():
    """The helper itself: a 3-circle, a 2-circle and an acyclic tail."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    found = sorted(c for c in strongly_connected(graph) if len(c) > 1)
    assert found == [["a", "b", "c"], ["d", "e"]]
    assert shortest_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_graph_counts_deferred_parent_and_from_imports():
    """Imports inside functions, relative ones and ``from pkg import module`` are edges."""
    graph = import_graph()
    # lshsim/t5/budget.py imports lshsim.t5.data.spans inside a function
    assert "lshsim.t5.data.spans" in graph["lshsim.t5.budget"]
    assert "lshsim.t5.data" in graph["lshsim.t5.budget"]  # the package runs on the way
    assert "lshsim.t5" not in graph["lshsim.t5.budget"]  # its own package: left out
    assert "lshsim.hashing.base" in graph["lshsim.hashing"]


def test_no_import_circles():
    """No strongly connected component of the import graph has more than one module."""
    graph = import_graph()
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert not circles, "import circles in lshsim:\n" + _describe(graph, circles)
