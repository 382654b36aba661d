"""Product keys (Lample et al. 2019) with random Gaussian sub-keys: ``n = s^2`` slots.

The input ``x in R^d`` (``d`` even) is cut into halves ``x1 = x[:d/2]``, ``x2 = x[d/2:]``;
each half is scored against its own ``s`` i.i.d. ``N(0, I)`` sub-keys ``K1``, ``K2``
(``s x d/2``), and the slot is ``i * s + j``, ``i = argmax_r K1_r . x1``,
``j = argmax_r K2_r . x2`` (ties: the lowest index). This is also the top-1 of the ``s^2``
sums ``K1_i . x1 + K2_j . x2``, PKM's rule at ``k = 1`` (:func:`lshsim.hashing.topk.topk_sets`
gives its top-k). The two argmaxes are two independent Voronoi hashes with ``s`` buckets of
the halves, so the collision probability is ``P_vor(s, a1) P_vor(s, a2)`` at half-cosines
``a1, a2`` (:mod:`lshsim.theory.productkey`), which :meth:`ProductKey.sample_reduced` samples
as two independent Voronoi draws.

References:
    G. Lample, A. Sablayrolles, M. Ranzato, L. Denoyer, H. Jégou, "Large memory layers with
    product keys", NeurIPS 2019.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from lshsim._validate import check_float, check_int
from lshsim.hashing.base import HashFamily, OverlapLaw, tiled_argmax, weights_like
from lshsim.hashing.productkey_topk import productkey_topk_rows
from lshsim.hashing.reduced import check_reduced, reduced_sample
from lshsim.laws import spherical as spherical_laws
from lshsim.laws.tables import log_p_table
from lshsim.laws.topk_reduced import (
    MAX_LAW_TOPK,
    productkey_topk_law,
    productkey_topk_reduced,
)
from lshsim.sentence_halves import half_cosines

__all__ = ["ProductKey", "check_square", "combine_slots"]


def check_square(n) -> int:
    """``s = sqrt(n)``; ``ValueError`` naming ``n (buckets)`` unless ``n = s^2``, ``s >= 2``."""
    n = check_int("n (buckets)", n, 4, 2**62)
    s = math.isqrt(n)
    if s * s != n:
        raise ValueError(
            f"n (buckets) must be a perfect square s^2 (s >= 2) for productkey, got {n} "
            f"(nearest: {s * s} or {(s + 1) ** 2})"
        )
    return s


@numba.njit(cache=True, nogil=True)
def combine_slots(i, j, s, out):  # pragma: no cover - jit
    """``out[r] = i[r] * s + j[r]``: the slot of the two halves' argmaxes (int64[m])."""
    for r in range(i.shape[0]):
        out[r] = i[r] * s + j[r]


