"""The paper's two theorems, made precise and checkable.

* :mod:`~lshsim.theorems.claims`: the registry of executable claims (``CLAIMS``, built from
  the part modules in ``PARTS``) and ``check``, which evaluates them (``lshsim check``), with
  ``mutate=True`` also under each claim's named mutation, where the check must fail;
* :mod:`~lshsim.theorems.claim_types`: the records :class:`Claim`, :class:`Mutation`,
  :class:`Verdict`;
* :mod:`~lshsim.theorems.theorem1`: Theorem 1 (lookup functions as LSH variants) as 14 claims
  with stable ids, their checks and mutations; property tests in
  ``tests/theorems/test_claims.py``, statements and proofs in ``proofs/theorem1.md``;
* :mod:`~lshsim.theorems.strategies`: Hypothesis strategies drawing only parameters the
  library accepts (also importable as :mod:`lshsim.strategies`);
* :mod:`~lshsim.theorems.theorem2`: Theorem 2 (embedding lookups at upper layers): task,
  students, exact constructions, width bounds and the trained-width sweep; see
  ``proofs/theorem2.md``.

Theorem 1's claims build on the exact theory of :mod:`lshsim.theory` and the estimators of
:mod:`lshsim.estimate`.
"""
