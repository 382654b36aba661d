"""Code shared by the tests and the benchmarks, kept out of ``tests/`` so both can import it.

:mod:`lshsim.testing.reference` holds slow, obvious reference implementations of every hash
family (Python loops and integers, NumPy ``argmax``, a Walsh-Hadamard matrix) and a Bartlett
sampler of the sentence-pair cosine: the kernel tests compare the Numba kernels against them,
and :mod:`lshsim.bench` checks its contenders with them before timing. The library itself
(hashing, theory, t5, ...) does not import this package.
"""
