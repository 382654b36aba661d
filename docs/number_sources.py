"""The result files of figures/ as the pages read them: values, kinds, machines, derived numbers.

:class:`Sources` reads a figures folder (the committed one, or a scratch copy in a test) and
answers three questions for ``docs/render_numbers.py``: the value at a source
(``FILE#/POINTER`` or a derived ``=NAME``); the kind of everything a source read
(:mod:`lshsim.studies.kinds`, as ``lshsim compare`` classes it, plus ``timing`` for measured
times); and the machine a file's numbers came from (:func:`machine`). Derived numbers
(:data:`DERIVED`) and whole tables (:data:`TABLES`) are small functions of a
:class:`Sources` defined in the page groups' modules ``docs/numbers_*.py``; every number they
read is recorded, so their kind is the worst of what they read.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lshsim.studies.kinds import kind_of

#: How much each kind promises, least first (a derived number has its weakest input's kind).
KIND_ORDER = ("timing", "platform", "monte_carlo", "exact")
#: The parts of a memory benchmark's row that are not timings: the setting, the FLOPs (exact,
#: from the config) and the loss after its steps (XLA-trained).
_MEMORY_BENCH = [
    *[(k, "exact") for k in ("config", "variant", "changes", "batch", "input_length")],
    *[(k, "exact") for k in ("target_length", "train_flops_per_token", "flops_ratio")],
    ("loss", "platform"),
]
#: Kinds of the files that are not ``lshsim reproduce``'s studies: ``{file: {pattern: kind}}``
#: (patterns as in :mod:`lshsim.studies.kinds`; the most specific matching one wins).
FILE_KINDS: dict[str, dict[str, str]] = {
    "bench_peers.json": {"": "timing", "machine": "exact", "settings": "exact"},
    "bench_scan.json": {"": "timing", "machine": "exact", "settings": "exact"},
    "bench_t5.json": {"": "timing", "machine": "exact", "settings": "exact"},
    "bench_memory.json": {"": "timing", **{f"results/*/{k}": v for k, v in _MEMORY_BENCH}},
    "bench_memory_small.json": {"": "timing", **{f"results/*/{k}": v for k, v in _MEMORY_BENCH}},
    "ci_runs.json": {"": "timing", "runs/*/commit": "exact", "runs/*/tests": "exact"},
    "gpu.json": {"": "timing", "environment": "exact"},
    "plan.json": {"": "exact", "seconds": "timing", "rows/*/seconds": "timing"},
    "calibration.json": {"": "monte_carlo", "rows/*/seconds": "timing"},
    "memory_studies.json": {"": "platform", "runs/*/config": "exact"},
    "memory_long/memory_studies.json": {"": "platform", "runs/*/config": "exact"},
    "tune_datasketch.json": {"": "exact"},
    "rotation_gap.json": {
        "": "monte_carlo",
        **{k: "exact" for k in ("command", "machine", "settings")},
        **{f"{run}/*/{k}": "exact" for run in ("rows", "rerun") for k in ("d", "n", "cosine")},
        **{f"{run}/*/gaussian_projection": "exact" for run in ("rows", "rerun")},
        **{f"{run}/*/seconds": "timing" for run in ("rows", "rerun")},
    },
    "halves_dependence.json": {"": "monte_carlo", "command": "exact", "settings": "exact"},
    "claim_mutations.json": {"": "monte_carlo", "command": "exact"},
    "topk_grid_check.json": {"": "exact"},
    "window_design_effect.json": {"": "monte_carlo", "command": "exact"},
    "theorem1_library.json": {"": "exact", "command": "exact", "moments": "monte_carlo"},
    "engram_checks.json": {
        "": "monte_carlo",
        "command": "exact",
        "heads_law/points/*/law": "exact",
        "heads_law/points/*/all heads/law": "exact",
        "small_primes/law": "exact",
    },
    "cost_small.json": {"": "exact", "seconds": "timing"},
    "plan_layouts.json": {"": "exact", "plans/*/compile_seconds": "timing"},
}

#: Studies trained with torch (Hugging Face ``transformers``), not XLA.
TORCH_STUDIES = ("routing_hf.json",)


def machine(sources: Sources, file: str) -> str:
    """The caveat and machine of a file's platform-dependent or timed numbers.

    Args:
        sources: the result files.
        file: a file of figures/.

    Returns:
        E.g. ``platform-dependent; committed run on Intel(R) Xeon(R) Processor, jax 0.10.2``
        for the studies, ``measured on AMD EPYC, 2 cores`` for a benchmark.
    """
    doc = sources.doc(file)
    if file == "results.json" or sources.is_study(file):
        v = sources.doc("manifest.json")["versions"]
        if file in TORCH_STUDIES:  # the run records no torch version
            return f"platform-dependent; committed run on {v['cpu']} with torch"
        return f"platform-dependent; committed run on {v['cpu']}, jax {v['jax']}"
    if file == "gpu.json":
        env = doc["environment"]
        return f"measured on one {env['device_kind']}, jax {env['jax']}, {doc['date']}"
    if file == "ci_runs.json":
        run = doc["runs"][-1]
        cpu = run["cpu"] if run["cpu"] != "not recorded" else "a CPU not recorded"
        return f"measured on {cpu}, {run['cores']} cores"
    if isinstance(doc, dict) and isinstance(doc.get("machine"), dict):
        m = doc["machine"]
        where = f"{m['cpu']}, {m['cores']} cores" if "cpu" in m else f"{m['cores']} cores"
        return f"measured on {where}" + (f", {m['date']}" if "date" in m else "")
    return "platform-dependent; the machine was not recorded"


class Sources:
    """The result files of one figures folder, read once each.

    Args:
        folder: the folder (``figures/`` or a scratch copy).
    """

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._docs: dict[str, Any] = {}
        self._reads: list[tuple[str, tuple[str, ...]]] | None = None
        self._kind_of: dict[tuple[str, tuple[str, ...]], str] = {}
        self._compiled: dict[str, list[tuple[tuple[str, ...], str, str]]] = {}

    def doc(self, file: str) -> Any:
        """A file's parsed JSON.

        Raises:
            ValueError: a file that is not there or not JSON.
        """
        if file not in self._docs:
            path = self.folder / file
            if path.suffix != ".json" or not path.is_file():
                raise ValueError(f"figures/{file}: no such result file")
            self._docs[file] = json.loads(path.read_text(encoding="utf-8"))
        return self._docs[file]

    def is_study(self, file: str) -> bool:
        """Whether ``file`` is one of ``lshsim reproduce``'s studies (``NAME.json``)."""
        studies = self.doc("results.json")["studies"]
        return file.endswith(".json") and file[: -len(".json")] in studies

    @contextlib.contextmanager
    def reading(self) -> Iterator[list[tuple[str, tuple[str, ...]]]]:
        """Record every ``(file, path)`` read inside the block (to derive a kind from them)."""
        outer, self._reads = self._reads, []
        try:
            yield self._reads
        finally:
            reads, self._reads = self._reads, outer
            if outer is not None:
                outer += reads

    def get(self, file: str, pointer: str = "") -> Any:
        """The value at ``FILE#/POINTER`` (see ``docs/render_numbers.py``); ``*`` gives a list.

        A key holding ``/`` or ``~`` is written ``~1`` or ``~0`` (RFC 6901), a space ``%20``.
        """
        segments = [unquote(s).replace("~1", "/").replace("~0", "~") for s in pointer.split("/")]
        return self._walk(file, self.doc(file), (), segments[1:])

    def peek(self, file: str, pointer: str = "") -> Any:
        """:meth:`get` without recording the read: to find where a number is, not to show it.

        A table or derived number reads its labels and list positions this way, so that its
        kind and the numbers a test changes are those it shows.
        """
        outer, self._reads = self._reads, None
        try:
            return self.get(file, pointer)
        finally:
            self._reads = outer

    def _walk(self, file: str, node: Any, path: tuple[str, ...], rest: list[str]) -> Any:
        if not rest:
            if self._reads is not None:
                self._reads.append((file, path))
            return node
        seg, rest = rest[0], rest[1:]
        where = f"figures/{file}#/{'/'.join(path)}"
        if seg == "*":
            items = node.items() if isinstance(node, dict) else enumerate(node)
            return [self._walk(file, v, (*path, str(k)), rest) for k, v in items]
        if isinstance(node, list) and "=" in seg:
            key, want = seg.split("=", 1)
            hits = [
                i for i, v in enumerate(node) if isinstance(v, dict) and str(v.get(key)) == want
            ]
            if len(hits) != 1:
                raise ValueError(f"{where}: {len(hits)} elements have {key} = {want!r}, not one")
            return self._walk(file, node[hits[0]], (*path, str(hits[0])), rest)
        if isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
            return self._walk(file, node[int(seg)], (*path, seg), rest)
        if isinstance(node, dict) and seg in node:
            return self._walk(file, node[seg], (*path, seg), rest)
        raise ValueError(f"{where}: no {seg!r} here")

    def value(self, source: str) -> Any:
        """The value of a marker's source: ``FILE#/POINTER``, ``=NAME`` or ``=NAME:ARG``."""
        if source.startswith("="):
            name, _, arg = source[1:].partition(":")
            if name not in DERIVED:
                raise ValueError(f"{source!r}: no derived number {name!r}; see DERIVED")
            return DERIVED[name](self, arg) if arg else DERIVED[name](self)
        file, _, pointer = source.partition("#")
        return self.get(file, pointer)

    def kind(self, file: str, path: tuple[str, ...]) -> str:
        """The kind of the number at ``path`` of ``file``.

        Raises:
            ValueError: a file whose kinds are not known.
        """
        if file == "manifest.json":
            return "exact"
        if file == "results.json" or self.is_study(file):
            if file != "results.json":
                if not path or path[0] != "data":
                    return "exact"  # a study file's config and seed
                path = ("studies", file[: -len(".json")], *path[1:])
            file = "results.json"
        found = kind_of(path, self._rules(file))
        return "exact" if found is None else found[1]

    def _rules(self, file: str) -> list[tuple[tuple[str, ...], str, str]]:
        """A file's kinds rules, most specific first (results.json's own, or :data:`FILE_KINDS`)."""
        if file not in self._compiled:
            if file == "results.json":
                rules = {p: _name(k) for p, k in self.doc(file)["kinds"].items()}
            elif file in FILE_KINDS:
                rules = FILE_KINDS[file]
            else:
                raise ValueError(f"figures/{file}: its kinds are unknown; add it to FILE_KINDS")
            compiled = [(tuple(p.split("/")) if p else (), p, k) for p, k in rules.items()]
            compiled.sort(key=lambda r: (-len(r[0]), r[0].count("*"), r[1]))
            self._compiled[file] = compiled
        return self._compiled[file]

    def _kind_cached(self, file: str, path: tuple[str, ...]) -> str:
        """:meth:`kind`, remembered (a table reads thousands of numbers, often the same)."""
        if (file, path) not in self._kind_of:
            self._kind_of[file, path] = self.kind(file, path)
        return self._kind_of[file, path]

    def worst_kind(self, reads: list[tuple[str, tuple[str, ...]]]) -> str:
        """The least promising kind among what was read (``exact`` when nothing was)."""
        kinds = {self._kind_cached(file, path) for file, path in set(reads)} or {"exact"}
        return min(kinds, key=KIND_ORDER.index)

    def table(self, name: str) -> str:
        """A whole table's Markdown (:data:`TABLES`), ending with a newline."""
        if name not in TABLES:
            raise ValueError(f"no table {name!r}; see TABLES")
        return TABLES[name](self).rstrip("\n") + "\n"


