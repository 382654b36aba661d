"""One Monte-Carlo estimation engine for every per-pair statistic.

The engine (:mod:`~lshsim.estimation.engine`) owns what every estimate shares: the input
checks and the pair drawing (:mod:`~lshsim.estimation.inputs`: unit vectors at a cosine,
product keys' half-cosines, sentence pairs at overlap ``f``, or in reduced mode only their
cosines), the seeded blocks (block ``i`` draws from child ``i`` of ``SeedSequence(seed)``, so
the numbers do not depend on the thread count), the worker threads, the progress bar, and the
per-pair sums (:class:`~lshsim.estimation.engine.Tally`) from which
:mod:`~lshsim.estimation.intervals` computes the interval in one place. A statistic
(:mod:`~lshsim.estimation.statistics`: the top-1 collision, the top-k overlap) only says what
one batch of drawn pairs scores, pair by pair. :func:`lshsim.estimate.estimate_collision` and
:func:`lshsim.estimate_topk.estimate_topk_overlap` are thin wrappers around it.
"""

from __future__ import annotations

from lshsim.estimation.engine import BLOCK, Statistic, Tally, block_seed, run, run_blocks
from lshsim.estimation.inputs import Inputs, Pairs, check_inputs, draw_pairs
from lshsim.estimation.intervals import Z95, Interval, interval, wilson_interval
from lshsim.estimation.statistics import COLLISION, Collision, TopkOverlap

__all__ = [
    "BLOCK",
    "COLLISION",
    "Z95",
    "Collision",
    "Inputs",
    "Interval",
    "Pairs",
    "Statistic",
    "Tally",
    "TopkOverlap",
    "block_seed",
    "check_inputs",
    "draw_pairs",
    "interval",
    "run",
    "run_blocks",
    "wilson_interval",
]
