"""Collision probability of every family on the sentence model at overlap ``f``.

:func:`collision_probability` (cached) averages the exact ``P(a)`` of a cosine family over the
sentence model's law of the cosine (:func:`lshsim.sentences.sentence_cosines`), and is exact
for minhash, tokenid and ngram, whose rate depends on the tokens only. Product keys average
``P_vor(sqrt n, A1) P_vor(sqrt n, A2)`` over the exact joint law of the two half-cosines
(:func:`lshsim.sentence_halves.half_cosines`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

from lshsim._validate import check_buckets, check_float, check_int
from lshsim.hashing import get_family
from lshsim.sentences import check_sentence_model

__all__ = ["SENTENCE_COSINES", "SENTENCE_DEFAULTS", "SentenceProbability", "collision_probability"]


@dataclass(frozen=True)
class SentenceProbability:
    """Collision probability of a family on sentence pairs with overlap ``f``.

    Attributes:
        probability: ``E[P(cos)]`` over the sentence model's cosine law (exact for minhash
            and tokenid, whose rate depends on the tokens only).
        std_error: standard error of the average over the ``cosines`` sampled cosines
            (0 when exact).
        rho: ``-log(probability) / log n``.
        cosines: number of cosines averaged over (0 when exact).
        cosine_mean, cosine_sd: mean and standard deviation of those cosines.
        family, n, overlap, dim, length, vocab, seed, params: the inputs.
    """

    family: str
    n: int
    overlap: float
    probability: float
    std_error: float
    rho: float
    cosines: int
    cosine_mean: float
    cosine_sd: float
    dim: int
    length: int
    vocab: int
    seed: int
    params: dict

    def to_dict(self) -> dict:
        """A JSON-ready dict of all fields."""
        return asdict(self)


#: cosines sampled by default for the sentence-model average
SENTENCE_COSINES = 2**16
#: The sentence model's defaults (``collision_probability`` and ``theory --topk --overlap``).
SENTENCE_DEFAULTS = {
    "dim": 64,
    "length": 32,
    "vocab": 32128,
    "cosines": SENTENCE_COSINES,
    "seed": 0,
}


@functools.lru_cache(maxsize=256)
def _sentence_probability(family, n, overlap, dim, length, vocab, cosines, seed, params_items):
    params = dict(params_items)
    check_sentence_model(overlap, length, vocab, dim)
    cls = get_family(family)
    cls.check_law("overlap_law", n, **params)
    law = cls.overlap_law(
        n,
        overlap,
        dim=dim,
        length=length,
        vocab=vocab,
        cosines=cosines,
        seed=seed,
        **params,
    )
    p = law.probability
    r = -math.log(p) / math.log(n) if p > 0 else math.inf
    return SentenceProbability(
        family,
        n,
        overlap,
        p,
        law.std_error,
        r,
        law.cosines,
        law.cosine_mean,
        law.cosine_sd,
        dim,
        length,
        vocab,
        seed,
        params,
    )


def collision_probability(
    family: str,
    n: int,
    *,
    overlap: float,
    dim: int = SENTENCE_DEFAULTS["dim"],
    length: int = SENTENCE_DEFAULTS["length"],
    vocab: int = SENTENCE_DEFAULTS["vocab"],
    cosines: int = SENTENCE_COSINES,
    seed: int = SENTENCE_DEFAULTS["seed"],
    **params,
) -> SentenceProbability:
    """Collision probability of ``family`` on the sentence model at overlap ``f``.

    The exact target of ``lshsim simulate --overlap``. For the cosine families it is the
    exact ``P(a)`` averaged over the law of the pair's cosine ``a``: ``cosines`` draws from
    the exact sampler :func:`lshsim.sentences.sentence_cosines` (seeded, so the same
    arguments give the same number), with the standard error of that average reported.
    Voronoi and cross-polytope evaluate ``log P`` through a 48-node Chebyshev interpolant
    over the sampled range, checked against direct quadrature to 1e-7. For minhash
    (Jaccard of the token sets), tokenid and ngram (per-position rates) the value is exact
    (ngram: under the ideal-hash model, :mod:`lshsim.laws.ngram`).
    """
    get_family(family)
    n = check_buckets(n)
    overlap = check_float("overlap (f)", overlap, 0.0, 1.0)
    dim = check_int("dim (d)", dim, 2)
    length = check_int("length (l)", length, 1)
    vocab = check_int("vocab (V)", vocab, 1)
    cosines = check_int("cosines", cosines, 2, 2**24)
    seed = check_int("seed", seed, 0)
    return _sentence_probability(
        family, n, overlap, dim, length, vocab, cosines, seed, tuple(sorted(params.items()))
    )
