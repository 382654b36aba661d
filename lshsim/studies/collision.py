"""Collision studies: probability against ``n``, ``rho`` against ``f``, the ordering map.

``ordering_map`` shows which lookup collides most over ``(f, n)``.

The vector families are run in the idealised model of the paper's proof, at cosine ``a = f``
(the sentence model's cosine concentrates there; ``sentence_cosine`` shows how closely);
min-hash and Token-ID run on sentence pairs sharing ``round(f l)`` tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lshsim import theory
from lshsim.hashing import COSINE_FAMILIES, CrossPolytope, PStable, SimHash, Voronoi, get_family
from lshsim.plots.collision import plot_collision_vs_n, plot_rho_vs_f
from lshsim.plots.ordering import plot_ordering_map
from lshsim.studies.base import (
    LENGTH,
    TOKEN_FAMILIES,
    Study,
    append_estimate,
    collision_families,
)
from lshsim.sweep import run_grid

VOCAB = 32128
#: the families whose asymptotic rate ``n^-rho`` is drawn (dashed) in ``collision_vs_n``: the
#: spherical ones (the hyperplane families' exact curves are their rates already)
RATE_FAMILIES = (Voronoi.name, CrossPolytope.name)
#: the paper's form ``c g(f)`` fitted to each family's ``rho(f)`` in ``rho_vs_f``
FIT_FORMS = {
    SimHash.name: "sqrt(1-f)",
    PStable.name: "sqrt(1-f)",
    Voronoi.name: "1-f",
    CrossPolytope.name: "1-f",
}


def exact_value(family: str, n: int, f: float) -> float:
    """Exact ``P``: at cosine ``a = f`` (cosine families), else on sentence pairs of LENGTH."""
    if family in COSINE_FAMILIES:
        return theory.probability(family, n, f)
    law = theory.collision_probability(family, n, overlap=f, length=LENGTH, vocab=VOCAB)
    return law.probability


@dataclass(frozen=True)
class CollisionConfig:
    """Sizes of ``collision_vs_n``: overlaps, Monte Carlo ``log2 n`` and samples, exact grid."""

    overlaps: tuple[float, ...]
    mc_log2n: tuple[int, ...]
    mc_samples: int
    exact_log2n: tuple[int, ...]


def _mc_grids(cfg: CollisionConfig) -> list[dict]:
    """The Monte-Carlo cells of ``collision_vs_n`` as sweep grids (one per family).

    Vector families at cosine ``a = f`` in reduced mode; min-hash and Token-ID on sentence
    pairs of :data:`LENGTH` tokens (Token-ID counts every position: ``samples / LENGTH`` pairs).
    """
    grids = []
    for family in collision_families():
        per_token = get_family(family).input_kind == "tokens"  # one trial per position
        samples = cfg.mc_samples // LENGTH if per_token else cfg.mc_samples
        at_cosine = family in COSINE_FAMILIES
        what = {"cosine": list(cfg.overlaps)} if at_cosine else {"overlap": list(cfg.overlaps)}
        grid = {
            "command": "simulate",
            "family": [family],
            "buckets": [2**k for k in cfg.mc_log2n],
            **what,
            "samples": [max(samples, 50)],
            "mode": ["reduced" if at_cosine else "full"],
        }
        if not at_cosine:
            grid["length"] = [LENGTH]
        grids.append(grid)
    return grids


def collision_vs_n(cfg: CollisionConfig, seed: int) -> dict:
    """Collision probability against ``n``: exact curves, Monte Carlo with CIs, rate lines.

    The Monte-Carlo cells run through the sweep engine (:func:`lshsim.sweep.run_grid`) with
    ``seed`` as the sweep seed: ``lshsim sweep`` on the same grids gives the same numbers.
    """
    rows = run_grid(seed, _mc_grids(cfg))
    mc_rows = {(r["family"], r.get("cosine", r.get("overlap")), r["buckets"]): r for r in rows}
    panels = {}
    for family in collision_families():
        exact, mc, rate = {}, {}, {}
        for f in cfg.overlaps:
            key = str(f)
            ns = [2**k for k in cfg.exact_log2n]
            exact[key] = {"n": ns, "p": [exact_value(family, n, f) for n in ns]}
            if family in RATE_FAMILIES:
                r = theory.limit_rho(family, f)
                rate[key] = {"n": ns, "p": [n**-r for n in ns]}
            cells = {"n": [2**k for k in cfg.mc_log2n]}
            for n in cells["n"]:
                append_estimate(cells, mc_rows[family, f, n])
            mc[key] = cells
        panels[family] = {"exact": exact, "mc": mc, **({"rate": rate} if rate else {})}
    return {"overlaps": list(cfg.overlaps), "panels": panels}


@dataclass(frozen=True)
class RhoConfig:
    """Sizes of ``rho_vs_f``: the number of buckets and of overlaps."""

    rho_n: int
    rho_f: int


def rho_vs_f(cfg: RhoConfig, seed: int) -> dict:
    """``rho(f)`` at one ``n`` for every family, with the paper's rate forms fitted."""
    n = cfg.rho_n
    step = 39 // (cfg.rho_f - 1)
    fs = [k / LENGTH for k in range(1, LENGTH, step)][: cfg.rho_f]
    rho = {}
    for family in COSINE_FAMILIES:
        rho[family] = [theory.rho(family, n, f) for f in fs]
    for family in TOKEN_FAMILIES:
        rho[family] = [-math.log(exact_value(family, n, f)) / math.log(n) for f in fs]
    fits = {}
    for family, form in FIT_FORMS.items():
        g = np.sqrt(1 - np.array(fs)) if form == "sqrt(1-f)" else 1 - np.array(fs)
        y = np.array(rho[family])
        fits[family] = {"form": form, "c": float(g @ y / (g @ g))}
    return {"n": n, "f": fs, "rho": rho, "fits": fits}


