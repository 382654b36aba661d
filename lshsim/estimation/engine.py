"""The estimation engine: seeded blocks of pairs, worker threads, progress, per-pair sums.

Seeding: an estimate's ``samples`` pairs are cut into blocks of :data:`BLOCK` pairs; block
``i`` uses the generator of child ``i`` of ``SeedSequence(seed)`` (made when the block starts,
see :func:`block_seed`: memory does not grow with ``samples``). A block's result depends only
on its child seed, and the blocks' sums are combined in block order whatever order the threads
finish them in, so the same seed gives the same numbers, bit for bit, on any thread count.

Inside a block the pairs are drawn (:func:`lshsim.estimation.inputs.draw_pairs`) in chunks that
fit :data:`WORK_BYTES` (for a statistic with ``chunked``; the chunk size depends only on the
inputs), and the statistic scores each chunk pair by pair (:meth:`Statistic.score`). The
engine keeps per-pair sums (:class:`Tally`), from which
:func:`lshsim.estimation.intervals.interval` makes the interval.
"""

from __future__ import annotations

import functools
import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from lshsim._validate import check_int
from lshsim.estimation.inputs import Inputs, Pairs, draw_pairs, pair_bytes

__all__ = [
    "BLOCK",
    "PROGRESS_DELAY",
    "WORK_BYTES",
    "Statistic",
    "Tally",
    "block_seed",
    "check_threads",
    "chunk_size",
    "run",
    "run_block",
    "run_blocks",
]

#: Pairs per seeded block (fixed: changing it changes the numbers for a given seed).
BLOCK = 1024
#: Working memory per chunk of a block: blocks are cut into chunks of pairs that fit it.
WORK_BYTES = 2**28
#: Seconds before the progress bar appears (runs shorter than this never show one).
PROGRESS_DELAY = 1.0


@dataclass
class Tally:
    """Per-pair sums of a run or of one block.

    A pair's value ``y_i`` is its successes among ``m_i`` trials (``rates`` false), or a rate
    over its trials already (``rates`` true: the top-k overlap fraction; its weight ``m_i`` is
    then 1). The tally keeps the number of pairs and of trials and the sums over pairs of
    ``y_i`` (``total``), ``y_i^2`` (``squares``), ``m_i`` (``weights``), ``m_i^2``
    (``weight_squares``) and ``y_i m_i`` (``cross``): what the ratio estimator
    ``sum y_i / sum m_i`` and its cluster-robust (delta-method) variance need
    (:func:`lshsim.estimation.intervals.ratio_variance`). ``certain`` and the three sums after
    it hold ``sum c_i``, ``sum c_i^2``, ``sum y_i c_i`` and ``sum m_i c_i`` for a pair's
    *certain* successes ``c_i`` (trials that succeed by construction, fixed by the input
    model: Token-ID's shared positions), whose exclusion the interval needs
    (:func:`lshsim.estimation.intervals.interval`). Integer values are summed exactly (Python
    ints); float values one by one in pair order, so a sum does not depend on how a block is
    cut.
    """

    pairs: int = 0
    trials: int = 0
    total: int | float = 0
    squares: int | float = 0
    weights: int = 0
    weight_squares: int = 0
    cross: int | float = 0
    rates: bool = False
    certain: int = 0
    certain_squares: int = 0
    certain_cross: int = 0
    certain_weights: int = 0

    def add(
        self, values: np.ndarray, trials_per_pair: int, rates: bool = False, certain: int = 0
    ) -> None:
        """Add the per-pair ``values`` of a batch whose pairs each hold ``trials_per_pair``.

        Args:
            values: each pair's successes (int) or, with ``rates``, its rate (float).
            trials_per_pair: the trials each pair holds.
            rates: whether the values are rates (weight 1 each) rather than counts.
            certain: each pair's certain successes (counts only; at most its value).
        """
        values = np.asarray(values)
        if self.pairs and rates != self.rates:
            raise ValueError("a tally holds either per-pair counts or per-pair rates")
        self.rates = rates
        m = 1 if rates else trials_per_pair
        # counts: exact; a pair's count is at most l <= 2^25 (64 l bytes <= MAX_PAIR_BYTES), so
        # the squares of a block's 1024 pairs fit int64
        if values.dtype.kind in "biu":
            v = values.astype(np.int64)
            total = int(v.sum())
            self.total += total
            self.squares += int(v @ v)
            self.cross += total * m
            if certain:
                c = int(certain)
                if v.size and int(v.min()) < c:
                    raise ValueError(f"a pair counted fewer successes than its {c} certain ones")
                self.certain += c * v.size
                self.certain_squares += c * c * v.size
                self.certain_cross += c * total
                self.certain_weights += c * m * v.size
        else:
            if certain:
                raise ValueError("certain successes apply to per-pair counts, not rates")
            total, squares, cross = self.total, self.squares, self.cross
            for x in values.tolist():
                total += x
                squares += x * x
                cross += x * m
            self.total, self.squares, self.cross = total, squares, cross
        self.pairs += values.size
        self.trials += values.size * trials_per_pair
        self.weights += values.size * m
        self.weight_squares += values.size * m * m

    def merge(self, other: Tally) -> Tally:
        """Add ``other``'s sums to this one (blocks are merged in block order); return self."""
        if self.pairs and other.pairs and self.rates != other.rates:
            raise ValueError("a tally holds either per-pair counts or per-pair rates")
        self.rates = self.rates or other.rates
        self.pairs += other.pairs
        self.trials += other.trials
        self.total += other.total
        self.squares += other.squares
        self.weights += other.weights
        self.weight_squares += other.weight_squares
        self.cross += other.cross
        self.certain += other.certain
        self.certain_squares += other.certain_squares
        self.certain_cross += other.certain_cross
        self.certain_weights += other.certain_weights
        return self


