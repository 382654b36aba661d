"""Monte-Carlo top-k overlap ``E|T_k(x) ∩ T_k(y)| / k``, with a 95% interval on the pairs.

A thin wrapper around the estimation engine (:mod:`lshsim.estimation`) with the statistic
:class:`lshsim.estimation.statistics.TopkOverlap`. Every trial draws a fresh hash function (as
:mod:`lshsim.estimate`) and one input pair, the same pairs as ``estimate_collision`` draws
(unit vectors at a cosine, product keys' halves at that cosine, or sentence pairs at overlap
``f``), and records the fraction of the two top-k sets in common
(:func:`lshsim.hashing.topk.topk_sets`). The trials are cut into the same seeded blocks
(:data:`lshsim.estimation.engine.BLOCK`, block ``i`` seeded by child ``i`` of the seed), run one
after the other, so the same seed gives the same number. The per-trial overlap takes values
``0, 1/k, ..., 1``; the interval (before issue 32 ``mean ± 1.96 sd / sqrt(pairs)``) is the one on
the pairs of
:mod:`lshsim.estimation.intervals` (rule ``"pairs"``: a pair's ``k`` slots are correlated, so
the cluster-robust variance over pairs sets the effective trials of a Wilson interval).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from lshsim._validate import check_int
from lshsim.estimation import engine
from lshsim.estimation.inputs import Inputs, check_inputs, resolve_mode
from lshsim.estimation.intervals import interval
from lshsim.estimation.statistics import TopkOverlap
from lshsim.hashing import get_family

__all__ = ["OverlapEstimate", "check_topk_estimate", "estimate_topk_overlap"]


@dataclass(frozen=True)
class OverlapEstimate:
    """A top-k overlap estimate; ``probability`` equals ``overlap`` (the CLI's two keys).

    ``pairs`` are the independent units; ``trials`` the ``k`` slots of each (``pairs * k``);
    ``std_error`` the cluster-robust standard error over pairs; ``interval`` the rule.
    """

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
    trials: int = 0
    interval: str = "pairs"

    def to_dict(self) -> dict:
        """A JSON-ready dict of every field."""
        return asdict(self)


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
    mode: str = "full",
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
        mode: ``"full"`` (the family's top-k kernel on drawn vectors) or ``"reduced"``
            (Voronoi, product keys: the pairs' cosines and the exact order-statistics sampler,
            a cost per pair that grows with ``k``, not ``n``).
        **params: family parameters.

    Returns:
        :class:`OverlapEstimate`; at ``k = 1`` it estimates the collision probability.
    """
    inputs, statistic = check_topk_estimate(
        family, n, k, overlap=overlap, cosine=cosine, dim=dim, length=length, vocab=vocab,
        samples=samples, seed=seed, mode=mode, **params,
    )  # fmt: skip
    start = time.perf_counter()
    tally = engine.run(statistic, inputs, threads=1)
    est = interval(statistic.interval, tally)
    return OverlapEstimate(
        family, inputs.n, statistic.k, est.estimate, est.estimate, est.low, est.high,
        est.std_error, tally.pairs, time.perf_counter() - start, inputs.seed, inputs.overlap,
        inputs.cosine, inputs.dim, inputs.length, inputs.vocab, inputs.params, tally.trials,
        statistic.interval,
    )  # fmt: skip


def check_topk_estimate(
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
    mode: str = "full",
    **params,
) -> tuple[Inputs, TopkOverlap]:
    """Check :func:`estimate_topk_overlap`'s arguments without running a trial.

    ``mode="auto"`` is ``reduced`` where the family has an exact top-k sampler (Voronoi,
    product keys) and ``full`` otherwise (cross-polytope), as ``simulate --help`` says.

    Args:
        family: as for :func:`estimate_topk_overlap`.
        n: as for :func:`estimate_topk_overlap`.
        k: as for :func:`estimate_topk_overlap`.
        overlap: as for :func:`estimate_topk_overlap`.
        cosine: as for :func:`estimate_topk_overlap`.
        dim: as for :func:`estimate_topk_overlap`.
        length: as for :func:`estimate_topk_overlap`.
        vocab: as for :func:`estimate_topk_overlap`.
        samples: as for :func:`estimate_topk_overlap`.
        seed: as for :func:`estimate_topk_overlap`.
        mode: ``"full"``, ``"reduced"`` or ``"auto"``.
        **params: family parameters.

    Returns:
        ``(inputs, statistic)``, checked.

    Raises:
        ValueError: one line naming the bad argument.
    """
    if mode == "auto":
        mode = resolve_mode(family, n, params, mode)
        if mode == "reduced" and not hasattr(get_family(family), "sample_topk_reduced"):
            mode = "full"
    inputs = check_inputs(
        family, n, params, overlap=overlap, cosine=cosine, dim=dim, length=length, vocab=vocab,
        samples=samples, seed=seed, mode=mode,
    )  # fmt: skip
    statistic = TopkOverlap.for_inputs(inputs, k)
    check_int("samples", inputs.samples, 2)
    return inputs, statistic
