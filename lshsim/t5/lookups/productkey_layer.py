"""Product-key memories (``lookup="productkey"``; Lample et al. 2019, PEER): the Flax layer.

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

References:
    Lample et al. 2019, "Large Memory Layers with Product Keys"; He 2024, "Mixture of A
    Million Experts" (PEER); Berges et al. 2024, "Memory Layers at Scale".
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from lshsim.t5.lookups.tables import lecun, param, rms, values


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


def productkey_layer(module, x2, token_ids, cfg, dt):
    """``(out [N, d], head 0's top-1 slot [N], slots [N, h, k], more)``.

    ``more``: ``{"query": [N, h, d], "weights": [N, h, k]}`` (the slots' softmax weights).
    """
    del token_ids  # product keys read the layer input only
    n, k, heads, d = cfg.num_buckets, cfg.topk, cfg.lookup_heads, x2.shape[-1]
    s = math.isqrt(n)
    # the query side is small (h d^2) and replicated: a model axis need not divide h
    wq = param(module, "query", lecun(0, (1, 2)), (d, heads, d), ("embed", None, None))
    scale = param(module, "query_scale", nn.initializers.ones, (heads, d), (None, None))
    keys = param(
        module, "sub_keys", nn.initializers.normal(1.0), (heads, 2, s, d // 2),
        (None, None, "keys", None),
    )  # fmt: skip
    q = rms(jnp.einsum("nd,dhe->nhe", x2.astype(jnp.float32), wq), scale, cfg.layer_norm_eps)
    scores, slots = productkey_select(q, keys, k)
    weights = jax.nn.softmax(scores, axis=-1)
    out = values(module, x2, slots, weights, n, cfg.expert_rank, dt)
    return out, slots[:, 0, 0], slots, {"query": q, "weights": weights}
