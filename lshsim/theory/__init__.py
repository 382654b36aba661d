"""Exact collision probabilities of every family, their exponents and asymptotic forms.

Small pure functions shared by proofs, tests, experiments and plots (DESIGN §4), one module
per idea:

* :mod:`~lshsim.laws.closed_forms`: p-stable with the radix mapping (and Datar et al.'s
  unmapped form), min-hash (Jaccard), Token-ID;
* :mod:`~lshsim.laws.spherical`: Voronoi and cross-polytope (Gaussian projection) by 2-D
  quadrature, accurate to a relative ``1e-9`` by default;
* :mod:`~lshsim.theory.families`: one entry point per cosine family and question,
  :func:`probability` / :func:`log_probability` at a cosine (SimHash's closed form included),
  :func:`probabilities` at an array of cosines, :func:`law_or_none` for an optional law;
* :mod:`~lshsim.theory.rates`: :func:`rho` ``= -log P / log n``, the LSH exponent
  :func:`rho_lsh` ``= ln(1/p1) / ln(1/p2)`` at a far cosine, :func:`limit_rho`
  (``n -> infinity``), :func:`asymptotic_probability` (Andoni et al. 2015 and a sharper
  Laplace form);
* :mod:`~lshsim.theory.amplification`: ``k`` concatenated hashes and ``L`` tables,
  ``1 - (1 - p^k)^L``, the query cost in inner products per family, and the best family at
  equal query cost;
* :mod:`~lshsim.laws.ngram`: hashed n-grams on the sentence model (:func:`ngram_probability`,
  the heads' law :func:`ngram_heads_law`, the ``f^N`` limit);
* :mod:`~lshsim.theory.sentence`: :func:`collision_probability` for the sentence model at
  overlap ``f``;
* :mod:`~lshsim.theory.productkey`: product keys, ``P_vor(sqrt n, a1) P_vor(sqrt n, a2)``;
  :mod:`~lshsim.laws.topk`: the exact top-k overlap of Voronoi (softmax top-k).

Every public name is re-exported here, so ``from lshsim import theory; theory.probability``
works as before the split.

References:
    M. Charikar, STOC 2002 (SimHash). M. Datar et al., SoCG 2004 (p-stable LSH).
    A. Broder, 1997 (min-hash). A. Andoni et al., "Practical and optimal LSH for angular
    distance", NeurIPS 2015 (spherical and cross-polytope asymptotics).
"""

from __future__ import annotations

from lshsim.laws.closed_forms import (
    datar_probability,
    jaccard,
    pstable_direction_probability,
    tokenid_probability,
)
from lshsim.laws.ngram import (
    ngram_anywhere_probability,
    ngram_heads_law,
    ngram_limit_bounds,
    ngram_probability,
    ngram_shared_probability,
    ngram_summary,
)
from lshsim.laws.spherical import QuadratureError
from lshsim.laws.topk import voronoi_topk_overlap
from lshsim.theory.amplification import (
    Scheme,
    amplified,
    best_family_grid,
    best_scheme,
    hash_cost,
    log_miss,
    query_cost,
)
from lshsim.theory.families import (
    COSINE_FAMILIES,
    cosine_family,
    crosspolytope_probability,
    law_or_none,
    log_probability,
    minhash_probability,
    probabilities,
    probability,
    pstable_probability,
    simhash_probability,
    topk_overlap,
    voronoi_probability,
)
from lshsim.theory.productkey import (
    productkey_log_probability,
    productkey_probability,
    productkey_rho,
)
from lshsim.theory.rates import asymptotic_probability, limit_rho, rho, rho_lsh
from lshsim.theory.sentence import SENTENCE_COSINES, SentenceProbability, collision_probability

__all__ = [
    "COSINE_FAMILIES",
    "SENTENCE_COSINES",
    "QuadratureError",
    "Scheme",
    "SentenceProbability",
    "amplified",
    "asymptotic_probability",
    "best_family_grid",
    "best_scheme",
    "collision_probability",
    "cosine_family",
    "crosspolytope_probability",
    "datar_probability",
    "hash_cost",
    "jaccard",
    "law_or_none",
    "limit_rho",
    "log_miss",
    "log_probability",
    "minhash_probability",
    "ngram_anywhere_probability",
    "ngram_heads_law",
    "ngram_limit_bounds",
    "ngram_probability",
    "ngram_shared_probability",
    "ngram_summary",
    "probabilities",
    "probability",
    "productkey_log_probability",
    "productkey_probability",
    "productkey_rho",
    "pstable_direction_probability",
    "pstable_probability",
    "query_cost",
    "rho",
    "rho_lsh",
    "simhash_probability",
    "tokenid_probability",
    "topk_overlap",
    "voronoi_probability",
    "voronoi_topk_overlap",
]
