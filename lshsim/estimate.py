"""Monte-Carlo collision-probability estimates with 95% intervals built on the pairs.

:func:`estimate_collision` is a thin wrapper around the estimation engine
(:mod:`lshsim.estimation`): the checks, pair drawing, seeded blocks, threads, progress and the
interval live there; the top-1 collision statistic is
:class:`lshsim.estimation.statistics.Collision`.

The probability is over the family: every trial draws a fresh hash function (and a fresh
input pair), so the estimate targets ``P_{h ~ H}[h(x) = h(y)]`` averaged over the input model.

Seeding: the ``samples`` pairs are cut into blocks of :data:`BLOCK` pairs; block ``i`` uses
the generator of child ``i`` of ``SeedSequence(seed)`` (see
:func:`lshsim.estimation.engine.block_seed`). A block's result depends only on its child seed,
never on thread counts or scheduling, so the same seed gives the same numbers.

Modes:
    ``full``: real ``d``-dimensional vectors (or token sequences) are generated and hashed by
        the family's kernel.
    ``reduced`` (vector families, where exact): only the sufficient statistics are sampled,
        so the cost does not grow with ``d``: the pair's cosine (from norm walks and a
        3-direction Gram matrix, see :func:`lshsim.sentences.sentence_cosines`, or the given
        cosine) and then, given the cosine ``a``, the bivariate-normal projection pairs with
        correlation ``a`` that decide the collision (``k`` for simhash and pstable; for
        voronoi's ``n`` and the Gaussian cross-polytope's ``n/2`` pairs, from
        ``LAZY_MIN_COLS`` columns on, only the winner of one side by inversion and the few
        pairs that can beat it: exact in distribution, a few dozen draws per trial instead of
        ``n``; see :func:`lshsim.hashing.reduced.lazy_sample`).

What one trial is:
    * vector families and minhash: one pair; success = the two sentences (vectors, token sets)
      get the same bucket;
    * tokenid: every aligned position of one pair is a trial (``samples`` pairs give
      ``samples * l`` trials); success = the two tokens at that position share a bucket;
    * ngram: every full window (position ``t >= N - 1``) of one pair is a trial, under one
      fresh function per pair (``samples * (l - N + 1)`` trials); success = the two aligned
      windows share a bucket in every head.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from lshsim.estimation import engine
from lshsim.estimation.engine import BLOCK, PROGRESS_DELAY, WORK_BYTES, block_seed
from lshsim.estimation.inputs import MAX_PAIR_BYTES, MODES, Inputs, check_inputs
from lshsim.estimation.intervals import Z95, interval, wilson_interval
from lshsim.estimation.statistics import COLLISION
from lshsim.hashing import get_family

__all__ = [
    "BLOCK",
    "MAX_PAIR_BYTES",
    "MODES",
    "PROGRESS_DELAY",
    "WORK_BYTES",
    "Z95",
    "Estimate",
    "block_seed",
    "check_estimate",
    "estimate_collision",
    "get_family",
    "wilson_interval",
]


@dataclass(frozen=True)
class Estimate:
    """A collision-probability estimate and the run that produced it.

    ``samples`` counts the trials (also :attr:`trials`) and ``pairs`` the independent pairs;
    they differ where a pair holds several trials (Token-ID positions, n-gram windows). The
    interval is built on the pairs (``interval``: the rule of
    :mod:`lshsim.estimation.intervals`); ``effective_trials`` is what its Wilson interval
    counted (the pairs, or the trials over the design effect).
    """

    family: str
    n: int
    estimate: float
    ci_low: float
    ci_high: float
    successes: int
    samples: int
    pairs: int
    seconds: float
    mode: str
    seed: int
    overlap: float | None
    cosine: float | None
    dim: int
    length: int
    vocab: int
    params: dict = field(default_factory=dict)
    interval: str = "pairs"
    effective_trials: float | None = None

    @property
    def trials(self) -> int:
        """The trials (``samples``): ``pairs`` times the trials per pair."""
        return self.samples

    def to_dict(self) -> dict:
        """A JSON-ready dict of every field."""
        return asdict(self)


def estimate_collision(
    family: str,
    n: int,
    *,
    overlap: float | None = None,
    cosine: float | None = None,
    dim: int = 64,
    length: int = 32,
    vocab: int = 32128,
    samples: int = 10_000,
    seed: int = 0,
    mode: str = "full",
    progress: bool = False,
    threads: int | None = None,
    **params,
) -> Estimate:
    """Estimate the probability that family ``family`` routes a similar pair to one bucket.

    Args:
        family: a name in :data:`lshsim.hashing.FAMILIES`.
        n: number of buckets.
        overlap: ``f`` in [0, 1]: pairs from the sentence model (exclusive with ``cosine``).
        cosine: ``a`` in [-1, 1]: unit-vector pairs at exactly this cosine (vector families).
        dim: embedding dimension ``d`` (>= 2 with ``overlap``).
        length: sentence length ``l``.
        vocab: vocabulary size ``V`` (>= ``2l - round(f l)``).
        samples: number of pairs, >= 1.
        seed: int >= 0.
        mode: ``"full"``, ``"reduced"`` (see the module docstring) or ``"auto"``
            (``reduced`` where the family has it, else ``full``:
            :func:`lshsim.estimation.inputs.resolve_mode`); the estimate records the mode run.
        progress: show a progress bar on stderr (it appears after one second).
        threads: worker threads running blocks concurrently. Default: Numba's thread count
            (``NUMBA_NUM_THREADS``) for reduced mode and for the families whose full-mode
            trials run outside the GIL (Voronoi, Gaussian cross-polytope), else 1. The numbers
            do not depend on it.
        **params: family parameters (e.g. ``rotation="hadamard"``, ``k=4``, ``w=2.0``).

    Returns:
        :class:`Estimate` with a 95% interval built on the pairs (Wilson where a pair is one
        trial; Wilson at the cluster-robust effective trials where it holds several).
    """
    inputs = check_inputs(
        family, n, params, overlap=overlap, cosine=cosine, dim=dim, length=length, vocab=vocab,
        samples=samples, seed=seed, mode=mode,
    )  # fmt: skip
    start = time.perf_counter()
    # this module's PROGRESS_DELAY and WORK_BYTES, read now (tests patch them here)
    tally = engine.run(
        COLLISION, inputs, threads=threads, progress=progress, delay=PROGRESS_DELAY,
        work_bytes=WORK_BYTES,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    est = interval(COLLISION.interval, tally)
    return Estimate(
        family=family,
        n=inputs.n,
        estimate=est.estimate,
        ci_low=est.low,
        ci_high=est.high,
        successes=tally.total,
        samples=tally.trials,
        pairs=tally.pairs,
        seconds=seconds,
        mode=inputs.mode,
        seed=inputs.seed,
        overlap=inputs.overlap,
        cosine=inputs.cosine,
        dim=inputs.dim,
        length=inputs.length,
        vocab=inputs.vocab,
        params=inputs.params,
        interval=COLLISION.interval,
        effective_trials=est.effective_trials,
    )


def check_estimate(
    family: str,
    n: int,
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
) -> None:
    """Validate :func:`estimate_collision`'s arguments without running a trial.

    The checks are the ones :func:`estimate_collision` makes first, so a caller holding many
    estimates (a sweep) can refuse a bad one before it runs any.

    Args:
        family: as for :func:`estimate_collision`.
        n: as for :func:`estimate_collision`.
        overlap: as for :func:`estimate_collision`.
        cosine: as for :func:`estimate_collision`.
        dim: as for :func:`estimate_collision`.
        length: as for :func:`estimate_collision`.
        vocab: as for :func:`estimate_collision`.
        samples: as for :func:`estimate_collision`.
        seed: as for :func:`estimate_collision`.
        mode: as for :func:`estimate_collision`.
        **params: as for :func:`estimate_collision`.

    Raises:
        ValueError: one line naming the bad argument and its allowed range.
    """
    check_inputs(
        family, n, params, overlap=overlap, cosine=cosine, dim=dim, length=length, vocab=vocab,
        samples=samples, seed=seed, mode=mode,
    )  # fmt: skip


# The two block runners of the engine in the shapes the tests of blocks and memory call
# (tests/test_estimate.py, tests/test_memory_bounds.py); the package calls lshsim.estimation.


def _run_block(i: int, child, *, samples: int, chunk: int, job: tuple) -> tuple[int, int, int]:
    """Top-1 block ``i`` from seed ``child``: ``(successes, trials, pairs)``.

    ``job`` is ``(cls, n, mode, overlap, cosine, dim, length, vocab, params)``, checked.
    """
    cls, n, mode, overlap, cosine, dim, length, vocab, params = job
    inputs = Inputs(cls.name, cls, n, params, overlap, cosine, dim, length, vocab, samples, 0, mode)
    tally = engine.run_block(COLLISION, inputs, i, child, chunk)
    return tally.total, tally.trials, tally.pairs


def _run_blocks(run_block, root, blocks, samples, threads, progress, desc) -> tuple[int, int]:
    """Blocks ``run_block(i, seed) -> (successes, trials, pairs)``: the summed counts."""

    def one(i, child):
        hits, tries, count = run_block(i, child)
        return (hits, tries), count

    return engine.run_blocks(
        one, root, blocks, samples, threads, lambda a, r: (a[0] + r[0], a[1] + r[1]), (0, 0),
        progress=progress, desc=desc, delay=PROGRESS_DELAY,
    )  # fmt: skip
