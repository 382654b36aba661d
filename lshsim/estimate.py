"""Monte-Carlo collision-probability estimators with Wilson confidence intervals.

The probability is over the family: every trial draws a fresh hash function (and a fresh
input pair), so the estimate targets ``P_{h ~ H}[h(x) = h(y)]`` averaged over the input model.

Seeding: the ``samples`` trials are cut into blocks of :data:`BLOCK` trials; block ``i`` uses
the generator of child ``i`` of ``SeedSequence(seed)`` (made when the block starts, see
:func:`block_seed`: memory does not grow with ``samples``). A block's result depends only on its
child seed, never on thread counts or scheduling, so the same seed gives the same numbers.

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
        ``n``; see :func:`lshsim.hashing.reduced._lazy_sample`).

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

import functools
import math
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field

import numba
import numpy as np
from tqdm import tqdm

from lshsim._validate import check_float, check_int
from lshsim.hashing import get_family
from lshsim.sentence_halves import half_cosine_pairs, half_cosines
from lshsim.sentences import (
    check_sentence_model,
    cosine_pairs,
    sentence_cosines,
    sentence_pairs,
)

#: Trials per seeded block (fixed: changing it changes the numbers for a given seed).
BLOCK = 1024
#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054
MODES = ("full", "reduced")
#: Working memory per chunk of a block: blocks are cut into chunks of pairs that fit it.
WORK_BYTES = 2**28
#: Largest working memory of one pair (larger dim * length is rejected up front).
MAX_PAIR_BYTES = 2**31
#: Seconds before the progress bar appears (runs shorter than this never show one).
PROGRESS_DELAY = 1.0


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: number of successes, ``0 <= successes <= trials``.
        trials: number of trials, >= 1.
        z: normal quantile (default: 95% two-sided).

    Returns:
        ``(low, high)`` within [0, 1].

    References:
        E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
        JASA 1927.
    """
    trials = check_int("trials", trials, 1)
    successes = check_int("successes", successes, 0, trials)
    z = check_float("z", z, 0.0, math.inf, lo_open=True, hi_open=True)
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # the endpoints at k = 0 and k = n are exactly 0 and 1; keep rounding from moving them
    lo = 0.0 if successes == 0 else max(0.0, min(p, centre - half))
    hi = 1.0 if successes == trials else min(1.0, max(p, centre + half))
    return lo, hi


