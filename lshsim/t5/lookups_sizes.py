"""JAX-free parts of the lookups beyond the paper: n-gram table sizes, hashes, parameter counts.

:mod:`lshsim.t5.lookups_beyond` (the model) and :mod:`lshsim.t5.budget` (closed-form counts,
which must not import JAX) share these; the probe uses :func:`ngram_buckets_numpy` as the
model's NumPy twin.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from lshsim.t5.configs import T5Config

#: The lookups of :mod:`lshsim.t5.lookups_beyond`.
BEYOND_LOOKUPS = ("productkey", "ngram")


def _is_prime(p: int) -> bool:
    if p < 2:
        return False
    return all(p % f for f in range(2, math.isqrt(p) + 1))


@functools.lru_cache(maxsize=64)
def head_primes(buckets: int, heads: int) -> tuple[int, ...]:
    """The ``heads`` smallest primes ``>= buckets``: the n-gram heads' table sizes ``m_j``."""
    out, p = [], max(int(buckets), 2)
    while len(out) < heads:
        if _is_prime(p):
            out.append(p)
        p += 1
    return tuple(out)


def ngram_multipliers(config: T5Config, stack: int, layer: int) -> np.ndarray:
    """A layer's odd multipliers ``uint32 [H, N]``, from ``SeedSequence([seed, stack, layer])``."""
    rng = np.random.default_rng(np.random.SeedSequence([config.lookup_seed, stack, layer]))
    half = rng.integers(0, 2**31, size=(config.lookup_heads, config.ngram), dtype=np.uint64)
    return (2 * half + 1).astype(np.uint32)


def ngram_buckets_numpy(tokens: np.ndarray, mults: np.ndarray, primes) -> np.ndarray:
    """NumPy n-gram buckets ``int64 [B, L, H]`` of ``tokens [B, L]`` (no offsets).

    The same arithmetic as the jitted step: unsigned 32-bit products, XOR, modulo ``m_j``.
    """
    tokens = np.asarray(tokens).astype(np.uint32)
    heads, n = mults.shape
    h = np.zeros((*tokens.shape, heads), np.uint32)
    for i in range(n):
        shifted = np.zeros_like(tokens)
        shifted[:, i:] = tokens[:, : tokens.shape[1] - i]
        h ^= shifted[..., None] * mults[None, None, :, i]
    return (h % np.asarray(primes, np.uint32)).astype(np.int64)


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
    return values * sum(head_primes(cfg.num_buckets, cfg.lookup_heads)) + 2 * d
