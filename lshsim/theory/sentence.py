"""Collision probability of every family on the sentence model at overlap ``f``.

:func:`collision_probability` (cached) averages the exact ``P(a)`` of a cosine family over the
sentence model's law of the cosine (:func:`lshsim.sentences.sentence_cosines`), and is exact
for minhash, tokenid and ngram, whose rate depends on the tokens only.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

import numpy as np

from lshsim._validate import check_buckets, check_float, check_int
from lshsim.hashing import FAMILIES, get_family
from lshsim.sentences import check_sentence_model, sentence_cosines
from lshsim.theory.closed_forms import minhash_probability, tokenid_probability
from lshsim.theory.families import _cosine_family, _log_p_table
from lshsim.theory.ngram import ngram_probability

__all__ = ["SENTENCE_COSINES", "SentenceProbability", "collision_probability"]


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


@functools.lru_cache(maxsize=256)
def _sentence_probability(family, n, overlap, dim, length, vocab, cosines, seed, params_items):
    params = dict(params_items)
    s = check_sentence_model(overlap, length, vocab, dim)
    if family == "tokenid":
        get_family("tokenid").check_params(n, **params)
        p = tokenid_probability(s, length, n=n, vocab=vocab)
        se, count, cos_mean, cos_sd = 0.0, 0, math.nan, math.nan
    elif family == "ngram":
        p = get_family("ngram").check_params(n, **params)
        p = ngram_probability(p["ngram"], n, overlap, length, heads=p["heads"])
        se, count, cos_mean, cos_sd = 0.0, 0, math.nan, math.nan
    elif family == "minhash":
        p = minhash_probability(
            n, s, length, k=get_family("minhash").check_params(n, **params)["k"]
        )
        se, count, cos_mean, cos_sd = 0.0, 0, math.nan, math.nan
    else:
        _cosine_family(family, n, params)
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        cos = sentence_cosines(cosines, overlap, length=length, dim=dim, rng=rng)
        if family == "simhash":
            pv = (1.0 - np.arccos(cos) / np.pi) ** (n.bit_length() - 1)
        else:
            pv = np.exp(_log_p_table(family, n, cos, params))
        p = float(pv.mean())
        se = float(pv.std(ddof=1) / math.sqrt(cosines)) if cosines > 1 else math.inf
        count, cos_mean, cos_sd = cosines, float(cos.mean()), float(cos.std())
    r = -math.log(p) / math.log(n) if p > 0 else math.inf
    return SentenceProbability(
        family, n, overlap, p, se, r, count, cos_mean, cos_sd, dim, length, vocab, seed, params
    )


def collision_probability(
    family: str,
    n: int,
    *,
    overlap: float,
    dim: int = 64,
    length: int = 32,
    vocab: int = 32128,
    cosines: int = SENTENCE_COSINES,
    seed: int = 0,
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
    (ngram: under the ideal-hash model, :mod:`lshsim.theory.ngram`).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
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
