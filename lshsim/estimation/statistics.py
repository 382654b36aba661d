"""The per-pair statistics the engine runs: the top-1 collision and the top-k overlap.

What one pair contributes:
    :class:`Collision` (``estimate_collision``): its colliding trials. Vector families and
        min-hash: one trial, success = the two sentences (vectors, token sets) get the same
        bucket; Token-ID: every aligned position is a trial (``l`` per pair); n-grams: every
        full window (position ``t >= N - 1``) is a trial under the pair's one function
        (``l - N + 1`` per pair), success = the two windows share a bucket in every head.
        Reduced mode: one trial from the family's ``sample_reduced`` at the pair's cosine.
    :class:`TopkOverlap` (``estimate_topk_overlap``): ``|T_k(x) ∩ T_k(y)| / k`` under the
        pair's function (:func:`lshsim.hashing.topk.topk_sets`), a rate over ``k`` slots.

Every statistic's interval is built on the pairs (rule ``"pairs"`` of
:mod:`lshsim.estimation.intervals`): Wilson where a pair is one trial, the cluster-robust
interval on per-pair rates where a pair holds several correlated trials.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from lshsim._validate import check_int
from lshsim.estimation.engine import Statistic
from lshsim.estimation.inputs import Inputs, Pairs
from lshsim.hashing import TOPK_FAMILIES
from lshsim.hashing.topk import topk_sets
from lshsim.sentences import shared_tokens

__all__ = ["COLLISION", "Collision", "TopkOverlap"]


class Collision(Statistic):
    """Top-1 collision: a pair's value is how many of its trials collided (see the module)."""

    interval = "pairs"
    chunked = True

    def trials_per_pair(self, inputs: Inputs) -> int:
        """1, or ``l`` (Token-ID positions), or ``l - N + 1`` (n-gram windows)."""
        kind = inputs.cls.input_kind
        if kind == "tokens":
            return inputs.length
        if kind == "sequences":
            return inputs.length - inputs.params["ngram"] + 1
        return 1

    def certain(self, inputs: Inputs) -> int:
        """Token-ID: the ``round(f l)`` shared aligned positions (equal tokens share a bucket).

        Only Token-ID's certain successes are the same in every pair; an n-gram pair's fully
        shared windows also collide for sure, but how many there are is drawn per pair, so
        they stay in the pair's count and its variance.
        """
        if inputs.cls.input_kind == "tokens" and inputs.overlap is not None:
            return shared_tokens(inputs.overlap, inputs.length)
        return 0

    def default_threads(self, inputs: Inputs) -> int:
        """Numba's thread count where threads pay (reduced mode, GIL-free kernels), else 1.

        Threads pay unless every trial is Python-bound (then they contend for the GIL).
        """
        parallel = inputs.mode == "reduced" or inputs.cls.threads_pay_in_full_mode(inputs.params)
        return numba.config.NUMBA_NUM_THREADS if parallel else 1

    def score(self, inputs: Inputs, pairs: Pairs, rng: np.random.Generator) -> np.ndarray:
        """Each pair's colliding trials (int64, or bool in reduced mode)."""
        cls, n, params = inputs.cls, inputs.n, inputs.params
        if inputs.mode == "reduced":
            return np.asarray(cls.sample_reduced(n, pairs.cosines, rng, **params))
        a, b = pairs.first, pairs.second
        if cls.input_kind == "sequences":  # n-grams: every full window, all H heads collide
            hits = cls.head_hits(n, a, b, rng, **params)
            return (hits == params["heads"]).sum(axis=-1)
        width = inputs.dim if inputs.vectors else 1
        out = np.zeros(pairs.count, dtype=np.int64)
        for t in range(pairs.count):
            h = cls(n, width, int(pairs.seeds[t]), **params)
            if cls.input_kind == "tokens":  # Token-ID: every aligned position is a trial
                out[t] = (h.hash(a[t]) == h.hash(b[t])).sum()
            else:
                ids = h.hash(np.stack((a[t], b[t])))
                out[t] = ids[0] == ids[1]
        return out


#: The top-1 collision statistic (it has no state).
COLLISION = Collision()


@dataclass(frozen=True)
class TopkOverlap(Statistic):
    """Top-k overlap ``|T_k(x) ∩ T_k(y)| / k`` of each pair (values ``0, 1/k, ..., 1``).

    A block's pairs are drawn at once (not ``chunked``: the numbers predate chunking). Reduced
    mode (Voronoi, product keys): only the pairs' cosines, then the family's
    ``sample_topk_reduced`` (the order statistics the top-k needs: a cost that grows with
    ``k``, not ``n``).
    """

    k: int
    interval = "pairs"
    chunked = False
    rates = True

    def trials_per_pair(self, inputs: Inputs) -> int:
        """``k``: a pair's overlap fraction is over its ``k`` top slots."""
        return self.k

    @classmethod
    def for_inputs(cls, inputs: Inputs, k: int) -> TopkOverlap:
        """The statistic for ``inputs``, checking the family and ``k``.

        ``1 <= k <= n`` (product keys: ``k <= sqrt(n)``, PKM's rule); cross-polytope needs a
        stored (Gaussian) rotation.

        Raises:
            ValueError: one line naming the parameter.
        """
        if inputs.family not in TOPK_FAMILIES:
            raise ValueError(f"topk applies to {', '.join(TOPK_FAMILIES)}, not '{inputs.family}'")
        if inputs.mode == "reduced" and not hasattr(inputs.cls, "sample_topk_reduced"):
            raise ValueError(
                f"topk in mode='reduced' is not available for family '{inputs.family}'"
            )
        if inputs.mode == "full":
            inputs.cls.check_topk_params(inputs.params)
        return cls(check_int("topk (k)", k, 1, inputs.cls.max_topk(inputs.n)))

    def desc(self, inputs: Inputs) -> str:
        """The progress bar's label."""
        return f"{inputs.family} n={inputs.n} top-{self.k}"

    def score(self, inputs: Inputs, pairs: Pairs, rng: np.random.Generator) -> np.ndarray:
        """Each pair's overlap fraction (float64); reduced mode: the family's exact sampler."""
        if inputs.mode == "reduced":
            counts = inputs.cls.sample_topk_reduced(
                inputs.n, self.k, pairs.cosines, rng, **inputs.params
            )
            return np.asarray(counts, dtype=np.float64) / self.k
        x, y, k = pairs.first, pairs.second, self.k
        out = np.empty(pairs.count)
        for t in range(pairs.count):
            h = inputs.cls(inputs.n, x.shape[1], int(pairs.seeds[t]), **inputs.params)
            sets = topk_sets(h, np.stack((x[t], y[t])), k)
            out[t] = np.intersect1d(sets[0], sets[1]).size / k
        return out
