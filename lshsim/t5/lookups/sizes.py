"""The n-gram lookup's table sizes, in plain Python (no JAX, no Numba).

The lookup (:mod:`lshsim.t5.lookups.ngram`: closed-form parameter counts for
:mod:`lshsim.t5.budget`), its layer and the probe share these.
"""

from __future__ import annotations

import functools
import math


def _is_prime(p: int) -> bool:
    if p < 2:
        return False
    return all(p % f for f in range(2, math.isqrt(p) + 1))


@functools.lru_cache(maxsize=64)
def ngram_table_sizes(buckets: int, heads: int) -> tuple[int, ...]:
    """The n-gram heads' table sizes ``m_j``.

    ``(m,)`` for one head, else the ``H`` smallest primes ``>= m``: the rule of
    :func:`lshsim.hashing.ngram.ngram_moduli` (tested equal), without importing Numba.
    """
    if heads == 1:
        return (int(buckets),)
    out, p = [], max(int(buckets), 2)
    while len(out) < heads:
        if _is_prime(p):
            out.append(p)
        p += 1
    return tuple(out)
