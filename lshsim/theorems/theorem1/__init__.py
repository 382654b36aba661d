"""Theorem 1 (lookup functions as LSH variants) as 14 executable claims, with their mutations.

One module per idea:

* :mod:`~lshsim.theorems.theorem1.statements`: ``CLAIMS``, the 14 :class:`Claim` records
  (id, the paper's wording, the precise statement, check, mutation, property test);
* :mod:`~lshsim.theorems.theorem1.routing`: checks of parts a, b, e (softmax = Voronoi,
  min-hash and Token-ID, by Monte Carlo of the library's hash families);
* :mod:`~lshsim.theorems.theorem1.rates`: checks of parts c, d (exponents of hyperplane and
  spherical LSH, from the exact theory);
* :mod:`~lshsim.theorems.theorem1.ordering`: checks of part f, :func:`tie_overlap` and
  :func:`crossover`;
* :mod:`~lshsim.theorems.theorem1.sentence`: check of part g (the sentence model's moments,
  by control variates);
* :mod:`~lshsim.theorems.theorem1.mutations`: ``MUTATIONS``, one broken library function per
  claim, under which its check must fail (``lshsim check --mutate``).

The registry of every theorem's claims is :mod:`lshsim.theorems.claims`; statements, proofs
and grids are in ``proofs/theorem1.md``.
"""

from __future__ import annotations

from lshsim.theorems.theorem1.ordering import TIE_CONSTANT, crossover, tie_overlap
from lshsim.theorems.theorem1.statements import CLAIMS

__all__ = ["CLAIMS", "TIE_CONSTANT", "crossover", "tie_overlap"]
