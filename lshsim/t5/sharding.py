"""Placement over a 2-D ``data`` x ``model`` ``jax.sharding.Mesh`` (T5X-style logical axes).

``data`` splits the batch; ``model`` splits parameters, Megatron-style: the token embedding and
output tables along the vocabulary, the dense kernels along ``d_ff`` and heads, every
partial-expert table (and the softmax router) along its bucket axis. Parameters are replicated
across ``data``. The model names each parameter's axes once with logical names
(``nn.with_logical_partitioning``, see :func:`lshsim.t5.model.param_specs`);
:data:`lshsim.t5.mesh_axes.RULES` (re-exported here with the axis names) is the one table that
maps them to mesh axes. Optimiser state (Adafactor's factored row and column moments included)
is placed like its parameter. A model with ``model > 1`` must be
traced under ``jax.set_mesh(mesh)`` (see :func:`mesh_context`): its expert lookups then read
only the rows each device owns (:mod:`lshsim.t5.sharded_lookup`).

On several hosts, call ``jax.distributed.initialize()`` before anything else touches JAX (see
the README); the mesh then spans ``jax.devices()`` of all hosts, and each host feeds the rows
of the global batch that live on its own devices (:func:`shard_batch`).

References:
    T5X ``t5x/partitioning.py`` (logical axis rules); Shoeybi et al. 2019 (Megatron-LM);
    the JAX sharding and ``shard_map`` documentation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from lshsim.t5.mesh_axes import DATA_AXIS, MESH_AXES, MODEL_AXIS, RULES
from lshsim.t5.scan import LayerwiseState

#: The field of :class:`~lshsim.t5.scan.LayerwiseState` holding the stacked layers' state.
PER_LAYER = LayerwiseState._fields[0]


def make_mesh(data: int | None = None, model: int = 1) -> Mesh:
    """A ``data`` x ``model`` mesh over the first ``data * model`` devices.

    Args:
        data: devices along the batch axis (default: all devices divided by ``model``).
            ``make_mesh(n)`` is the data-parallel mesh of ``n`` devices.
        model: devices along the parameter axis (default 1: parameters replicated).

    Returns:
        a mesh with axes ``("data", "model")``.

    Raises:
        ValueError: sizes that are not integers >= 1 or need more devices than there are.
    """
    devices = jax.devices()
    total = len(devices)
    if not isinstance(model, int) or isinstance(model, bool) or not 1 <= model <= total:
        raise ValueError(f"mesh: model must be an integer in [1, {total}], got {model!r}")
    if data is None:
        data = max(1, total // model)
    if not isinstance(data, int) or isinstance(data, bool) or not 1 <= data * model <= total:
        raise ValueError(
            f"mesh: data x model must be at most the {total} devices, got data={data!r}, "
            f"model={model}"
        )
    grid = np.asarray(devices[: data * model], dtype=object).reshape(data, model)
    return Mesh(grid, MESH_AXES)


def parse_mesh(text: str, device_count: int | None = None) -> dict[str, int]:
    """``"data=A,model=B"`` -> ``{"data": A, "model": B}`` (an omitted axis: see below).

    An omitted ``model`` is 1; an omitted ``data`` is ``device_count / model``.

    Args:
        text: comma-separated ``axis=size`` items over the axes ``data`` and ``model``.
        device_count: the devices the mesh must use exactly (default: ``jax.device_count()``).

    Raises:
        ValueError: an unknown or repeated axis, a size that is not an integer >= 1, or a
            product that is not the device count.
    """
    count = jax.device_count() if device_count is None else device_count
    sizes: dict[str, int] = {}
    for item in str(text).split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in MESH_AXES or name in sizes:
            raise ValueError(f"mesh: expected data=A,model=B (axes data, model), got {text!r}")
        try:
            sizes[name] = int(value)
        except ValueError:
            raise ValueError(f"mesh: {name} must be an integer >= 1, got {value!r}") from None
        if sizes[name] < 1:
            raise ValueError(f"mesh: {name} must be an integer >= 1, got {value!r}")
    sizes.setdefault(MODEL_AXIS, 1)
    sizes.setdefault(DATA_AXIS, max(1, count // sizes[MODEL_AXIS]))
    if sizes[DATA_AXIS] * sizes[MODEL_AXIS] != count:
        raise ValueError(
            f"mesh: data x model must equal the {count} devices, got "
            f"data={sizes[DATA_AXIS]}, model={sizes[MODEL_AXIS]}"
        )
    return sizes


def mesh_from_options(mesh: str | None = None, devices: int | None = None) -> Mesh:
    """The mesh of a run: ``--mesh data=A,model=B`` or ``--devices D`` (``data=D,model=1``).

    Raises:
        ValueError: both given, or either invalid (see :func:`parse_mesh`, :func:`make_mesh`).
    """
    if mesh is not None and devices is not None:
        raise ValueError("mesh: give --mesh or --devices, not both (--devices D is data=D,model=1)")
    if mesh is None:
        return make_mesh(devices, 1)
    return make_mesh(**parse_mesh(mesh))


def model_size(mesh: Mesh | None) -> int:
    """Devices along ``model`` (1 for ``None`` or a mesh without that axis)."""
    if mesh is None or MODEL_AXIS not in mesh.shape:
        return 1
    return int(mesh.shape[MODEL_AXIS])


def mesh_context(mesh: Mesh):
    """The context to trace, lower and call a sharded step in: ``jax.set_mesh(mesh)``."""
    return jax.set_mesh(mesh)


class MeshJit:
    """A ``jax.jit``-ed function that is traced, lowered and called under its mesh.

    The model's bucket-sharded lookups read the mesh from the context
    (:mod:`lshsim.t5.sharded_lookup`), so a sharded step must be traced inside it.
    """

    def __init__(self, mesh: Mesh, jitted):
        """Bind ``jitted`` (a ``jax.jit`` result) to ``mesh``."""
        self.mesh, self.jitted = mesh, jitted

    def __call__(self, *args):
        """Call under the mesh."""
        with mesh_context(self.mesh):
            return self.jitted(*args)

    def lower(self, *args):
        """``jitted.lower(*args)`` under the mesh (then ``.compile()``)."""
        with mesh_context(self.mesh):
            return self.jitted.lower(*args)


def jit_on(mesh: Mesh, fn, **jit_kwargs) -> MeshJit:
    """``jax.jit(fn, **jit_kwargs)`` traced and called under ``mesh`` (see :class:`MeshJit`)."""
    return MeshJit(mesh, jax.jit(fn, **jit_kwargs))


def init_on(mesh: Mesh, config, optimizer, shardings) -> MeshJit:
    """The train state's initialisation compiled for ``mesh``: call it with a seed's key data.

    ``jax.jit`` of :func:`lshsim.t5.steps.state_initializer` with the key's data as its one
    (replicated) input and ``shardings`` as its ``out_shardings``: XLA partitions the
    initialisation, so each device draws only its own shards (JAX's threefry is
    partitionable: the values do not depend on the mesh), and no table is ever whole on one
    device. Call it as ``init_on(...)(steps.seed_key_data(seed))``; ``.lower(...)`` gives
    XLA's memory analysis.

    Args:
        mesh: the mesh.
        config: the model config.
        optimizer: its optimiser.
        shardings: the state's shardings (:func:`train_state_shardings`).

    Returns:
        The compiled-on-call initialisation (a :class:`MeshJit`).
    """
    from lshsim.t5.steps import state_initializer

    return jit_on(
        mesh,
        state_initializer(config, optimizer),
        in_shardings=replicated(mesh),
        out_shardings=shardings,
    )


def init_state_on(mesh: Mesh, config, optimizer, shardings, seed: int) -> dict:
    """The train state at step 0 of ``seed``, placed by ``shardings`` (see :func:`init_on`).

    Args:
        mesh: the mesh.
        config: the model config.
        optimizer: its optimiser.
        shardings: the state's shardings.
        seed: the parameters' seed.

    Returns:
        ``{"step", "params", "opt_state"}``, each leaf drawn in place on its devices.
    """
    from lshsim.t5.steps import seed_key_data

    return init_on(mesh, config, optimizer, shardings)(seed_key_data(seed))


def eval_step_on(mesh: Mesh, config, special_ids, params_shardings) -> MeshJit:
    """The eval step (:func:`lshsim.t5.steps.make_eval_step`) with placed parameters."""
    from lshsim.t5.steps import make_eval_step

    step = make_eval_step(config, special_ids)
    return jit_on(mesh, step, in_shardings=(params_shardings, batch_sharded(mesh)))


def replicated(mesh: Mesh) -> NamedSharding:
    """Sharding that keeps a full copy on every device."""
    return NamedSharding(mesh, PartitionSpec())


def batch_sharded(mesh: Mesh) -> NamedSharding:
    """Sharding that splits the leading (example) axis over the ``data`` axis."""
    return NamedSharding(mesh, PartitionSpec(DATA_AXIS))


def check_batch(batch_size: int, mesh: Mesh) -> None:
    """Raise ``ValueError`` unless the batch divides evenly over the ``data`` axis."""
    n = mesh.shape[DATA_AXIS]
    if batch_size % n:
        raise ValueError(f"batch must be a multiple of the {n} devices of data, got {batch_size}")


def shard_batch(batch: dict[str, np.ndarray], mesh: Mesh) -> dict[str, jax.Array]:
    """Place a host batch on the mesh, split along the example axis over ``data``.

    With several processes every process holds the same global batch (the dataset is a pure
    function of the step); each one copies only the rows of its own devices.
    """
    sharding = batch_sharded(mesh)
    if jax.process_count() == 1:
        return {k: jax.device_put(v, sharding) for k, v in batch.items()}
    return {
        k: jax.make_array_from_callback(v.shape, sharding, lambda idx, v=v: v[idx])
        for k, v in batch.items()
    }


def replicate(tree, mesh: Mesh):
    """Put every leaf of ``tree`` on all devices of ``mesh``."""
    return jax.device_put(tree, replicated(mesh))


def _path_name(path) -> str:
    return "/".join(str(getattr(k, "key", getattr(k, "name", k))) for k in path)


def mesh_spec(logical: PartitionSpec, shape, mesh: Mesh, name: str = "") -> PartitionSpec:
    """The mesh ``PartitionSpec`` of one parameter from its logical one, by :data:`RULES`.

    Raises:
        ValueError: a mesh axis that does not divide the dimension it splits.
    """
    rules = dict(RULES)
    axes = []
    for dim, logical_axis in zip(shape, tuple(logical) + (None,) * len(shape), strict=False):
        axis = rules.get(logical_axis) if logical_axis is not None else None
        if axis is not None and mesh.shape.get(axis, 1) == 1:
            axis = None
        if axis is not None and dim % mesh.shape[axis]:
            raise ValueError(
                f"mesh: {axis}={mesh.shape[axis]} does not divide the {logical_axis} axis "
                f"(size {dim}) of parameter {name}"
            )
        axes.append(axis)
    while axes and axes[-1] is None:
        axes.pop()
    return PartitionSpec(*axes)


def param_shardings(abstract_params, logical_specs, mesh: Mesh):
    """``NamedSharding`` pytree of the parameters from their logical specs.

    Args:
        abstract_params: the parameter tree (arrays or ``jax.ShapeDtypeStruct``).
        logical_specs: the same tree of logical ``PartitionSpec`` (e.g.
            :func:`lshsim.t5.model.param_specs`).
        mesh: the mesh.

    Raises:
        ValueError: a mesh axis that does not divide a dimension it splits.
    """

    def one(path, leaf, spec):
        return NamedSharding(mesh, mesh_spec(spec, leaf.shape, mesh, _path_name(path)))

    return jax.tree_util.tree_map_with_path(
        one, abstract_params, logical_specs, is_leaf=lambda x: x is None
    )


def _factored_dims(shape, min_dim: int = 128):
    """Adafactor's two largest axes ``(second, largest)`` when factored (as optax picks)."""
    if len(shape) < 2:
        return None
    order = np.argsort(shape)
    if shape[order[-2]] < min_dim:
        return None
    return int(order[-2]), int(order[-1])


