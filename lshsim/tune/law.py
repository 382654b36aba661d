"""The amplified law of a ``(k, L)`` scheme from one family's law given the pair.

A table concatenates ``k`` independently drawn functions of one family and a scheme has ``L``
independent tables. Given the pair, each function collides independently with the pair's
conditional probability ``p``, so the pair meets in some table with probability
``1 - (1 - p^k)^L``. The family object gives the law of ``p`` at a similarity as atoms
(:meth:`lshsim.hashing.HashFamily.amplification_law`: one atom ``P(a)`` at a cosine, ``J`` at
a Jaccard index, atoms at 1 and at a spurious collision's chance for the sentence-model
families), and the amplified law is the atoms' weighted sum: exact, with no independence
assumed between pairs.

References:
    P. Indyk, R. Motwani, STOC 1998; A. Rajaraman, J. Ullman, "Mining of Massive Datasets",
    ch. 3 (the banding technique: ``b = L`` bands of ``r = k`` rows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from lshsim._validate import check_int
from lshsim.hashing import SIMILARITIES, HashFamily, get_family

__all__ = [
    "MAX_CONCAT",
    "MAX_TABLES",
    "Amplifier",
    "amplified_law",
    "banded_areas",
    "make_amplifier",
]

#: The largest ``k`` and ``L`` considered (``L``: the miss probability's log stays exact).
MAX_CONCAT = 4096
MAX_TABLES = 2**40


def amplified_law(values: np.ndarray, weights: np.ndarray, concat, tables) -> np.ndarray:
    """``sum_a w_a (1 - (1 - v_a^k)^L)`` at every similarity and every ``(k, L)``.

    Args:
        values: float64[S, A], the atoms of one function's conditional collision probability.
        weights: float64[S, A], their probabilities (rows sum to 1).
        concat: int array ``k`` (any shape ``G``, broadcast with ``tables``).
        tables: int array ``L``.

    Returns:
        ``float64[S, *G]``: the probability that the pair meets in some table, computed as
        ``-expm1(L log1p(-v^k))`` (no cancellation for small ``v^k``).
    """
    k, big_l = np.broadcast_arrays(np.asarray(concat), np.asarray(tables))
    extra = (1,) * k.ndim
    v = values.reshape(values.shape + extra)
    w = weights.reshape(weights.shape + extra)
    with np.errstate(divide="ignore", under="ignore"):
        miss = big_l * np.log1p(-(v**k))  # v = 1: -inf, the pair always meets
    return (w * -np.expm1(miss)).sum(axis=1)


def banded_areas(threshold: float, concat: np.ndarray, tables: np.ndarray):
    """``int_0^t P ds`` and ``int_t^1 (1 - P) ds`` for ``P = 1 - (1 - s^k)^L``, in closed form.

    With ``u = s^k`` and ``1 - (1 - u)^L = L int_0^u (1 - v)^(L-1) dv``, swapping the order:

        int_0^t P ds = t P(t) - L B(t^k; 1 + 1/k, L),
        int_t^1 (1 - P) ds = (1/k) B(1/k, L + 1) (1 - I_{t^k}(1/k, L + 1)),

    ``B(x; a, b)`` the incomplete beta function and ``I`` its regularised form
    (:func:`scipy.special.betainc`). These are datasketch's two integrals
    (``datasketch/lsh.py``), vectorised. Accuracy (measured against rational arithmetic in
    ``tests/tune/test_tune.py``): the first to ``1e-10`` relative (``P`` is concave in
    ``s^k``, so the area is at least ``t P(t) / (k + 1)`` and the difference loses at most
    ``log10(k + 1)`` digits); the second to ``1e-15`` absolute (``1 - I`` cancels where the
    area is below ``1e-6``, which no objective can see). scipy's complement ``betaincc`` keeps
    full relative accuracy there but costs 20x more; the symmetric ``I_{1 - t^k}(L + 1, 1/k)``
    is fast but wrong once ``t^k`` is below rounding (``1 - t^k`` rounds to 1, while
    ``(t^k)^(1/k) = t`` is not small).

    Args:
        threshold: ``t`` in ``[0, 1]``.
        concat: int ``k >= 1`` per scheme.
        tables: int ``L >= 1`` per scheme (same shape).

    Returns:
        ``(below, above)``: the two areas per scheme.
    """
    from scipy.special import beta, betainc

    k = np.asarray(concat, dtype=np.float64)
    big_l = np.asarray(tables, dtype=np.float64)
    x = threshold**k
    with np.errstate(divide="ignore"):
        p_t = -np.expm1(big_l * np.log1p(-x)) if threshold < 1 else np.ones_like(k)
    a = 1.0 + 1.0 / k
    below = threshold * p_t - big_l * beta(a, big_l) * betainc(a, big_l, x)
    above = beta(1.0 / k, big_l + 1.0) / k * (1.0 - betainc(1.0 / k, big_l + 1.0, x))
    return np.maximum(below, 0.0), np.maximum(above, 0.0)


@dataclass(frozen=True)
class Amplifier:
    """One family at fixed parameters, as the tuner sees it: similarity -> atoms, and a cost.

    Attributes:
        family: the family's name.
        n: buckets (None for min-hash, whose bands are keyed by their values).
        params: the family's parameters.
        length, vocab: the sentence model's ``l`` and ``V`` (the overlap families).
        cost: one function's cost: :meth:`HashFamily.hash_cost` in inner products of length
            ``d`` where the family counts one, else 1 (a function, e.g. one min-hash value).
        cost_unit: that unit, in words.
    """

    family: str
    n: int | None
    params: dict = field(default_factory=dict)
    length: int = 32
    vocab: int = 32128
    cost: float = 1.0
    cost_unit: str = "functions"

    @property
    def cls(self) -> type[HashFamily]:
        """The family object."""
        return get_family(self.family)

    @property
    def similarity(self) -> str:
        """What a pair's similarity is for this family (cosine, jaccard or overlap)."""
        return self.cls.similarity

    @property
    def bounds(self) -> tuple[float, float]:
        """The similarity's range."""
        return SIMILARITIES[self.similarity]

    def atoms(self, similarities) -> tuple[np.ndarray, np.ndarray]:
        """``(values, weights)`` float64[S, A] at each similarity (the family's law)."""
        s = np.atleast_1d(np.asarray(similarities, dtype=np.float64))
        n = 2 if self.n is None else self.n  # min-hash ignores n (its bands are not folded)
        return self.cls.amplification_law(n, s, length=self.length, vocab=self.vocab, **self.params)

    def curve(self, similarities, concat: int, tables: int) -> np.ndarray:
        """The amplified probability ``P_{k,L}(s)`` at each similarity."""
        v, w = self.atoms(similarities)
        return amplified_law(v, w, concat, tables)

    def grid(self) -> np.ndarray | None:
        """The similarities the overlap families take: ``s / l``, ``s = 0..l`` (else None)."""
        if self.similarity != "overlap":
            return None
        return np.arange(self.length + 1) / self.length