class Statistic(ABC):
    """A per-pair statistic: what one batch of drawn pairs scores, pair by pair.

    Attributes:
        interval: the interval rule (:func:`lshsim.estimation.intervals.interval`; every
            statistic's is ``"pairs"``, built on the independent pairs).
        rates: whether a pair's value is a rate over its trials (else a count of successes).
        chunked: whether blocks may be cut into chunks of pairs that fit :data:`WORK_BYTES`
            (the pairs and seeds are then drawn chunk by chunk; without it, a block's pairs
            are drawn at once).
    """

    interval: str = "pairs"
    chunked: bool = True
    rates: bool = False

    def trials_per_pair(self, inputs: Inputs) -> int:
        """Trials each pair holds (e.g. the ``l`` positions of a Token-ID pair); default 1."""
        return 1

    def certain(self, inputs: Inputs) -> int:
        """Successes every pair holds by construction (the same in every pair); default 0."""
        return 0

    def default_threads(self, inputs: Inputs) -> int:
        """Worker threads when the caller gives none; default 1."""
        return 1

    def desc(self, inputs: Inputs) -> str:
        """The progress bar's label."""
        return f"{inputs.family} n={inputs.n}"

    @abstractmethod
    def score(self, inputs: Inputs, pairs: Pairs, rng: np.random.Generator) -> np.ndarray:
        """Each pair's value (``[pairs.count]``), using the block's generator after the draw."""


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