def pointer(path: tuple[str, ...]) -> str:
    """The JSON pointer of a path of keys (``~`` and ``/`` escaped as RFC 6901 says).

    Args:
        path: dict keys and list indices.

    Returns:
        ``"/a/b~1c"`` for ``("a", "b/c")``; ``""`` for the whole document.
    """
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


def _name(rule: Any) -> str:
    """A kinds rule's kind name (a name, or ``{"kind": name, ...}``)."""
    return rule["kind"] if isinstance(rule, dict) else rule


def _collect(modules: list[Any]) -> tuple[dict, dict]:
    """The derived numbers and tables of the page groups' modules, each name defined once."""
    derived: dict[str, Callable[..., Any]] = {"machine": machine}
    tables: dict[str, Callable[[Sources], str]] = {}
    for module in modules:
        for mine, theirs in ((derived, module.DERIVED), (tables, module.TABLES)):
            twice = set(mine) & set(theirs)
            if twice:
                raise RuntimeError(f"{module.__name__} defines {sorted(twice)} again")
            mine.update(theirs)
    return derived, tables


# The page groups' derived numbers and tables (each module: DERIVED and TABLES dicts).
from docs import (  # noqa: E402
    numbers_guide,
    numbers_model,
    numbers_probe,
    numbers_proofs,
    numbers_readme,
    numbers_theorem2,
)

#: Numbers computed from several result numbers: name -> function of the sources (and an
#: optional argument, ``=NAME:ARG``). Each reads through :meth:`Sources.get`, so its kind is
#: derived from what it read.
#: Tables rendered whole: name -> function of the sources returning Markdown.
DERIVED, TABLES = _collect(
    [numbers_readme, numbers_model, numbers_probe, numbers_guide, numbers_proofs, numbers_theorem2]
)
