"""Monte-Carlo top-k overlap ``E|T_k(x) ∩ T_k(y)| / k``, with a normal 95% interval.

Every trial draws a fresh hash function (as :mod:`lshsim.estimate`) and one input pair, the
same pairs as ``estimate_collision`` draws (unit vectors at a cosine, product keys' halves at
that cosine, or sentence pairs at overlap ``f``), and records the fraction of the two top-k
sets in common (:func:`lshsim.hashing.topk.topk_sets`). The trials are cut into the same
seeded blocks (:data:`lshsim.estimate.BLOCK`, block ``i`` seeded by child ``i`` of the seed),
run one after the other, so the same seed gives the same number. The per-trial overlap takes
values ``0, 1/k, ..., 1``; the interval is ``mean ± 1.96 sd / sqrt(trials)`` (sample standard
deviation), clipped to ``[0, 1]``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from lshsim._validate import check_int
from lshsim.estimate import BLOCK, Z95, _check_all, _draw_pairs, block_seed
from lshsim.hashing.topk import TOPK_FAMILIES, topk_sets

__all__ = ["OverlapEstimate", "estimate_topk_overlap"]


@dataclass(frozen=True)
class OverlapEstimate:
    """A top-k overlap estimate; ``probability`` equals ``overlap`` (the CLI's two keys)."""

    family: str
    n: int
    topk: int
    overlap: float
    probability: float
    ci_low: float
    ci_high: float
    std_error: float
    pairs: int
    seconds: float
    seed: int
    sentence_overlap: float | None
    cosine: float | None
    dim: int
    length: int
    vocab: int
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """A JSON-ready dict of every field."""
        return asdict(self)


def _check_topk(family: str, n: int, k: int, params: dict) -> int:
    if family not in TOPK_FAMILIES:
        raise ValueError(f"topk applies to {', '.join(TOPK_FAMILIES)}, not '{family}'")
    if params.get("rotation", "gaussian-projection") == "hadamard":
        raise ValueError("topk needs a stored rotation: use rotation='gaussian-projection'")
    limit = math.isqrt(n) if family == "productkey" else n
    return check_int("topk (k)", k, 1, limit)


def _block(cls, n, k, count, rng, inputs, params) -> tuple[float, float]:
    """Sum and sum of squares of the per-trial overlaps of one block."""
    x, y = _draw_pairs(cls, count, rng, *inputs)  # vector families: embedded pairs
    seeds = rng.integers(0, 2**63, size=count)
    total = squares = 0.0
    for t in range(count):
        h = cls(n, x.shape[1], int(seeds[t]), **params)
        sets = topk_sets(h, np.stack((x[t], y[t])), k)
        frac = np.intersect1d(sets[0], sets[1]).size / k
        total += frac
        squares += frac * frac
    return total, squares


def estimate_topk_overlap(
    family: str,
    n: int,
    k: int,
    *,
    overlap: float | None = None,
    cosine: float | None = None,
    dim: int = 64,
    length: int = 32,
    vocab: int = 32128,
    samples: int = 10_000,
    seed: int = 0,
    **params,
) -> OverlapEstimate:
    """Estimate the expected top-k overlap fraction of ``family`` on similar pairs.

    Args:
        family: ``voronoi``, ``crosspolytope`` (dense rotation) or ``productkey``.
        n: buckets.
        k: the top-k size, ``1 <= k <= n`` (product keys: ``k <= sqrt(n)``, PKM's rule).
        overlap: sentence overlap ``f`` (exclusive with ``cosine``).
        cosine: exact cosine ``a`` (product keys: both halves at ``a``).
        dim: ``d``.
        length: sentence length ``l``.
        vocab: vocabulary ``V``.
        samples: pairs, ``>= 2``.
        seed: int ``>= 0``.
        **params: family parameters.

    Returns:
        :class:`OverlapEstimate`; at ``k = 1`` it estimates the collision probability.
    """
    cls, n, params, checked, _ = _check_all(
        family, n, params, overlap, cosine, dim, length, vocab, samples, seed, "full"
    )
    overlap, cosine, dim, length, vocab, samples, seed = checked
    k = _check_topk(family, n, k, params)
    check_int("samples", samples, 2)
    start = time.perf_counter()
    root = np.random.SeedSequence(seed)
    total = squares = 0.0
    for i in range(math.ceil(samples / BLOCK)):
        rng = np.random.default_rng(block_seed(root, i))
        count = min(BLOCK, samples - i * BLOCK)
        inputs = (overlap, cosine, dim, length, vocab)
        s, q = _block(cls, n, k, count, rng, inputs, params)
        total += s
        squares += q
    mean = total / samples
    var = max(0.0, (squares - samples * mean * mean) / (samples - 1))
    se = math.sqrt(var / samples)
    return OverlapEstimate(
        family, n, k, mean, mean, max(0.0, mean - Z95 * se), min(1.0, mean + Z95 * se), se,
        samples, time.perf_counter() - start, seed, overlap, cosine, dim, length, vocab, params,
    )  # fmt: skip