@dataclass(frozen=True)
class MapConfig:
    """Sizes of ``ordering_map``: overlaps and ``log2 n`` of the grid."""

    map_f: int
    map_log2n: tuple[int, ...]


def ordering_map(cfg: MapConfig, seed: int) -> dict:
    """Which of Token-ID, Softmax (Voronoi), SimHash collides most, over ``(f, n)``."""
    from lshsim.theorems.claims import TIE_CONSTANT, crossover

    fs = [float(x) for x in np.linspace(0.02, 0.98, cfg.map_f)]
    winner = []
    for k in cfg.map_log2n:
        n = 2**k
        row = []
        for f in fs:
            p = [f, theory.probability(Voronoi.name, n, f), theory.probability(SimHash.name, n, f)]
            row.append(int(np.argmax(p)))
        winner.append(row)
    cross = [crossover(f) for f in fs]
    return {
        "f": fs,
        "log2n": list(cfg.map_log2n),
        "labels": ["Token-ID", "Softmax", "SimHash"],
        "winner": winner,
        "crossover": {"f": fs, "n": cross},
        "claimed": {
            "f": fs,
            "n_lo": [1 / f for f in fs],
            "n_hi": [1 + TIE_CONSTANT / f for f in fs],
        },
    }


STUDIES = (
    Study(
        "collision_vs_n",
        collision_vs_n,
        plot_collision_vs_n,
        "Collision probability against buckets n, one panel per family: exact "
        "(lines), Monte Carlo with 95% CIs (points), asymptotic rate (dashed).",
        {
            "default": CollisionConfig(
                overlaps=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
                mc_log2n=(2, 4, 6, 8, 10, 12),
                mc_samples=10000,
                exact_log2n=tuple(range(1, 21)),
            ),
            "quick": CollisionConfig(
                overlaps=(0.1, 0.5, 0.9),
                mc_log2n=(2, 6, 10),
                mc_samples=1000,
                exact_log2n=(1, 4, 8, 12, 16, 20),
            ),
        },
        kinds={"": "exact", "panels/*/mc": "monte_carlo"},
    ),
    Study(
        "rho_vs_f",
        rho_vs_f,
        plot_rho_vs_f,
        "The exponent rho = -log P / log n against overlap f, with the paper's forms "
        "c sqrt(1-f) (hyperplane) and c (1-f) (spherical) fitted; Voronoi and cross-polytope "
        "coincide within the line width at this n.",
        {"default": RhoConfig(rho_n=2**16, rho_f=39), "quick": RhoConfig(rho_n=2**16, rho_f=10)},
        kinds={"": "exact"},
    ),
    Study(
        "ordering_map",
        ordering_map,
        plot_ordering_map,
        "Which lookup collides most over (f, n), with the crossover n*(f) where "
        "Token-ID overtakes Softmax and the claimed band 1/f <= n*(f) < 1 + 1.71/f.",
        {
            "default": MapConfig(map_f=30, map_log2n=tuple(range(1, 21))),
            "quick": MapConfig(map_f=8, map_log2n=(1, 4, 8, 12, 16, 20)),
        },
        kinds={"": "exact"},
    ),
)
