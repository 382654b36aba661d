"""Lookups beyond the paper: product-key memories and hashed n-gram tables (issue 19).

Both are partial experts: :class:`lshsim.t5.memory.PartialExpert` hands a layer to
:func:`apply` when the config's ``lookup`` is one of :data:`BEYOND_LOOKUPS`, and the layer's
output gains what it returns, as for the paper's lookups. Parameter names live under the
layer's ``expert`` scope, so ``lshsim params`` counts them as expert parameters.

Product keys (``lookup="productkey"``; Lample et al. 2019, PEER)
    ``n = s^2`` slots. For each of ``h`` heads (``lookup_heads``): a query
    ``q = RMSNorm(x W_q)`` of width ``d`` (``W_q [d, h, d]``; RMSNorm with a learned scale
    where PKM uses batch norm), split into halves ``q1, q2`` of width ``d/2`` that are scored
    against two sets of ``s`` learned sub-keys (``[h, 2, s, d/2]``, drawn ``N(0, 1)``:
    at initialisation the top-1 slot is a pair of Voronoi cells, the probe's theory). PKM's
    top-k: the ``k`` best scores of each half, then the ``k`` best of the ``k^2`` sums; the
    slot of a sum is ``i1 s + i2``. The selected scores go through a softmax over the ``k``
    and weight the slots' values; the heads' outputs are summed. Values, shared by the heads:
    ``rank 0``: a row ``[n, d]`` per slot (PKM); ``rank r >= 1``: ``V_i relu(U_i^T x)`` with
    ``U_i, V_i in R^{d x r}`` (``r`` hidden neurons per slot; ``r = 1`` is PEER's
    single-neuron expert ``v_i relu(u_i . x)``). With ``k = 1`` the top-1 slot is exactly
    ``(argmax_i q1 . K1_i, argmax_j q2 . K2_j)`` and its weight is 1.

Hashed n-grams (``lookup="ngram"``; DeepSeek's Engram)
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
    The sum ``e`` is read through Engram's gate ``sigmoid(RMSNorm(x) . RMSNorm(e) / sqrt(d))``
    (key = value = ``e``: Engram's key/value projections and causal convolution are left out).

Each layer sows, beside ``layer_input`` and ``bucket`` (product keys: head 0's top-1 slot;
n-grams: head 0's bucket, offset-free), ``slots`` (``[..., h, k]`` selected slots, or
``[..., H]`` buckets) and, for product keys, ``query`` (``[..., h, d]``, the scored vectors).

References:
    Lample et al. 2019, "Large Memory Layers with Product Keys"; He 2024, "Mixture of A
    Million Experts" (PEER); Berges et al. 2024, "Memory Layers at Scale"; DeepSeek 2026,
    "Engram" (arXiv 2601.07372, deepseek-ai/Engram).
"""

from __future__ import annotations

import functools
import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lshsim.t5 import sharded_lookup
from lshsim.t5.configs import T5Config
from lshsim.t5.lookups_sizes import BEYOND_LOOKUPS  # noqa: F401  (re-exported)


def _lecun(in_axis: int, out_axis: int, batch_axis=()):
    return nn.initializers.variance_scaling(
        1.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis
    )


def _param(module: nn.Module, name: str, init, shape: tuple, names: tuple):
    """A float32 parameter annotated with its logical axis names (issue 18's rule table)."""
    return module.param(name, nn.with_logical_partitioning(init, names), shape, jnp.float32)


def _rms(x, scale, eps: float):
    x = x.astype(jnp.float32)
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * scale


@functools.lru_cache(maxsize=256)
def ngram_family(config: T5Config, stack: int, layer: int):
    """The layer's :class:`lshsim.hashing.NGram`, from ``SeedSequence([seed, stack, layer])``."""
    from lshsim.hashing import make_family

    seed = np.random.SeedSequence([config.lookup_seed, stack, layer])
    return make_family(
        "ngram", config.num_buckets, 1, seed, ngram=config.ngram, heads=config.lookup_heads
    )


def ngram_buckets(tokens, family) -> jax.Array:
    """Jittable buckets ``int32 [B, L, H]`` of ``tokens [B, L]`` (left-padded with id 0)."""
    from lshsim.hashing.ngram import ngram_hash

    return ngram_hash(
        tokens, family.multipliers, family.salts, family.moduli, xp=jnp, pad_id=0
    ).reshape(*tokens.shape, len(family.moduli))


def productkey_select(q, sub_keys, k: int):
    """PKM's top-k: ``(scores [N, h, k], slots [N, h, k])`` for queries ``q [N, h, dq]``.

    ``sub_keys [h, 2, s, dq/2]``; the ``k`` best of each half, then the ``k`` best of the
    ``k^2`` sums (descending); slot ``i1 s + i2``.
    """
    s, half = sub_keys.shape[2], sub_keys.shape[3]
    s1 = jnp.einsum("nhd,hsd->nhs", q[..., :half], sub_keys[:, 0])
    s2 = jnp.einsum("nhd,hsd->nhs", q[..., half:], sub_keys[:, 1])
    v1, i1 = jax.lax.top_k(s1, k)
    v2, i2 = jax.lax.top_k(s2, k)
    sums = (v1[..., :, None] + v2[..., None, :]).reshape(*v1.shape[:-1], k * k)
    cand = (i1[..., :, None] * s + i2[..., None, :]).reshape(*i1.shape[:-1], k * k)
    scores, where = jax.lax.top_k(sums, k)
    return scores, jnp.take_along_axis(cand, where, axis=-1).astype(jnp.int32)


