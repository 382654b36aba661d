"""Product keys, hashed n-grams and top-k routing: collision against ``n``, and top-k overlap.

``collision_beyond`` draws, at a few cosines ``a = f``, the exact collision probability of every
family against ``n`` (the vector families at cosine ``a``; product keys with both halves at
``a``, ``n = 4^j``; min-hash and Token-ID on sentence pairs sharing ``f l`` tokens, and the
hashed 2-gram family), the product keys' Monte Carlo (reduced mode: two
Voronoi draws) with 95% intervals, and one panel of top-k overlap: Voronoi's exact overlap for
a few ``k`` and the product keys' Monte-Carlo top-k overlap (PKM's rule, full mode).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lshsim import theory
from lshsim.estimate import estimate_collision
from lshsim.estimate_topk import estimate_topk_overlap
from lshsim.hashing import NGram, ProductKey
from lshsim.plots.lookups import plot_collision_beyond
from lshsim.studies.base import LENGTH, Study, append_estimate, collision_families, spawn_seeds
from lshsim.studies.collision import exact_value


@dataclass(frozen=True)
class BeyondConfig:
    """Sizes of ``collision_beyond``: cosines, exact and Monte-Carlo grids, the top-k panel."""

    beyond_cosines: tuple[float, ...]
    beyond_log2n: tuple[int, ...]
    beyond_mc_log2n: tuple[int, ...]
    beyond_mc_samples: int
    topk_ks: tuple[int, ...]
    topk_cosine: float
    topk_log2n: tuple[int, ...]
    topk_mc_log2n: tuple[int, ...]
    topk_mc_samples: int


def _ngram_curve(ns: list[int], f: float) -> list[float]:
    """The hashed 2-gram family's exact rate ``q + (1-q)/n`` at each table size ``n``."""
    return [theory.ngram_probability(2, n, f, LENGTH) for n in ns]


def _collision_panel(cfg: BeyondConfig, f: float, seeds: list[int]) -> dict:
    ns = [2**k for k in cfg.beyond_log2n]
    squares = [2**k for k in cfg.beyond_log2n if k % 2 == 0 and k >= 2]
    exact = {
        fam: {"n": ns, "p": [exact_value(fam, n, f) for n in ns]} for fam in collision_families()
    }
    exact[ProductKey.name] = {
        "n": squares,
        "p": [theory.productkey_probability(n, f) for n in squares],
    }
    exact[NGram.name] = {"n": ns, "p": _ngram_curve(ns, f)}
    mc: dict = {"n": [2**k for k in cfg.beyond_mc_log2n]}
    for n, seed in zip(mc["n"], seeds, strict=False):
        est = estimate_collision(
            ProductKey.name, n, cosine=f, samples=cfg.beyond_mc_samples, seed=seed, mode="reduced",
            threads=1,
        )  # fmt: skip
        append_estimate(mc, est)
    return {"exact": exact, "mc": mc}


def _topk_panel(cfg: BeyondConfig, seeds: list[int]) -> dict:
    a = cfg.topk_cosine
    ns = [2**k for k in cfg.topk_log2n]
    exact = {}
    for k in cfg.topk_ks:  # n >= k buckets
        nk = [n for n in ns if n >= k]
        exact[str(k)] = {"n": nk, "p": [theory.voronoi_topk_overlap(n, k, a) for n in nk]}
    mc = {}
    for k in cfg.topk_ks:
        cells: dict = {"n": [2**j for j in cfg.topk_mc_log2n if 2 ** (j // 2) >= k]}
        for n, seed in zip(cells["n"], seeds, strict=False):
            est = estimate_topk_overlap(
                ProductKey.name, n, k, cosine=a, dim=16, samples=cfg.topk_mc_samples, seed=seed
            )
            append_estimate(cells, {"estimate": est.overlap, "ci_low": est.ci_low,
                                    "ci_high": est.ci_high})  # fmt: skip
        mc[str(k)] = cells
    squares = [n for n in ns if n >= 4 and math.isqrt(n) ** 2 == n]
    top1 = {"n": squares, "p": [theory.productkey_probability(n, a) for n in squares]}
    return {"cosine": a, "exact_voronoi": exact, "exact_productkey_top1": top1, "mc_productkey": mc}


def collision_beyond(cfg: BeyondConfig, seed: int) -> dict:
    """Every family's collision probability against ``n`` and the top-k overlap panel."""
    seeds = spawn_seeds(seed, len(cfg.beyond_cosines) + 1)
    panels = {}
    for i, f in enumerate(cfg.beyond_cosines):
        panels[str(f)] = _collision_panel(cfg, f, spawn_seeds(seeds[i], len(cfg.beyond_mc_log2n)))
    topk = _topk_panel(cfg, spawn_seeds(seeds[-1], len(cfg.topk_mc_log2n)))
    return {"cosines": list(cfg.beyond_cosines), "panels": panels, "topk": topk}


STUDIES = (
    Study(
        "collision_beyond",
        collision_beyond,
        plot_collision_beyond,
        "Beyond the paper: collision probability against buckets n for every family at "
        "cosine a = f (lines: exact; product keys P_vor(sqrt n, a)^2 at n = 4^j, with "
        "reduced-mode Monte Carlo and 95% CIs), and the top-k overlap E|T_k(x) ∩ T_k(y)|/k: "
        "Voronoi exact (lines), product keys with PKM's top-k, Monte Carlo (points; their k = 1 "
        "exact value dotted): at equal n product keys overlap less than a full router.",
        {
            "default": BeyondConfig(
                beyond_cosines=(0.5, 0.9),
                beyond_log2n=tuple(range(2, 25)),
                beyond_mc_log2n=(4, 8, 12, 16, 20),
                beyond_mc_samples=20000,
                topk_ks=(1, 2, 4, 8),
                topk_cosine=0.7,
                topk_log2n=(2, 4, 6, 8, 10, 12, 14, 16),
                topk_mc_log2n=(4, 6, 8, 10, 12),
                topk_mc_samples=4000,
            ),
            "quick": BeyondConfig(
                beyond_cosines=(0.5, 0.9),
                beyond_log2n=(2, 6, 10, 14, 18, 22),
                beyond_mc_log2n=(6, 10),
                beyond_mc_samples=1000,
                topk_ks=(1, 2),
                topk_cosine=0.7,
                topk_log2n=(2, 6, 10),
                topk_mc_log2n=(4, 8),
                topk_mc_samples=300,
            ),
        },
        kinds={"": "exact", "panels/*/mc": "monte_carlo", "topk/mc_productkey": "monte_carlo"},
    ),
)
