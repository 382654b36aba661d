"""The slot layers' shared part: the value tables, their parameters and what they sow.

:mod:`lshsim.t5.lookups.productkey_layer` and :mod:`lshsim.t5.lookups.ngram_layer` select
slots; :func:`values` reads the slots' values (a row per slot at rank 0, else a rank-``r``
expert ``V_i relu(U_i^T x)``) through :mod:`lshsim.t5.sharded_lookup`. Parameter names live
under the layer's ``expert`` scope, so ``lshsim params`` counts them as expert parameters.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from lshsim.t5 import sharded_lookup


def lecun(in_axis: int, out_axis: int, batch_axis=()):
    """LeCun-normal (truncated) over ``in_axis`` fans."""
    return nn.initializers.variance_scaling(
        1.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis
    )


def param(module: nn.Module, name: str, init, shape: tuple, names: tuple):
    """A float32 parameter annotated with its logical axis names (issue 18's rule table)."""
    return module.param(name, nn.with_logical_partitioning(init, names), shape, jnp.float32)


def rms(x, scale, eps: float):
    """RMSNorm of ``x`` over its last axis, in float32, times ``scale``."""
    x = x.astype(jnp.float32)
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * scale


def _neuron_experts(x, wi, wo, bucket):
    """``V_b relu(U_b^T x)`` per row (``x [M, d]``, ``wi [n, d, r]``, ``wo [n, r, d]``)."""
    h = jax.nn.relu(jnp.einsum("md,mdr->mr", x, jnp.take(wi, bucket, axis=0)))
    return jnp.einsum("mr,mrd->md", h, jnp.take(wo, bucket, axis=0))


def values(module, x2, slots, weights, n: int, rank: int, dt):
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
        table = param(module, "table", lecun(-1, -2), (n, d), ("buckets", "embed"))
        rows = sharded_lookup.gather_rows(table, flat).astype(dt).reshape(count, j, d)
        return jnp.einsum("nj,njd->nd", w, rows)
    wi = param(module, "wi", lecun(1, 2, (0,)), (n, d, rank), ("buckets", "embed", "rank"))
    wo = param(module, "wo", lecun(1, 2, (0,)), (n, rank, d), ("buckets", "rank", "embed"))
    x_rep = jnp.repeat(x2.astype(dt), j, axis=0)  # row i j: token i's input for its j-th slot
    out = sharded_lookup.expert_rows(_neuron_experts, x_rep, wi.astype(dt), wo.astype(dt), flat)
    return jnp.einsum("nj,njd->nd", w, out.reshape(count, j, d))


def slot_expert(module: nn.Module, x, token_ids, layer):
    """A slot lookup's output ``[..., d]`` (``x [..., d]``, ``token_ids [B, L]``) and its sows.

    ``layer(module, x2, token_ids, cfg, dt)`` (:func:`~lshsim.t5.lookups.productkey_layer.
    productkey_layer`, :func:`~lshsim.t5.lookups.ngram_layer.ngram_layer`) returns ``(out
    [N, d], bucket [N], slots [N, ...], more)`` for the rows ``x2 [N, d]``. Sows, beside
    ``layer_input`` and ``bucket`` (product keys: head 0's top-1 slot; n-grams: head 0's
    bucket, offset-free), each array of ``more`` (product keys: ``query`` ``[..., h, d]``, the
    scored vectors) and ``slots`` (``[..., h, k]`` selected slots, or ``[..., H]`` buckets).
    """
    cfg = module.config
    dt = jnp.dtype(cfg.dtype)
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    module.sow("intermediates", "layer_input", x)
    out, bucket, slots, more = layer(module, x2, token_ids, cfg, dt)
    for name, value in more.items():
        module.sow("intermediates", name, value.reshape((*shape[:-1], *value.shape[1:])))
    module.sow("intermediates", "bucket", bucket.reshape(shape[:-1]))
    module.sow("intermediates", "slots", slots.reshape((*shape[:-1], *slots.shape[1:])))
    return out.astype(dt).reshape(shape)