@dataclass(frozen=True)
class Estimate:
    """A collision-probability estimate and the run that produced it."""

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
        mode: ``"full"`` or ``"reduced"`` (see the module docstring).
        progress: show a progress bar on stderr (it appears after one second).
        threads: worker threads running blocks concurrently. Default: Numba's thread count
            (``NUMBA_NUM_THREADS``) for reduced mode and for the families whose full-mode
            trials run outside the GIL (Voronoi, Gaussian cross-polytope), else 1. The numbers
            do not depend on it.
        **params: family parameters (e.g. ``rotation="hadamard"``, ``k=4``, ``w=2.0``).

    Returns:
        :class:`Estimate` with a Wilson 95% interval.
    """
    cls, n, params, checked, chunk = _check_all(
        family, n, params, overlap, cosine, dim, length, vocab, samples, seed, mode
    )
    overlap, cosine, dim, length, vocab, samples, seed = checked
    threads = _check_threads(threads, cls, mode, params)
    run_block = functools.partial(
        _run_block,
        samples=samples,
        chunk=chunk,
        job=(cls, n, mode, overlap, cosine, dim, length, vocab, params),
    )
    blocks = math.ceil(samples / BLOCK)
    start = time.perf_counter()
    successes, trials = _run_blocks(
        run_block,
        np.random.SeedSequence(seed),
        blocks,
        samples,
        threads,
        progress,
        f"{family} n={n}",
    )
    seconds = time.perf_counter() - start
    lo, hi = wilson_interval(successes, trials)
    return Estimate(
        family=family,
        n=n,
        estimate=successes / trials,
        ci_low=lo,
        ci_high=hi,
        successes=successes,
        samples=trials,
        pairs=samples,
        seconds=seconds,
        mode=mode,
        seed=seed,
        overlap=overlap,
        cosine=cosine,
        dim=dim,
        length=length,
        vocab=vocab,
        params=params,
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
    _check_all(family, n, params, overlap, cosine, dim, length, vocab, samples, seed, mode)


def _check_all(family, n, params, overlap, cosine, dim, length, vocab, samples, seed, mode):
    """The family class, ``n``, the normalised params and inputs, and the chunk size."""
    cls = get_family(family)
    params = cls.check_params(n, **params)  # normalised: defaults filled in, reported as used
    n = params.pop("n")
    checked = _check_inputs(
        cls, family, n, params, overlap, cosine, dim, length, vocab, samples, seed, mode
    )
    chunk = _chunk_size(mode, cls.input_kind == "vectors", checked[0], checked[2], checked[3])
    return cls, n, params, checked, chunk


def _check_inputs(cls, family, n, params, overlap, cosine, dim, length, vocab, samples, seed, mode):
    """Validate :func:`estimate_collision`'s inputs (``n``, ``params`` already checked).

    Returns:
        The normalised ``(overlap, cosine, dim, length, vocab, samples, seed)``.
    """
    if (overlap is None) == (cosine is None):
        raise ValueError("give exactly one of overlap (f) or cosine")
    samples = check_int("samples", samples, 1)
    seed = check_int("seed", seed, 0)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    length = check_int("length (l)", length, 1, 2**31)
    vocab = check_int("vocab (V)", vocab, 1, 2**61 - 1)  # token ids stay below 2^61 - 1
    vectors = cls.input_kind == "vectors"
    if cosine is not None:
        cosine = check_float("cosine", cosine, -1.0, 1.0)
        if not vectors:
            raise ValueError(f"cosine is not defined for family '{family}'; use overlap (f)")
        dim = check_int("dim (d)", dim, 1, 2**31)
        if dim == 1 and abs(cosine) != 1.0:
            raise ValueError(f"cosine must be -1 or 1 when dim (d) = 1, got {cosine!r}")
    else:
        overlap = check_float("overlap (f)", overlap, 0.0, 1.0)
        dim = check_int("dim (d)", dim, 2 if vectors else 1, 2**31)
        check_sentence_model(overlap, length, vocab, dim if vectors else 2)
        if cls.input_kind == "sequences":  # hashed n-grams: 32-bit ids, a full window
            check_int("vocab (V)", vocab, 1, 2**32)
            if params["ngram"] > length:
                raise ValueError(
                    f"ngram (N) must be an integer in [1, l = {length}], got {params['ngram']}"
                )
    if cls.halves and (dim < 4 or dim % 2):
        raise ValueError(f"dim (d) must be even and >= 4 for family '{family}', got {dim}")
    if mode == "reduced":
        if not vectors:
            raise ValueError(f"mode='reduced' is not available for family '{family}'")
        cls.sample_reduced(n, np.empty(0), np.random.default_rng(0), **params)  # validates
    return overlap, cosine, dim, length, vocab, samples, seed


def _chunk_size(mode, vectors, overlap, dim, length) -> int:
    """Pairs per chunk of a block: as many as fit :data:`WORK_BYTES` (at most :data:`BLOCK`)."""
    pair_bytes = _pair_bytes(mode, vectors, overlap, dim, length)
    if pair_bytes > MAX_PAIR_BYTES:
        raise ValueError(
            f"dim (d) = {dim} and length (l) = {length} are too large together: one pair "
            f"would need {pair_bytes / 2**30:.1f} GiB of working memory (limit 2 GiB)"
        )
    return max(1, min(BLOCK, WORK_BYTES // pair_bytes))


def _check_threads(threads, cls, mode, params) -> int:
    """The worker threads: ``threads``, or by default Numba's where threads pay, else 1."""
    if threads is None:  # threads pay unless every trial is Python-bound (then they contend)
        parallel = mode == "reduced" or cls.threads_pay_in_full_mode(params)
        threads = numba.config.NUMBA_NUM_THREADS if parallel else 1
    return check_int("threads", threads, 1, 1024)


def _run_block(i: int, child, *, samples: int, chunk: int, job: tuple) -> tuple[int, int, int]:
    """Run block ``i`` with its own generator; return ``(successes, trials, pairs)``.

    ``job`` is ``(cls, n, mode, overlap, cosine, dim, length, vocab, params)``.
    """
    cls, n, mode, overlap, cosine, dim, length, vocab, params = job
    count = min(BLOCK, samples - i * BLOCK)
    rng = np.random.default_rng(child)
    hits = tries = 0
    for c0 in range(0, count, chunk):  # chunk depends only on the parameters
        size = min(chunk, count - c0)
        h, t = _run_chunk(cls, n, size, rng, mode, overlap, cosine, dim, length, vocab, params)
        hits += h
        tries += t
    return hits, tries, count


