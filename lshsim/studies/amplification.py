"""The best family at equal query cost, over (near cosine, query budget): the LSH view.

Families are compared as Andoni et al. (2015) compare them: each at its best ``(n, k, L)``
under one budget of inner products per query (hashing plus far candidates; the cost model of
:mod:`lshsim.theory.amplification`), not at equal bucket count. Exact theory, no sampling, so
the seed is unused. Claim T1.h1 (:mod:`lshsim.theorems.lsh_exponent`) states the map on a grid.
"""

from __future__ import annotations

from dataclasses import dataclass

from lshsim import theory
from lshsim.hashing import CrossPolytope, SimHash, Voronoi
from lshsim.plots.amplification import plot_amplification_map
from lshsim.studies.base import Study


def compared(ns: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """The families compared, in order, and the bucket counts each may use.

    SimHash as k-bit codes of one-bit hashes (``n = 2``); Voronoi and the cross-polytope at
    every ``n`` of ``ns``.
    """
    return {SimHash.name: (2,), Voronoi.name: ns, CrossPolytope.name: ns}


@dataclass(frozen=True)
class AmplificationConfig:
    """Sizes of ``amplification``: near cosines, ``log2`` budgets and buckets, data set size."""

    amp_cosines: tuple[float, ...]
    amp_log2_budgets: tuple[float, ...]
    amp_log2_buckets: tuple[int, ...]
    amp_points: int
    amp_max_concat: int
    amp_curve_cosine: float


def amplification(cfg: AmplificationConfig, seed: int) -> dict:
    """The winner map, each family's best ``ln(miss)`` and ``(n, k, L)`` per grid point.

    Args:
        cfg: the grid (far points at cosine 0).
        seed: unused (exact theory); kept for the :class:`Study` signature.

    Returns:
        :func:`lshsim.theory.best_family_grid`'s data with each scheme cut to ``[n, k, L]``,
        plus ``curve_cosine`` (the right panel's cosine).
    """
    del seed
    ns = tuple(2**k for k in cfg.amp_log2_buckets)
    grid = theory.best_family_grid(
        cfg.amp_cosines,
        [2.0**b for b in cfg.amp_log2_budgets],
        buckets=compared(ns),
        points=cfg.amp_points,
        far=0.0,
        max_concat=cfg.amp_max_concat,
    )
    grid["schemes"] = {
        f: [
            [None if s is None else [s["n"], s["concat"], s["tables"]] for s in row] for row in rows
        ]
        for f, rows in grid["schemes"].items()
    }
    return {**grid, "curve_cosine": cfg.amp_curve_cosine}


STUDIES = (
    Study(
        "amplification",
        amplification,
        plot_amplification_map,
        "The best family at equal query cost (Andoni et al. 2015's comparison): for each near "
        "cosine a and budget C of inner products per query (hashing: log2 n per SimHash bit "
        "group, n per Voronoi hash, n/2 per Gaussian-projection cross-polytope hash; plus one per "
        "far candidate among N = 2^20 points at cosine 0), every family at its best (n, k, L); "
        "left: which finds the near pair most often (hatched: runner-up within 5% in ln miss); "
        "right: each family's best -log10 miss probability against C at a = 0.8. Exact theory, "
        "no sampling.",
        {
            "default": AmplificationConfig(
                amp_cosines=tuple(round(0.2 + 0.05 * i, 2) for i in range(16)),
                amp_log2_budgets=tuple(4 + 0.5 * i for i in range(29)),
                amp_log2_buckets=tuple(range(3, 13)),
                amp_points=2**20,
                amp_max_concat=64,
                amp_curve_cosine=0.8,
            ),
            "quick": AmplificationConfig(
                amp_cosines=(0.3, 0.6, 0.8),
                amp_log2_budgets=(6.0, 8.0, 10.0, 12.0, 14.0, 16.0),
                amp_log2_buckets=tuple(range(3, 9)),
                amp_points=2**20,
                amp_max_concat=64,
                amp_curve_cosine=0.8,
            ),
        },
        kinds={"": "exact"},  # exact theory and the choices made from it; no sampling
    ),
)
