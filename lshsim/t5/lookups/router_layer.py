"""The layer of the routed lookups: one table row (rank 0) or rank-``r`` expert per token.

The lookup picks each token's bucket ``i`` and weight ``w`` (:meth:`RoutedLookup.route
<lshsim.t5.lookups.routed.RoutedLookup.route>`); :func:`routed_expert` reads ``f_i(x)`` and
returns ``w f_i(x)``. The table's parameters (``table``, or ``wi``/``wo``) live in the
calling :class:`~lshsim.t5.memory.PartialExpert`'s scope; the reads go through
:mod:`lshsim.t5.sharded_lookup`, so a bucket-sharded table is read where it lives.
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp

from lshsim.t5 import sharded_lookup
from lshsim.t5.experts import grouped_dot, resolve_expert_impl

__all__ = ["expert_mlp", "lecun", "routed_expert"]


def lecun(in_axis: int, out_axis: int, batch_axis=(), axes=None):
    """LeCun-normal; ``axes``: the parameter's logical axis names (:mod:`lshsim.t5.mesh_axes`)."""
    init = nn.initializers.variance_scaling(
        1.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis
    )
    return init if axes is None else nn.with_logical_partitioning(init, axes)


def expert_mlp(x, wi, wo, bucket, impl: str = "gather"):
    """``V_b relu(U_b^T x)`` per row: ``x [N, d]``, ``wi [n, d, r]``, ``wo [n, r, d]``.

    ``gather`` materialises each row's ``U_b, V_b`` (``N d r`` memory; fast on CPU);
    ``ragged`` sorts the rows by bucket and multiplies with ``jax.lax.ragged_dot`` (``N d``
    memory; on CPU it is slow beyond a few buckets: 0.7 s vs 0.05 s at 128 buckets, N=4096,
    d=128, r=16, forward and backward); ``auto`` is ``ragged`` on GPU/TPU, ``gather`` on CPU
    (:mod:`lshsim.t5.experts`).
    """
    impl = resolve_expert_impl(impl, jax.default_backend())
    if impl == "gather":
        h = jax.nn.relu(jnp.einsum("nd,ndr->nr", x, jnp.take(wi, bucket, axis=0)))
        return jnp.einsum("nr,nrd->nd", h, jnp.take(wo, bucket, axis=0))
    order = jnp.argsort(bucket)
    sizes = jnp.bincount(bucket, length=wi.shape[0]).astype(jnp.int32)
    h = jax.nn.relu(grouped_dot(x[order], wi, sizes))
    y = grouped_dot(h, wo, sizes)
    return jnp.zeros_like(y).at[order].set(y)


def routed_expert(lookup, module: nn.Module, x, token_ids, deterministic: bool):
    """``w(x) f_i(x)`` of ``x [..., d]``, ``token_ids [...]``; sows ``layer_input``, ``bucket``.

    And ``weight`` when the lookup weighs its bucket (the probe's score-weighted usage).
    """
    cfg = module.config
    dt = jnp.dtype(cfg.dtype)
    shape, d, n, r = x.shape, x.shape[-1], cfg.num_buckets, cfg.expert_rank
    x2 = x.reshape(-1, d)
    module.sow("intermediates", "layer_input", x)
    bucket, weight = lookup.route(module, x2, token_ids.reshape(-1), deterministic)
    module.sow("intermediates", "bucket", bucket.reshape(shape[:-1]))
    if weight is not None:
        module.sow("intermediates", "weight", weight.reshape(shape[:-1]))
    if r == 0:
        init = lecun(-1, -2, axes=("buckets", "embed"))
        table = module.param("table", init, (n, d), jnp.float32)
        out = sharded_lookup.gather_rows(table, bucket).astype(dt)
    else:
        wi_init = lecun(1, 2, (0,), axes=("buckets", "embed", "rank"))
        wo_init = lecun(1, 2, (0,), axes=("buckets", "rank", "embed"))
        wi = module.param("wi", wi_init, (n, d, r), jnp.float32).astype(dt)
        wo = module.param("wo", wo_init, (n, r, d), jnp.float32).astype(dt)
        mlp = functools.partial(expert_mlp, impl=cfg.expert_impl)
        out = sharded_lookup.expert_rows(mlp, x2.astype(dt), wi, wo, bucket)
    if weight is not None:
        out = out * weight[:, None].astype(dt)
    return out.reshape(shape)
