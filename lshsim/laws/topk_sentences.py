"""The sentence model's average of the top-k overlap laws (Voronoi exact, product keys numerical).

On sentence pairs at overlap ``f`` the cosine ``a`` of the two representations is random
(:func:`lshsim.sentences.sentence_cosines`; product keys: the two half-cosines,
:func:`lshsim.sentence_halves.half_cosines`), so the top-k overlap on sentences is
``E_a[O_k(n, a)]``:

* **Voronoi**: the exact law ``O_k(n, a)`` (:func:`lshsim.laws.topk.voronoi_topk_overlap`)
  through the checked Chebyshev table of its log in the angle (:mod:`lshsim.laws.tables`,
  about 56 quadratures for any number of cosines), averaged over ``cosines`` exact draws;
  the standard error is that of the average over the draws.
* **Product keys** (PKM's rule): no exact law at one cosine either, so each of ``trials``
  draws takes its own pair of half-cosines and one exact reduced draw of the overlap at them
  (:func:`lshsim.laws.topk_reduced.productkey_topk_reduced`); the mean is the sentence
  average directly, with its standard error.

References:
    The paper, Sec. 3 (sentence model); Andoni et al. 2015; Lample et al. 2019.
"""

from __future__ import annotations

import math

import numpy as np

from lshsim.laws.tables import log_p_table
from lshsim.laws.topk import voronoi_topk_overlap
from lshsim.laws.topk_reduced import productkey_topk_reduced
from lshsim.sentence_halves import half_cosines
from lshsim.sentences import sentence_cosines

__all__ = ["SENTENCE_TOPK_DRAWS", "productkey_topk_on_sentences", "voronoi_topk_on_sentences"]

#: Cosines (Voronoi) or trials (product keys) of the sentence average by default.
SENTENCE_TOPK_DRAWS = 2**15


def voronoi_topk_on_sentences(
    n: int,
    k: int,
    overlap: float,
    *,
    dim: int,
    length: int,
    cosines: int = SENTENCE_TOPK_DRAWS,
    seed: int = 0,
) -> tuple[float, float]:
    """``E_a[O_k(n, a)]`` of Voronoi on sentence pairs at overlap ``f``, and its standard error.

    Args:
        n: centres.
        k: ``1 <= k <= 16`` (the exact law's range), ``k <= n``.
        overlap: ``f``.
        dim: ``d``.
        length: ``l``.
        cosines: draws of the pair cosine, >= 2.
        seed: their seed.

    Returns:
        ``(mean overlap fraction, standard error over the cosine draws)``.
    """
    rng = np.random.default_rng(seed)
    cos = sentence_cosines(cosines, overlap, length=length, dim=dim, rng=rng)

    def direct(a: float) -> float:
        return math.log(voronoi_topk_overlap(n, k, a))

    values = np.exp(log_p_table(direct, cos, f"the voronoi top-{k} overlap at n={n}"))
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(cosines))


def productkey_topk_on_sentences(
    n: int,
    k: int,
    overlap: float,
    *,
    dim: int,
    length: int,
    trials: int = SENTENCE_TOPK_DRAWS,
    seed: int = 0,
) -> tuple[float, float]:
    """PKM's top-k overlap of product keys on sentence pairs at overlap ``f``, numerically.

    Args:
        n: slots ``s^2``.
        k: ``1 <= k <= s``.
        overlap: ``f``.
        dim: ``d`` (even, >= 4).
        length: ``l``.
        trials: draws (each its own half-cosines and overlap), >= 2.
        seed: their seed.

    Returns:
        ``(mean overlap fraction, standard error)``.
    """
    rng = np.random.default_rng(seed)
    cos = half_cosines(trials, overlap, length=length, dim=dim, rng=rng)
    c = productkey_topk_reduced(n, k, cos[:, 0], cos[:, 1], rng) / k
    return float(c.mean()), float(c.std(ddof=1) / math.sqrt(trials))
