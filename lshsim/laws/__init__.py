"""Exact laws as pure functions of numbers: the numerics under every family's theory.

Nothing here knows a family by name: each :class:`lshsim.hashing.HashFamily` calls the laws it
has (validating its own parameters first), and :mod:`lshsim.theory` reaches them through the
family objects. The package sits below :mod:`lshsim.hashing` in the import graph.

* :mod:`~lshsim.laws.closed_forms`: p-stable with the radix map (and Datar et al.'s unmapped
  form), min-hash (Jaccard), Token-ID;
* :mod:`~lshsim.laws.spherical`: Voronoi and cross-polytope (Gaussian projection) by 2-D
  quadrature, accurate to a relative ``1e-9`` by default;
* :mod:`~lshsim.laws.ngram`: hashed n-grams on the sentence model (and the heads' moduli);
* :mod:`~lshsim.laws.topk`: the exact top-k overlap of Voronoi (softmax top-k);
* :mod:`~lshsim.laws.topk_reduced`: exact O(k) samplers of the top-k overlap (Voronoi, product
  keys) and PKM's numerical top-k law; :mod:`~lshsim.laws.topk_sentences`: their sentence
  averages;
* :mod:`~lshsim.laws.tables`: a checked Chebyshev table of ``log P`` in the angle, for laws
  evaluated at many cosines.
"""
