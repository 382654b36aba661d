"""Expert-table reads that never gather a bucket-sharded table onto one device.

With a mesh whose ``model`` axis has more than one device, every partial-expert table
(``[buckets, ...]``) is split along its bucket axis (:data:`lshsim.t5.mesh_axes.RULES`). A plain
``jnp.take`` of such a table lets XLA's partitioner choose how to read it, and it may gather
the whole table. Here the read goes through ``jax.shard_map`` instead: every device looks up
the tokens whose bucket it owns (``bucket - offset`` in ``[0, buckets / model)``), zeros the
others, and a ``psum`` over ``model`` adds the partial results, so what crosses devices is
``tokens x d`` per layer, never a table. Tokens stay split over ``data``.

Without such a mesh in context (``jax.set_mesh``, see :func:`lshsim.t5.sharding.mesh_context`)
the functions are the plain gathers.

References:
    The JAX ``shard_map`` documentation; Lepikhin et al. 2021 (GShard: sharded expert tables).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec

from lshsim.t5.mesh_axes import DATA_AXIS, MODEL_AXIS


def _model_mesh():
    """The context mesh when it splits ``model`` over more than one device, else ``None``."""
    mesh = jax.sharding.get_abstract_mesh()
    if mesh.empty or MODEL_AXIS not in mesh.axis_names or mesh.shape[MODEL_AXIS] == 1:
        return None
    return mesh


def _bucket_sharded(fn: Callable, tables: tuple, rows: tuple, bucket: jax.Array, mesh):
    """``fn(*rows, *tables, bucket)`` with ``tables`` split along their leading (bucket) axis.

    ``rows`` are per-token arrays ``[N, ...]`` and ``bucket`` is ``[N]``; the result is
    ``[N, ...]``, the same as ``fn`` on the whole tables.
    """
    n, shards = tables[0].shape[0], mesh.shape[MODEL_AXIS]
    if n % shards:
        raise ValueError(f"mesh: model={shards} does not divide the {n} buckets of an expert table")
    data = mesh.shape.get(DATA_AXIS, 1)
    tok = PartitionSpec(DATA_AXIS) if data > 1 and bucket.shape[0] % data == 0 else PartitionSpec()
    table_spec = PartitionSpec(MODEL_AXIS)

    def local(*args):
        k = len(rows)
        row_args, local_tables, b = args[:k], args[k:-1], args[-1]
        # every model shard reads the same rows: marked varying over model, their cotangents
        # are summed over it (without this, ragged experts' x[order] left the input gradient
        # one shard's: a 4% error in the embedding's gradient on a 2 x 2 mesh)
        row_args = tuple(jax.lax.pcast(r, MODEL_AXIS, to="varying") for r in row_args)
        size = local_tables[0].shape[0]
        idx = b - jax.lax.axis_index(MODEL_AXIS) * size
        own = (idx >= 0) & (idx < size)
        idx = jnp.where(own, idx, 0)
        y = fn(*row_args, *local_tables, idx)
        y = jnp.where(own.reshape(own.shape + (1,) * (y.ndim - 1)), y, jnp.zeros((), y.dtype))
        return jax.lax.psum(y, MODEL_AXIS)

    mapped = jax.shard_map(
        local,
        mesh=mesh,
        in_specs=(*(tok,) * len(rows), *(table_spec,) * len(tables), tok),
        out_specs=tok,
    )
    return mapped(*rows, *tables, bucket)


def gather_rows(table: jax.Array, bucket: jax.Array) -> jax.Array:
    """``table[bucket]`` for ``table [n, d]`` and ``bucket [N]``: ``[N, d]``."""
    mesh = _model_mesh()
    if mesh is None:
        return jnp.take(table, bucket, axis=0)
    return _bucket_sharded(
        lambda t, b: jnp.take(t, b, axis=0), (table,), (), bucket.astype(jnp.int32), mesh
    )


def expert_rows(mlp: Callable, x: jax.Array, wi: jax.Array, wo: jax.Array, bucket: jax.Array):
    """``mlp(x, wi, wo, bucket)`` (e.g. :func:`lshsim.t5.memory.expert_mlp`), bucket-sharded.

    ``x [N, d]``, ``wi [n, d, r]``, ``wo [n, r, d]``, ``bucket [N]``; returns ``[N, d]``.
    """
    mesh = _model_mesh()
    if mesh is None:
        return mlp(x, wi, wo, bucket)
    return _bucket_sharded(mlp, (wi, wo), (x,), bucket.astype(jnp.int32), mesh)