def _neuron_experts(x, wi, wo, bucket):
    """``V_b relu(U_b^T x)`` per row (``x [M, d]``, ``wi [n, d, r]``, ``wo [n, r, d]``)."""
    h = jax.nn.relu(jnp.einsum("md,mdr->mr", x, jnp.take(wi, bucket, axis=0)))
    return jnp.einsum("mr,mrd->md", h, jnp.take(wo, bucket, axis=0))


def _values(module, x2, slots, weights, n: int, rank: int, dt):
    """``sum_j weights_j f_{slots_j}(x)`` over all but the first axis of ``slots [N, ...]``.

    The reads go through :mod:`lshsim.t5.sharded_lookup`, so a bucket-sharded table is read
    where it lives (``shard_map`` + ``psum``) under a ``model``-split mesh.
    """
    d = x2.shape[-1]
    count = slots.shape[0]
    j = slots.size // count
    flat = slots.reshape(-1).astype(jnp.int32)  # [N J]
    w = weights.reshape(count, j).astype(dt)
    if rank == 0:
        table = _param(module, "table", _lecun(-1, -2), (n, d), ("buckets", "embed"))
        rows = sharded_lookup.gather_rows(table, flat).astype(dt).reshape(count, j, d)
        return jnp.einsum("nj,njd->nd", w, rows)
    wi = _param(module, "wi", _lecun(1, 2, (0,)), (n, d, rank), ("buckets", "embed", "rank"))
    wo = _param(module, "wo", _lecun(1, 2, (0,)), (n, rank, d), ("buckets", "rank", "embed"))
    x_rep = jnp.repeat(x2.astype(dt), j, axis=0)  # row i j: token i's input for its j-th slot
    out = sharded_lookup.expert_rows(_neuron_experts, x_rep, wi.astype(dt), wo.astype(dt), flat)
    return jnp.einsum("nj,njd->nd", w, out.reshape(count, j, d))


def _productkey(module, x2, cfg: T5Config, dt):
    n, k, heads, d = cfg.num_buckets, cfg.topk, cfg.lookup_heads, x2.shape[-1]
    s = math.isqrt(n)
    # the query side is small (h d^2) and replicated: a model axis need not divide h
    wq = _param(module, "query", _lecun(0, (1, 2)), (d, heads, d), ("embed", None, None))
    scale = _param(module, "query_scale", nn.initializers.ones, (heads, d), (None, None))
    keys = _param(
        module, "sub_keys", nn.initializers.normal(1.0), (heads, 2, s, d // 2),
        (None, None, "keys", None),
    )  # fmt: skip
    q = _rms(jnp.einsum("nd,dhe->nhe", x2.astype(jnp.float32), wq), scale, cfg.layer_norm_eps)
    scores, slots = productkey_select(q, keys, k)
    weights = jax.nn.softmax(scores, axis=-1)
    out = _values(module, x2, slots, weights, n, cfg.expert_rank, dt)
    return out, slots[:, 0, 0], slots, q


def _ngram(module, x2, token_ids, cfg: T5Config, dt):
    family = ngram_family(cfg, module.stack, module.layer)
    primes = [int(m) for m in family.moduli]
    buckets = ngram_buckets(token_ids, family).reshape(-1, len(primes))  # [N, H]
    offsets = np.concatenate([[0], np.cumsum(primes)[:-1]]).astype(np.int32)
    rows = buckets + jnp.asarray(offsets)
    ones = jnp.ones(rows.shape, jnp.float32)
    e = _values(module, x2, rows, ones, int(sum(primes)), cfg.expert_rank, dt)
    d = x2.shape[-1]
    sx = _param(module, "gate_query_scale", nn.initializers.ones, (d,), ("embed",))
    se = _param(module, "gate_key_scale", nn.initializers.ones, (d,), ("embed",))
    eps = cfg.layer_norm_eps
    logit = jnp.sum(_rms(x2, sx, eps) * _rms(e, se, eps), axis=-1) / math.sqrt(d)
    return e * jax.nn.sigmoid(logit)[:, None].astype(dt), buckets[:, 0], buckets


def apply(module: nn.Module, x, token_ids, deterministic: bool = True):
    """A beyond-the-paper lookup's output ``[..., d]`` for ``x [..., d]``, ``token_ids [B, L]``.

    Called from :class:`lshsim.t5.memory.PartialExpert` (whose scope holds the parameters);
    sows ``layer_input``, ``bucket``, ``slots`` and (product keys) ``query``.
    """
    del deterministic  # no jitter or dropout in these lookups
    cfg = module.config
    dt = jnp.dtype(cfg.dtype)
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    module.sow("intermediates", "layer_input", x)
    if cfg.lookup == "productkey":
        out, bucket, slots, q = _productkey(module, x2, cfg, dt)
        module.sow("intermediates", "query", q.reshape((*shape[:-1], *q.shape[1:])))
    else:
        out, bucket, slots = _ngram(module, x2, token_ids, cfg, dt)
    module.sow("intermediates", "bucket", bucket.reshape(shape[:-1]))
    module.sow("intermediates", "slots", slots.reshape((*shape[:-1], *slots.shape[1:])))
    return out.astype(dt).reshape(shape)
