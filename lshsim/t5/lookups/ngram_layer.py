"""Hashed n-gram tables (``lookup="ngram"``; DeepSeek's Engram): the Flax layer.

The bucket of position ``t`` in head ``j`` is :class:`lshsim.hashing.NGram`'s hash of the
``N`` token ids ending at ``t`` (Engram's XOR of token x odd multiplier, a salt, then
MurmurHash3's ``fmix32``, modulo ``m_j``: ``m`` for one head, else the ``H`` smallest
primes ``>= m``), the function drawn exactly as the NumPy family draws it from
``SeedSequence([lookup_seed, stack, layer])`` (:func:`ngram_family`), so the ids are the
family's. Ids before the start read as 0 (the pad id); the decoder's layers see the
decoder *input* ids, shifted right, so its n-grams are causal. The arithmetic is 32-bit
unsigned, so the jitted step (no x64) and the Numba kernel agree. The ``H`` heads index
one table of ``sum_j m_j`` rows (head ``j``'s rows after those of heads ``< j``); the
heads' rows (or rank-``r`` experts) are **summed** (Engram concatenates narrower rows
and projects them; summing full-width rows keeps the output at width ``d`` without a
projection).
The sum ``e`` is read through a plain form of Engram's gate ``sigmoid(RMSNorm(x) .
RMSNorm(e) / sqrt(d))`` (key = value = ``e``). Left out of Engram here: its compressing map,
its shared mix and orders 2..N together, its key/value projections, the signed square root
it applies before the sigmoid, and its short causal convolution; ``lookup="engram"``
(:mod:`lshsim.t5.lookups.engram_layer`) has them all.

References:
    DeepSeek 2026, "Engram" (arXiv 2601.07372, deepseek-ai/Engram).
"""

from __future__ import annotations

import functools
import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lshsim.t5.lookups.tables import param, rms, values


@functools.lru_cache(maxsize=256)
def ngram_family(config, stack: int, layer: int):
    """The layer's :class:`lshsim.hashing.NGram`, from ``SeedSequence([seed, stack, layer])``."""
    from lshsim.hashing import make_family

    seed = np.random.SeedSequence([config.lookup_seed, stack, layer])
    return make_family(
        "ngram", config.num_buckets, 1, seed, ngram=config.ngram, heads=config.lookup_heads
    )


def ngram_buckets(tokens, multipliers, salts, moduli) -> jax.Array:
    """Jittable buckets ``int32 [B, L, H]`` of ``tokens [B, L]`` (left-padded with id 0).

    ``multipliers [H, N]``, ``salts [H]`` (a layer's draw, traced in a scanned stack) and
    ``moduli [H]``: an :class:`lshsim.hashing.NGram`'s.
    """
    from lshsim.hashing.ngram import ngram_hash

    return ngram_hash(tokens, multipliers, salts, moduli, xp=jnp, pad_id=0).reshape(
        *tokens.shape, len(moduli)
    )


def ngram_layer(module, x2, token_ids, cfg, dt, draw):
    """``(gated out [N, d], head 0's bucket [N], buckets [N, H], {})`` of ``token_ids [B, L]``.

    ``draw``: the layer's hash draw (:meth:`lshsim.t5.lookups.ngram.NGram.layer_constants`).
    """
    from lshsim.hashing.ngram import ngram_moduli

    primes = [int(m) for m in ngram_moduli(cfg.num_buckets, cfg.lookup_heads)]
    buckets = ngram_buckets(token_ids, draw["multipliers"], draw["salts"], primes)
    buckets = buckets.reshape(-1, len(primes))  # [N, H]
    offsets = np.concatenate([[0], np.cumsum(primes)[:-1]]).astype(np.int32)
    rows = buckets + jnp.asarray(offsets)
    ones = jnp.ones(rows.shape, jnp.float32)
    e = values(module, x2, rows, ones, int(sum(primes)), cfg.expert_rank, dt)
    d = x2.shape[-1]
    sx = param(module, "gate_query_scale", nn.initializers.ones, (d,), ("embed",))
    se = param(module, "gate_key_scale", nn.initializers.ones, (d,), ("embed",))
    eps = cfg.layer_norm_eps
    logit = jnp.sum(rms(x2, sx, eps) * rms(e, se, eps), axis=-1) / math.sqrt(d)
    return e * jax.nn.sigmoid(logit)[:, None].astype(dt), buckets[:, 0], buckets, {}