class ProductKey(HashFamily):
    """Product-key hashing with ``n = s^2`` slots, ``s`` random sub-keys per half; ``d`` even.

    ``hash(batch)`` takes float ``(m, d)`` vectors and returns int64[m] slots ``i * s + j``;
    the half scores are reduced tile by tile (never an ``m x s`` matrix beyond one tile).
    """

    name = "productkey"
    help = "product keys: argmaxes of s Gaussian sub-keys per half, slot i*s+j (n = s^2)"
    bucket_rule = "square"
    reference = "lshsim.testing.reference:productkey"
    reduced = True
    halves = True
    has_topk = True

    @classmethod
    def log_probability_halves(cls, n, a1, a2, *, rtol=spherical_laws.RTOL, **params):
        """``ln P_vor(s, a1) + ln P_vor(s, a2)``, ``s = sqrt(n)``: the halves are independent."""
        cls.check_params(n, **params)
        s = math.isqrt(n)
        a1 = check_float("cosine", a1, -1.0, 1.0)
        a2 = check_float("cosine", a2, -1.0, 1.0)
        first = spherical_laws.voronoi_log_probability(s, a1, rtol)
        if a2 == a1:
            return 2.0 * first
        return first + spherical_laws.voronoi_log_probability(s, a2, rtol)

    @classmethod
    def halves_law(cls, n: int, a1: float, a2: float) -> dict:
        """The law at two half-cosines with its parts, as ``lshsim theory --half-cosines`` shows.

        Returns:
            ``subkeys`` ``s``, ``half_cosines``, ``probability``, ``log_probability``,
            ``rho`` and ``voronoi_sqrt_n`` (each half's ``P_vor(s, a_i)``).
        """
        log_p = cls.log_probability_halves(n, a1, a2)
        s = math.isqrt(n)
        return {
            "subkeys": s,
            "half_cosines": [a1, a2],
            "probability": math.exp(log_p),
            "log_probability": log_p,
            "rho": -log_p / math.log(n),
            "voronoi_sqrt_n": [
                math.exp(spherical_laws.voronoi_log_probability(s, a1)),
                math.exp(spherical_laws.voronoi_log_probability(s, a2)),
            ],
        }

    @classmethod
    def log_probability(cls, n, cosine, *, rtol=spherical_laws.RTOL, **params):
        """Both halves at cosine ``a``: ``2 ln P_vor(sqrt n, a)``."""
        return cls.log_probability_halves(n, cosine, cosine, rtol=rtol, **params)

    @classmethod
    def overlap_law(cls, n, overlap, *, dim, length, vocab, cosines, seed, **params):
        """``P_vor(s, a1) P_vor(s, a2)`` averaged over the law of the two half-cosines.

        The exact joint law is :func:`lshsim.sentence_halves.half_cosines`.
        """
        cls.check_params(n, **params)
        s = math.isqrt(n)
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        cos = half_cosines(cosines, overlap, length=length, dim=dim, rng=rng)

        def direct(a: float) -> float:
            return spherical_laws.voronoi_log_probability(s, check_float("cosine", a, -1, 1))

        log_p = log_p_table(direct, cos.reshape(-1), f"voronoi at n={s}")
        pv = np.exp(log_p.reshape(-1, 2).sum(axis=1))
        se = float(pv.std(ddof=1) / math.sqrt(cosines))
        return OverlapLaw(float(pv.mean()), se, cosines, float(cos.mean()), float(cos.std()))

    @classmethod
    def limit_rho(cls, cosine, n, **params):
        """``(1 - a) / (1 + a)``: ``rho_pk(n, a) = rho_vor(sqrt n, a)`` (both halves at ``a``)."""
        cls.check_params(n, **params)
        return spherical_laws.limit_rho(cosine)

    @classmethod
    def max_topk(cls, n):
        """PKM's per-half top-k: ``k <= s``."""
        return math.isqrt(n)

    @classmethod
    def topk_overlap(cls, n, k, cosine, **params):
        """PKM's top-k overlap fraction, both halves at ``cosine`` (:meth:`topk_law`'s value)."""
        return cls.topk_law(n, k, cosine, cosine, **params)[0]

    @classmethod
    def topk_law(cls, n, k, a1, a2, **params) -> tuple[float, float]:
        """PKM's top-k overlap at half-cosines ``a1, a2`` and its error bound, ``k <= 32``.

        ``k = 1``: the exact ``P_vor(s, a1) P_vor(s, a2)`` (bound 0). ``k > 1``: the numerical
        law :func:`lshsim.laws.topk_reduced.productkey_topk_law` (the mean of ``2^15`` exact
        reduced draws from a fixed seed; bound: 3.29 standard errors, 99.9%).
        """
        n = cls.check_params(n, **params)["n"]
        k = check_int("topk (k)", k, 1, min(cls.max_topk(n), MAX_LAW_TOPK))
        a1 = check_float("cosine", a1, -1.0, 1.0)
        a2 = check_float("cosine", a2, -1.0, 1.0)
        if k == 1:
            return math.exp(cls.log_probability_halves(n, a1, a2)), 0.0
        return productkey_topk_law(n, k, a1, a2)

    @classmethod
    def topk_overlap_law(cls, n, k, overlap, *, dim, length, draws, seed, **params):
        """PKM's top-k overlap on sentences: one exact reduced draw per drawn half-cosine pair."""
        from lshsim.laws.topk_sentences import productkey_topk_on_sentences

        n = cls.check_params(n, **params)["n"]
        return productkey_topk_on_sentences(
            n, k, overlap, dim=dim, length=length, trials=draws, seed=seed
        )

    @classmethod
    def sample_topk_reduced(cls, n, k, cosines, rng, **params):
        """Exact draws of PKM's top-k overlap ``|T_k(x) ∩ T_k(y)|`` (int64[B]), ``O(k^2)`` each.

        Args:
            n: slots ``s^2``.
            k: ``1 <= k <= s``.
            cosines: float64[B] (both halves) or float64[B, 2] (the two half-cosines).
            rng: the block's generator.
            **params: none.
        """
        n = cls.check_params(n, **params)["n"]
        k = check_int("topk (k)", k, 1, cls.max_topk(n))
        cos = np.asarray(cosines, dtype=np.float64)
        if cos.ndim == 1:
            cos = np.stack([cos, cos], axis=1)
        return productkey_topk_reduced(n, k, cos[:, 0], cos[:, 1], rng)

    def topk_block(self, x, k, out, rows):
        """PKM's top-k: top-``k`` per half, then top-``k`` of the ``k^2`` sums.

        Args:
            x: float[m, d], C-contiguous.
            k: ``1 <= k <= s``.
            out: int64[m, k], written: slots ``i * s + j``.
            rows: rows of ``x`` scored per pair of matrix products (two reused buffers).
        """
        w1 = weights_like(self.keys1, self._cast1, x.dtype)
        w2 = weights_like(self.keys2, self._cast2, x.dtype)
        productkey_topk_rows(x, w1, w2, k, out, rows)

    @classmethod
    def hash_cost(cls, n, dim=None, **params):
        """``s = sqrt(n)``: ``s`` sub-keys per half, each half ``d/2`` long."""
        cls.check_params(n, **params)
        return float(math.isqrt(n))

    @classmethod
    def check_params(cls, n, **params):
        """Validate ``n = s^2`` with ``s >= 2``; no other parameters."""
        if params:
            raise ValueError(f"unknown parameter(s) for productkey: {', '.join(params)}")
        check_square(n)
        return {"n": int(n)}

    @property
    def s(self) -> int:
        """Sub-keys per half, ``sqrt(n)``."""
        return math.isqrt(self.n)

    @classmethod
    def threads_pay_in_full_mode(cls, params):  # noqa: D102 - see HashFamily
        return True

    def _draw(self, rng):
        if self.d % 2:
            raise ValueError(
                f"d (dimension) must be even for productkey (two halves), got {self.d}"
            )
        half = self.d // 2
        self.keys1 = rng.standard_normal((self.s, half))
        self.keys2 = rng.standard_normal((self.s, half))
        self._cast1, self._cast2 = {}, {}

    def half_scores(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sub-key scores ``x1 @ K1.T`` and ``x2 @ K2.T`` (``[m, s]`` each, ``x``'s dtype).

        float32 queries are scored (and their top-k sums added) in float32, as PKM's torch
        code does; float64 ones in float64.
        """
        h = self.d // 2
        s1 = np.ascontiguousarray(x[:, :h] @ weights_like(self.keys1, self._cast1, x.dtype).T)
        s2 = np.ascontiguousarray(x[:, h:] @ weights_like(self.keys2, self._cast2, x.dtype).T)
        return s1, s2

    def _hash(self, x):
        h = self.d // 2
        i = tiled_argmax(
            np.ascontiguousarray(x[:, :h]), weights_like(self.keys1, self._cast1, x.dtype)
        )
        j = tiled_argmax(
            np.ascontiguousarray(x[:, h:]), weights_like(self.keys2, self._cast2, x.dtype)
        )
        out = np.empty(x.shape[0], dtype=np.int64)
        combine_slots(i, j, self.s, out)
        return out

    @classmethod
    def sample_reduced(cls, n, cosines, rng, **params):
        """Two independent Voronoi draws with ``s = sqrt(n)`` pairs, at the half-cosines.

        Args:
            n: slots, ``s^2``.
            cosines: float64[B] (both halves at that cosine) or float64[B, 2] (the two
                half-cosines of each trial).
            rng: the block's generator.
            **params: none.

        Returns:
            bool[B]: both halves' argmaxes agree.
        """
        n = cls.check_params(n, **params)["n"]
        s = math.isqrt(n)
        check_reduced(s, cls.name)
        cos = np.asarray(cosines, dtype=np.float64)
        if cos.ndim == 1:
            cos = np.stack([cos, cos], axis=1)
        if cos.ndim != 2 or cos.shape[1] != 2:
            raise ValueError(f"cosines must have shape (B,) or (B, 2), got {cos.shape}")
        first = reduced_sample(s, np.ascontiguousarray(cos[:, 0]), rng, signed=False)
        second = reduced_sample(s, np.ascontiguousarray(cos[:, 1]), rng, signed=False)
        return first & second
