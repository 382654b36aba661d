"""Run one cell of a sweep through the library, as the CLI command of the same name would.

``simulate`` cells call :func:`lshsim.estimate.estimate_collision` and add the exact value
where the family object has one (its law at a cosine, e.g. the Gaussian-projection
cross-polytope's; an exact law on the sentence model, e.g. min-hash, Token-ID, n-grams).
``theory`` cells call :func:`lshsim.theory.log_probability` (at a cosine) or
:func:`lshsim.theory.collision_probability` (at an overlap): an exact value goes to
``exact``; the sentence-model average of a cosine family, itself a Monte-Carlo average over
sampled cosines, goes to ``estimate`` with a 95% interval of ``+- 1.96`` standard errors.

Options are named as the CLI spells them; the library's keyword differs for two
(:func:`library_names`). A cell's row: ``command``, ``cell`` (its key), ``seed``, its options,
then :data:`RESULT_COLUMNS` and :data:`VERSION_COLUMNS` (of the process that ran it).
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import math
import platform
import time
from typing import Any

from lshsim import __version__, theory
from lshsim._validate import check_float, check_int
from lshsim.estimate import Z95, check_estimate, estimate_collision
from lshsim.hashing import COSINE_FAMILIES, FAMILIES, NoLaw, get_family
from lshsim.sentences import check_sentence_model
from lshsim.sweep.cell import Cell


def library_names() -> dict[str, str]:
    """CLI option (its ``dest``) -> library keyword, where they differ.

    ``buckets`` -> ``n``, and each family parameter whose option is not its keyword (e.g.
    ``width`` -> ``w``), read from the registry.
    """
    out = {"buckets": "n"}
    for cls in FAMILIES.values():
        for p in cls.parameters:
            if p.dest != p.name:
                out[p.dest] = p.name
    return out


#: Result columns of a row and their Arrow types.
RESULT_COLUMNS = {
    "estimate": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
    "exact": "float64",
    "successes": "int64",
    "trials": "int64",
    "pairs": "int64",
    "effective_trials": "float64",
    "seconds": "float64",
}
#: Distribution -> column of the version of the process that ran the cell.
VERSION_COLUMNS = {
    "lshsim": "lshsim_version",
    "numpy": "numpy_version",
    "numba": "numba_version",
    "scipy": "scipy_version",
    "python": "python_version",
}


@functools.cache
def versions() -> dict[str, str]:
    """The :data:`VERSION_COLUMNS` of this process."""
    out = {"lshsim_version": __version__, "python_version": platform.python_version()}
    for dist in ("numpy", "numba", "scipy"):
        out[VERSION_COLUMNS[dist]] = importlib.metadata.version(dist)
    return out


def _kwargs(cell: Cell) -> tuple[str, int, dict]:
    """``(family, n, keywords)``: the cell's options as the library names them."""
    names = library_names()
    kw = {names.get(k, k): v for k, v in cell.options.items()}
    return kw.pop("family"), kw.pop("n"), kw


def _split(kw: dict, fn) -> tuple[dict, dict]:
    """Split keywords into ``fn``'s own and the family's parameters (the rest)."""
    own = inspect.signature(fn).parameters
    return {k: v for k, v in kw.items() if k in own}, {k: v for k, v in kw.items() if k not in own}


def _check_family(family: str, n: int, params: dict) -> dict:
    """The family's normalised parameters, naming options as the CLI does when one is unknown."""
    try:
        return get_family(family).check_params(n, **params)
    except ValueError as exc:
        if not str(exc).startswith("unknown parameter"):
            raise
        cli = {v: k for k, v in library_names().items()}
        names = ", ".join(cli.get(k, k) for k in params)
        raise ValueError(f"option(s) {names} do not apply to family '{family}'") from None


