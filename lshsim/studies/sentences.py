"""Studies on sentence pairs: the sentence model's cosine, and Token-ID against min-hash."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lshsim.hashing import MinHash, TokenID
from lshsim.plots.sentences import plot_sentence_cosine, plot_tokenid_vs_minhash
from lshsim.sentences import cosine_moments, sentence_cosines
from lshsim.studies.base import LENGTH, Study, append_estimate, spawn_seeds
from lshsim.sweep import run_grid


@dataclass(frozen=True)
class CosineConfig:
    """Sizes of ``sentence_cosine``: dimensions, sentence lengths, overlaps, pairs per cell."""

    cos_dims: tuple[int, ...]
    cos_lengths: tuple[int, ...]
    cos_f: tuple[float, ...]
    cos_samples: int


def sentence_cosine(cfg: CosineConfig, seed: int) -> dict:
    """The sentence model's cosine against ``f``: exact sampler against the moment formulas."""
    rows = []
    seeds = iter(spawn_seeds(seed, len(cfg.cos_dims) * len(cfg.cos_lengths) * len(cfg.cos_f)))
    for d in cfg.cos_dims:
        for length in cfg.cos_lengths:
            for f in cfg.cos_f:
                rng = np.random.default_rng(next(seeds))
                cos = sentence_cosines(cfg.cos_samples, f, length=length, dim=d, rng=rng)
                mean, var = cosine_moments(f, length, d)
                rows.append(
                    {
                        "d": d,
                        "l": length,
                        "f": f,
                        "mc_mean": float(cos.mean()),
                        "mc_sd": float(cos.std()),
                        "theory_mean": mean,
                        "theory_sd": math.sqrt(var),
                    }
                )
    return {"rows": rows}


#: the two families compared, and the buckets each runs at (min-hash's ``1/n`` term is nil)
TOKEN_BUCKETS = {TokenID.name: 2**20, MinHash.name: 2**40}


@dataclass(frozen=True)
class TokenConfig:
    """Sizes of ``tokenid_vs_minhash``: overlaps and sentence pairs per overlap."""

    token_f: tuple[float, ...]
    token_pairs: int


def tokenid_vs_minhash(cfg: TokenConfig, seed: int) -> dict:
    """Per-token Token-ID rate ``f`` against min-hash's Jaccard ``f/(2-f)``."""
    out = {"f": list(cfg.token_f)}
    grids = [
        {
            "command": "simulate",
            "family": [family],
            "buckets": [n],
            "overlap": list(cfg.token_f),
            "length": [LENGTH],
            "samples": [cfg.token_pairs],
        }
        for family, n in TOKEN_BUCKETS.items()
    ]
    rows = run_grid(seed, grids)  # the sweep engine: lshsim sweep gives the same numbers
    for family in TOKEN_BUCKETS:
        cells: dict = {}
        for f in cfg.token_f:
            append_estimate(
                cells, next(r for r in rows if (r["family"], r["overlap"]) == (family, f))
            )
        out[family] = cells
    curve = [float(x) for x in np.linspace(0, 1, 101)]
    out["curve_f"] = curve
    out["jaccard"] = [f / (2 - f) for f in curve]
    return out


STUDIES = (
    Study(
        "sentence_cosine",
        sentence_cosine,
        plot_sentence_cosine,
        "The sentence model's cosine against f: exact sampler (mean ± sd) "
        "against the delta-method moments, across d and l (the steps at l = 8 are s = round(f l)).",
        {
            "default": CosineConfig(
                cos_dims=(16, 64, 256),
                cos_lengths=(8, 32),
                cos_f=tuple(i / 10 for i in range(11)),
                cos_samples=20000,
            ),
            "quick": CosineConfig(
                cos_dims=(16, 64),
                cos_lengths=(8,),
                cos_f=(0.0, 0.25, 0.5, 0.75, 1.0),
                cos_samples=4000,
            ),
        },
        kinds={"": "exact", "rows/*/mc_mean": "monte_carlo", "rows/*/mc_sd": "monte_carlo"},
    ),
    Study(
        "tokenid_vs_minhash",
        tokenid_vs_minhash,
        plot_tokenid_vs_minhash,
        "Token-ID's per-token rate f against min-hash's Jaccard f/(2-f).",
        {
            "default": TokenConfig(
                token_f=tuple(round(0.05 * i, 2) for i in range(1, 20)), token_pairs=2000
            ),
            "quick": TokenConfig(token_f=(0.1, 0.3, 0.5, 0.7, 0.9), token_pairs=300),
        },
        kinds={"": "exact", **dict.fromkeys(TOKEN_BUCKETS, "monte_carlo")},
    ),
)