def make_amplifier(
    family: str,
    *,
    buckets: int | None = None,
    length: int = 32,
    vocab: int = 32128,
    dim: int | None = None,
    **params,
) -> Amplifier:
    """Check a family for amplification and return its :class:`Amplifier`.

    Args:
        family: a registered family with an amplification law.
        buckets: ``n``; required by every family but min-hash, which refuses it.
        length: the sentence length ``l`` (overlap families).
        vocab: the vocabulary ``V`` (overlap families).
        dim: the input dimension ``d``, where the cost needs it (the hadamard rotation).
        **params: the family's parameters.

    Raises:
        ValueError: unknown family, bad or missing parameters.
        NoLaw: the family has no amplification law (one line, from the family object).
    """
    cls = get_family(family)
    if not cls.has_law("amplification_law"):
        raise cls.no_law("amplification_law")
    length = check_int("length (l)", length, 1, 2**20)
    vocab = check_int("vocab (V)", vocab, 2)
    if cls.similarity == "jaccard":
        if buckets is not None:
            raise ValueError(
                f"buckets: family '{family}' takes none (a band is keyed by its k values)"
            )
        p = cls.check_params(2, **params)
        n = None
    else:
        if buckets is None:
            raise ValueError(f"buckets (n) is required for family '{family}'")
        p = cls.check_params(buckets, **params)
        n = p["n"]
    extra = {key: v for key, v in p.items() if key != "n"}
    amp = Amplifier(family, n, extra, length, vocab)
    amp.atoms(SIMILARITIES[cls.similarity][1])  # the law answers for these params, else one line
    if cls.has_law("hash_cost"):
        cost = float(cls.hash_cost(n, dim, **extra))
        amp = replace(amp, cost=cost, cost_unit="inner products")
    if not math.isfinite(amp.cost) or amp.cost <= 0:
        raise ValueError(f"family '{family}' reports a hash cost of {amp.cost}")
    return amp