def chunk_size(inputs: Inputs, work_bytes: int = WORK_BYTES) -> int:
    """Pairs per chunk of a block: as many as fit ``work_bytes`` (at most :data:`BLOCK`)."""
    return max(1, min(BLOCK, work_bytes // pair_bytes(inputs)))


def check_threads(threads: int | None, statistic: Statistic, inputs: Inputs) -> int:
    """The worker threads: ``threads`` (1 to 1024), or the statistic's default."""
    if threads is None:
        threads = statistic.default_threads(inputs)
    return check_int("threads", threads, 1, 1024)


def run_block(statistic: Statistic, inputs: Inputs, i: int, child, chunk: int) -> Tally:
    """Block ``i`` of ``inputs`` under ``statistic``, drawn from seed ``child``, in chunks."""
    count = min(BLOCK, inputs.samples - i * BLOCK)
    rng = np.random.default_rng(child)
    per_pair = statistic.trials_per_pair(inputs)
    certain = statistic.certain(inputs)
    tally = Tally()
    for c0 in range(0, count, chunk):  # chunk depends only on the inputs
        pairs = draw_pairs(inputs, min(chunk, count - c0), rng)
        values = np.asarray(statistic.score(inputs, pairs, rng))
        if values.shape != (pairs.count,):
            raise RuntimeError(f"a statistic scored {values.shape} values for {pairs.count} pairs")
        tally.add(values, per_pair, statistic.rates, certain)
    return tally


def run(
    statistic: Statistic,
    inputs: Inputs,
    *,
    threads: int | None = None,
    progress: bool = False,
    delay: float = PROGRESS_DELAY,
    work_bytes: int = WORK_BYTES,
) -> Tally:
    """Run ``statistic`` on ``inputs.samples`` pairs seeded by ``inputs.seed``.

    Args:
        statistic: the per-pair statistic.
        inputs: from :func:`lshsim.estimation.inputs.check_inputs`.
        threads: worker threads (default: the statistic's); the numbers do not depend on it.
        progress: show a progress bar on stderr once the run passes ``delay`` seconds.
        delay: seconds before the bar appears.
        work_bytes: working memory per chunk of a block (for a ``chunked`` statistic).

    Returns:
        The run's :class:`Tally`.
    """
    threads = check_threads(threads, statistic, inputs)
    chunk = chunk_size(inputs, work_bytes) if statistic.chunked else BLOCK
    one = functools.partial(run_block, statistic, inputs, chunk=chunk)

    def block(i: int, child) -> tuple[Tally, int]:
        tally = one(i, child)
        return tally, tally.pairs

    return run_blocks(
        block,
        np.random.SeedSequence(inputs.seed),
        math.ceil(inputs.samples / BLOCK),
        inputs.samples,
        threads,
        Tally.merge,
        Tally(),
        progress=progress,
        desc=statistic.desc(inputs),
        delay=delay,
    )


def run_blocks(
    one_block: Callable[[int, np.random.SeedSequence], tuple[Any, int]],
    root: np.random.SeedSequence,
    blocks: int,
    pairs: int,
    threads: int,
    fold: Callable[[Any, Any], Any],
    initial: Any,
    *,
    progress: bool = False,
    desc: str = "",
    delay: float = PROGRESS_DELAY,
) -> Any:
    """Run ``blocks`` blocks on up to ``threads`` threads; fold their results in block order.

    Args:
        one_block: ``(i, seed) -> (result, pairs done)`` for block ``i``.
        root: the run's seed; block ``i`` gets :func:`block_seed` ``(root, i)``.
        blocks: number of blocks, >= 1.
        pairs: the pairs of all blocks (the progress bar's total).
        threads: worker threads.
        fold: ``(accumulated, result) -> accumulated``, called on the results in block order.
        initial: the accumulated value before the first block.
        progress: show a progress bar on stderr (after ``delay`` seconds).
        desc: the bar's label.
        delay: seconds before the bar appears.

    Returns:
        The accumulated value after the last block.

    Blocks are submitted as workers free up, at most ``2 * threads`` ahead of the first block
    not yet folded, and each block's seed is made when it is submitted, so memory stays flat
    however many blocks there are.
    """
    acc = initial
    workers = min(threads, blocks)
    with tqdm(
        total=pairs,
        disable=not progress,
        delay=delay,
        file=sys.stderr,
        unit="pair",
        desc=desc,
        leave=False,
    ) as bar:
        # blocks are independent (own seed): run them on any number of threads
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: dict = {}  # future -> block index
            finished: dict = {}  # block index -> result, done before an earlier block
            nxt = folded = 0
            try:
                while folded < blocks:
                    while nxt < blocks and nxt - folded < 2 * workers:
                        pending[pool.submit(one_block, nxt, block_seed(root, nxt))] = nxt
                        nxt += 1
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        result, count = future.result()
                        finished[pending.pop(future)] = result
                        bar.update(count)
                    while folded in finished:
                        acc = fold(acc, finished.pop(folded))
                        folded += 1
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
    return acc