def check_cell(cell: Cell) -> None:
    """Validate a cell with the library's own checks, without running it.

    Args:
        cell: the cell.

    Raises:
        ValueError: one line naming the bad option and its allowed range.
    """
    family, n, kw = _kwargs(cell)
    if cell.command == "simulate":
        own, params = _split(kw, estimate_collision)
        _check_family(family, n, params)
        check_estimate(family, n, seed=cell.seed, **own, **params)
        return
    cosine = kw.pop("cosine", None)
    own, params = _split(kw, theory.collision_probability)
    _check_family(family, n, params)
    if cosine is not None:
        if family not in COSINE_FAMILIES:
            raise ValueError(f"cosine is not defined for family '{family}'; use overlap (f)")
        theory.cosine_family(family, n, params)  # the family's law at a cosine, or NoLaw
        check_float("cosine", cosine, -1.0, 1.0)
        return
    get_family(family).check_law("overlap_law", n, **params)
    defaults = {
        k: p.default for k, p in inspect.signature(theory.collision_probability).parameters.items()
    }
    own = {**defaults, **own}
    check_float("overlap (f)", own["overlap"], 0.0, 1.0)
    check_int("cosines", own["cosines"], 2, 2**24)
    check_sentence_model(own["overlap"], own["length"], own["vocab"], own["dim"])


def run_cell(cell: Cell, threads: int | None = None) -> dict[str, Any]:
    """Run one cell; return its row (its coordinates, results and versions).

    Args:
        cell: the cell.
        threads: threads of a Monte-Carlo estimate (None: the library's default); the numbers
            do not depend on it.

    Returns:
        ``{"command", "cell", "seed", **options, **results, **versions}``; results the
        cell has no value for are None.
    """
    start = time.perf_counter()
    if cell.command == "simulate":
        results = _simulate(cell, threads)
    else:
        results = _theory(cell)
    results["seconds"] = time.perf_counter() - start
    row = {"command": cell.command, "cell": cell.key, "seed": cell.seed, **cell.options}
    return {**row, **dict.fromkeys(RESULT_COLUMNS), **results, **versions()}


def run_cells(cells: list[Cell], threads: int | None = None) -> list[dict[str, Any]]:
    """Run several cells in order (one task of a Dask sweep); return their rows."""
    return [run_cell(c, threads) for c in cells]


def _simulate(cell: Cell, threads: int | None) -> dict:
    """A ``simulate`` cell: the estimate with its Wilson interval, and the exact value."""
    family, n, kw = _kwargs(cell)
    est = estimate_collision(family, n, seed=cell.seed, threads=threads, **kw)
    exact = None
    if est.cosine is not None:
        if _has_law(family, est.n, est.params, "log_probability"):
            exact = theory.probability(family, est.n, est.cosine, **est.params)
    elif _is_exact_on_sentences(family, est.n, est.params):
        exact = theory.collision_probability(
            family,
            est.n,
            overlap=est.overlap,
            dim=max(2, est.dim),  # the token families never read d
            length=est.length,
            vocab=est.vocab,
            **est.params,
        ).probability
    return {
        "estimate": est.estimate,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "exact": exact,
        "successes": est.successes,
        "trials": est.samples,
        "pairs": est.pairs,
        "effective_trials": est.effective_trials,
    }


def _has_law(family: str, n: int, params: dict, law: str) -> bool:
    """Whether the family has the exact law ``law`` for these parameters (no NoLaw)."""
    try:
        if law == "log_probability":
            theory.cosine_family(family, n, params)
        else:
            get_family(family).check_law(law, n, **params)
    except NoLaw:
        return False
    return True


def _is_exact_on_sentences(family: str, n: int, params: dict) -> bool:
    """Whether the family's sentence-model law is exact (not an average over cosines)."""
    cls = get_family(family)
    return _has_law(family, n, params, "overlap_law") and cls.overlap_law_is_exact


def _theory(cell: Cell) -> dict:
    """A ``theory`` cell: the exact value, or the sentence-model average with its interval."""
    family, n, kw = _kwargs(cell)
    if "cosine" in kw:
        cosine = kw.pop("cosine")
        return {"exact": math.exp(theory.log_probability(family, n, cosine, **kw))}
    res = theory.collision_probability(family, n, seed=cell.seed, **kw)
    if res.cosines == 0:  # an exact sentence-model law (min-hash, Token-ID, n-grams)
        return {"exact": res.probability}
    half = Z95 * res.std_error
    return {
        "estimate": res.probability,
        "ci_low": max(0.0, res.probability - half),
        "ci_high": min(1.0, res.probability + half),
    }
