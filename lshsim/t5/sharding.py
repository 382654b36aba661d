"""Data-parallel placement over a ``jax.sharding.Mesh``.

The mesh has one axis, ``data``. Parameters and optimiser state are replicated on every
device; each batch is split along its leading (example) axis, so every device computes the
gradient of its share and XLA inserts the all-reduce. On several hosts, call
``jax.distributed.initialize()`` before anything else touches JAX (see the README); the
mesh then spans ``jax.devices()`` of all hosts, and each host feeds the rows of the global
batch that live on its devices (``jax.make_array_from_callback``).
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

#: Name of the mesh axis that splits the batch.
DATA_AXIS = "data"


def make_mesh(num_devices: int | None = None) -> Mesh:
    """A 1-D ``data`` mesh over the first ``num_devices`` devices (default: all).

    Raises:
        ValueError: if ``num_devices`` is not in ``[1, jax.device_count()]``.
    """
    devices = jax.devices()
    n = len(devices) if num_devices is None else num_devices
    if not isinstance(n, int) or not 1 <= n <= len(devices):
        raise ValueError(f"devices must be an integer in [1, {len(devices)}], got {num_devices!r}")
    return Mesh(np.asarray(devices[:n]), (DATA_AXIS,))


def replicated(mesh: Mesh) -> NamedSharding:
    """Sharding that keeps a full copy on every device."""
    return NamedSharding(mesh, PartitionSpec())


def batch_sharded(mesh: Mesh) -> NamedSharding:
    """Sharding that splits the leading axis over the ``data`` axis."""
    return NamedSharding(mesh, PartitionSpec(DATA_AXIS))


def check_batch(batch_size: int, mesh: Mesh) -> None:
    """Raise ``ValueError`` unless the batch divides evenly over the mesh."""
    n = mesh.shape[DATA_AXIS]
    if batch_size % n:
        raise ValueError(f"batch must be a multiple of the {n} devices, got {batch_size}")


def shard_batch(batch: dict[str, np.ndarray], mesh: Mesh) -> dict[str, jax.Array]:
    """Place a host batch on the mesh, split along the example axis."""
    sharding = batch_sharded(mesh)
    if jax.process_count() == 1:
        return {k: jax.device_put(v, sharding) for k, v in batch.items()}
    # Several processes (tests/t5/test_distributed.py): every process computes the same global
    # batch (the dataset is a pure function of the step) and hands each of its own devices
    # the rows that device holds, whatever the mesh's device order and its other axes: a
    # process's devices may share rows (a `model` axis) or hold rows that are not contiguous.
    return {
        k: jax.make_array_from_callback(v.shape, sharding, lambda index, v=v: v[index])
        for k, v in batch.items()
    }


def replicate(tree, mesh: Mesh):
    """Put every leaf of ``tree`` on all devices of ``mesh``."""
    return jax.device_put(tree, replicated(mesh))