def block_seed(root: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """Block ``i``'s seed: child ``i`` of ``root``, built on demand (nothing spawned up front).

    Equal to ``root.spawn(i + 1)[i]`` for a fresh ``root`` (NumPy's children are
    ``SeedSequence(entropy, spawn_key=root.spawn_key + (i,), pool_size=root.pool_size)``), so
    the numbers are those of spawning every block at once, without its memory (432 bytes a
    block: 10^6 blocks cost 432 MB).
    """
    return np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, i), pool_size=root.pool_size
    )


def _run_blocks(run_block, root, blocks, samples, threads, progress, desc) -> tuple[int, int]:
    """Run ``blocks`` blocks on up to ``threads`` threads; return the summed counts.

    Blocks are submitted as workers free up (at most ``2 * threads`` queued), and each block's
    seed is made when it is submitted, so memory stays flat however many blocks there are.
    """
    successes = trials = 0
    workers = min(threads, blocks)
    with tqdm(
        total=samples,
        disable=not progress,
        delay=PROGRESS_DELAY,
        file=sys.stderr,
        unit="pair",
        desc=desc,
        leave=False,
    ) as bar:
        # blocks are independent (own seed): run them on any number of threads, sum the counts
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: set = set()
            nxt = 0
            try:
                while pending or nxt < blocks:
                    while nxt < blocks and len(pending) < 2 * workers:
                        pending.add(pool.submit(run_block, nxt, block_seed(root, nxt)))
                        nxt += 1
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        hits, tries, count = future.result()
                        successes += hits
                        trials += tries
                        bar.update(count)
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
    return successes, trials


def _pair_bytes(mode, vectors, overlap, dim, length) -> int:
    """Rough peak working memory of one trial's inputs, in bytes (for chunking the blocks)."""
    if overlap is None:  # exact-cosine pairs: x, y and temporaries
        return 8 * 4 * dim if mode == "full" else 64
    k = 2 * length  # at most 2l - s distinct tokens per pair
    if mode == "reduced":  # the O(l) cosine sampler keeps a few scalars per pair
        return 8 * 16
    return 8 * 2 * k * dim if vectors else 8 * 4 * k


def _run_chunk(cls, n, count, rng, mode, overlap, cosine, dim, length, vocab, params):
    """Run ``count`` pairs with the block's generator ``rng``; return ``(successes, trials)``."""
    if mode == "reduced":
        if cosine is not None:
            cos = np.full(count, cosine)
        elif cls.halves:  # product keys: the two half-cosines of each pair
            cos = half_cosines(count, overlap, length=length, dim=dim, rng=rng)
        else:
            cos = sentence_cosines(count, overlap, length=length, dim=dim, rng=rng)
        return int(cls.sample_reduced(n, cos, rng, **params).sum()), count

    vectors = cls.input_kind == "vectors"
    a, b = _draw_pairs(cls, count, rng, overlap, cosine, dim, length, vocab)
    seeds = rng.integers(0, 2**63, size=count)
    width = dim if vectors else 1
    hits = 0
    if cls.input_kind == "sequences":  # n-grams: every full window, K of H heads collide
        law = cls.pair_collisions(n, a, b, rng, **params)
        return int(law[-1]), int(law.sum())
    if cls.input_kind == "tokens":  # Token-ID: every aligned position is a trial
        for t in range(count):
            h = cls(n, width, int(seeds[t]), **params)
            hits += int((h.hash(a[t]) == h.hash(b[t])).sum())
        return hits, count * length
    for t in range(count):
        h = cls(n, width, int(seeds[t]), **params)
        ids = h.hash(np.stack((a[t], b[t])))
        hits += int(ids[0] == ids[1])
    return hits, count


def _draw_pairs(cls, count, rng, overlap, cosine, dim, length, vocab):
    """``count`` input pairs ``(a, b)`` for family class ``cls``, drawn with ``rng``.

    Unit vectors at ``cosine`` (product keys: both halves at it), else sentence pairs at
    ``overlap``: embedded vectors for vector families, token ids otherwise.
    """
    vectors = cls.input_kind == "vectors"
    if cosine is not None and cls.halves:  # both halves at the cosine
        return half_cosine_pairs(count, cosine, cosine, dim, rng)
    if cosine is not None:
        return cosine_pairs(count, cosine, dim, rng)
    pairs = sentence_pairs(
        count, overlap, length=length, vocab=vocab, dim=dim, rng=rng, embed=vectors
    )
    return (pairs.x1, pairs.x2) if vectors else (pairs.tokens1, pairs.tokens2)