def _moment_spec(field: str, leaf_shape, param_shape, spec: PartitionSpec) -> PartitionSpec:
    """The spec of an optimiser-state leaf that mirrors a parameter of ``spec``."""
    if tuple(leaf_shape) == tuple(param_shape):
        return spec
    dims = _factored_dims(param_shape)
    if dims is None or field not in ("v_row", "v_col"):
        return PartitionSpec()  # counts, and the (1,) placeholders of the unused fields
    second, largest = dims
    dropped = largest if field == "v_row" else second  # optax: v_row drops d0 (the largest)
    if tuple(leaf_shape) != tuple(d for i, d in enumerate(param_shape) if i != dropped):
        return PartitionSpec()
    full = tuple(spec) + (None,) * (len(param_shape) - len(spec))
    kept = [a for i, a in enumerate(full) if i != dropped]
    while kept and kept[-1] is None:
        kept.pop()
    return PartitionSpec(*kept)


def state_shardings(abstract_state: Mapping, mesh: Mesh, logical_specs=None):
    """``NamedSharding`` pytree of a train state ``{"step", "params", "opt_state"}``.

    Parameters follow their logical specs; every optimiser-state leaf that mirrors a parameter
    (same path below the optimiser's fields) is placed like it: the unfactored second moment
    as the parameter, Adafactor's factored ``v_row`` / ``v_col`` with the reduced axis left
    out (per layer, below the leading ``layers`` axis, for the scanned model's per-layer
    optimiser, :func:`lshsim.t5.scan.per_layer`); everything else (counts, placeholders, the
    step) is replicated.

    Args:
        abstract_state: the state's shapes (e.g. :func:`lshsim.t5.steps.abstract_state`).
        mesh: the mesh.
        logical_specs: the parameters' logical specs (default: all replicated).
    """
    params = abstract_state["params"]
    if logical_specs is None:
        logical_specs = jax.tree.map(lambda _: PartitionSpec(), params)
    p_shard = param_shardings(params, logical_specs, mesh)
    flat = {
        tuple(getattr(k, "key", None) for k in path): (leaf.shape, s.spec)
        for (path, leaf), s in zip(
            jax.tree_util.tree_flatten_with_path(params)[0],
            jax.tree_util.tree_leaves(p_shard),
            strict=True,
        )
    }

    def one(path, leaf):
        keys = tuple(k.key for k in path if isinstance(k, jax.tree_util.DictKey))
        fields = [k.name for k in path if isinstance(k, jax.tree_util.GetAttrKey)]
        if keys not in flat or not keys:
            return NamedSharding(mesh, PartitionSpec())
        shape, spec = flat[keys]
        field = fields[-1] if fields else ""
        if PER_LAYER in fields:  # lshsim.t5.scan.per_layer: each layer's moments, stacked
            head, rest = (spec[0], PartitionSpec(*spec[1:])) if len(spec) else (None, spec)
            inner = _moment_spec(field, leaf.shape[1:], shape[1:], rest)
            return NamedSharding(mesh, PartitionSpec(head, *inner))
        return NamedSharding(mesh, _moment_spec(field, leaf.shape, shape, spec))

    out = {k: jax.tree_util.tree_map_with_path(one, v) for k, v in abstract_state.items()}
    out["params"] = p_shard
    return out


def place(tree, shardings):
    """``jax.device_put`` of ``tree`` with a matching pytree of shardings."""
    return jax.device_put(tree, shardings)


def per_device_bytes(tree) -> int:
    """Bytes of ``tree``'s shapes that one device holds under their shardings (for checks)."""
    total = 0
    for leaf in jax.tree_util.tree_leaves(tree):
        shard = leaf.sharding.shard_shape(leaf.shape)
        total += math.prod(shard) * np.dtype(leaf.dtype).itemsize
    return total


def train_state_shardings(config, optimizer, mesh: Mesh):
    """``(abstract_state, shardings)`` of a config's train state on ``mesh`` (nothing allocated).

    Args:
        config: a :class:`lshsim.t5.configs.T5Config`.
        optimizer: its optax optimiser (:func:`lshsim.t5.steps.make_optimizer`).
        mesh: the mesh.

    Raises:
        ValueError: a ``model`` size that does not divide a dimension it splits.
    """
    from lshsim.t5.model import param_specs
    from lshsim.t5.steps import abstract_state

    abstract = abstract_state(config, optimizer)
    return abstract, state_shardings(abstract, mesh, param_specs(config))
