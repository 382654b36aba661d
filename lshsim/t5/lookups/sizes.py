"""JAX-free sizes of the product-key and n-gram lookups: n-gram tables, parameter counts.

The layers (:mod:`lshsim.t5.lookups.productkey_layer`, :mod:`~lshsim.t5.lookups.ngram_layer`),
:mod:`lshsim.t5.budget` (closed-form counts, which must import neither JAX nor Numba) and the
probe share these.
"""

from __future__ import annotations

import functools
import math

from lshsim.t5.configs import T5Config

#: The lookups whose layers read slots (:func:`lshsim.t5.memory.slot_lookup`).
BEYOND_LOOKUPS = ("productkey", "ngram")


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


def expert_params(cfg: T5Config) -> int:
    """Parameters of one layer's product-key or n-gram expert (closed form).

    Product keys: ``d h d`` (query) + ``h d`` (its RMSNorm scale) + ``h 2 s (d/2)`` (sub-keys)
    + ``max(2r, 1) n d`` (values). N-grams: ``max(2r, 1) (sum_j m_j) d`` + ``2 d`` (gate norms).
    """
    d, r = cfg.d_model, cfg.expert_rank
    values = max(2 * r, 1) * d
    if cfg.lookup == "productkey":
        n, h = cfg.num_buckets, cfg.lookup_heads
        return d * h * d + h * d + h * 2 * math.isqrt(n) * (d // 2) + values * n
    return values * sum(ngram_table_sizes(cfg.num_buckets, cfg.lookup_heads)) + 2 * d
