"""Memory and FLOPs of a training step on a mesh, from XLA's ahead-of-time analysis.

:func:`plan` lowers and compiles the train step (:func:`lshsim.t5.steps.make_train_step`,
T5's Adafactor, ``accumulate`` micro-batches) for a ``data x model`` mesh of host (CPU)
devices on abstract inputs: the state comes from ``jax.eval_shape`` and the batch is
``jax.ShapeDtypeStruct``, so nothing is allocated and any model size can be planned on a
laptop. From the compiled executable it reads, per device:

- ``memory_analysis()``: argument, output, temporary and alias bytes. The state is donated
  (``donate_argnums=0``, as :mod:`lshsim.t5.loop` does), so the new state's buffers are the
  old state's: XLA reports them in both the argument and the output bytes and once more as
  alias bytes. ``per_device_bytes = argument + output + temp - alias`` counts them once.
- ``cost_analysis()``: ``flops`` and ``bytes accessed``. On an SPMD-partitioned program these
  are one device's (XLA analyses the partitioned per-device module; checked in the tests:
  on ``data = 2`` a device reports half the batch's FLOPs plus the replicated optimiser
  update). ``flops_per_step`` is per device; ``flops_per_step_total`` is the whole step's,
  from the cost analysis of the lowered, not yet partitioned, module. XLA counts the body of
  a loop once, so with ``accumulate = k`` the whole step's count is the looped step's plus
  ``k - 1`` micro-batch loop bodies (priced from the traced step's ``scan``), and the
  per-device figures (FLOPs, bytes accessed) are scaled by its ratio to the looped step's
  (exact for ``k = 1``; for ``k > 1`` it assumes the loop body and the rest split over the
  devices alike). This prices the step as it runs: each micro-batch casts the parameters
  and adds its gradients into the accumulator (a few FLOPs and 15-20 bytes accessed per
  parameter per micro-batch), work that the one-batch step (``accumulate = 1``, priced by
  an earlier version) does not do: on ``base`` Token-ID rank 5 (6.2 billion parameters,
  mostly the tables; 8 micro-batches) 0.2% more FLOPs and 26-33% more bytes accessed.

Experts: the plan's target is an accelerator, so a config's ``expert_impl="auto"`` is planned
as ``ragged`` (:func:`target_config`; the row says which). ``ragged_dot`` has no grouped kernel
on the CPU compiler (JAX lowers it to a dense product over every bucket), so the step is traced
inside :func:`lshsim.t5.experts.priced_on_host`: the grouped matmul is priced as one dense
product of the same operands and results, the FLOPs and buffers of XLA's GPU/TPU kernel.

Caveat: the numbers are those of XLA's CPU compiler. The arguments (state and batch shards)
are the same on a GPU or TPU, but fusion, and so temporary bytes and bytes accessed, differs
by backend: the temporaries are an estimate, and the bytes accessed (unfused on CPU) make the
roofline's memory time an upper bound.

Devices: the mesh needs ``data * model`` devices of the CPU backend, which exist only if
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` was set before JAX initialised its
backends. :func:`host_device_flags` gives the environment; ``lshsim plan`` sets it before
importing JAX, or re-runs itself in a child process that has it (see :mod:`lshsim.cli.plan`).

References:
    The JAX ahead-of-time lowering documentation (``jax.stages``); XLA's
    ``HloCostAnalysis`` and ``BufferAssignment``; Williams et al. 2009 (roofline).
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Mapping
from typing import Any

from lshsim._validate import check_int
from lshsim.t5.configs import T5Config, get_config
from lshsim.t5.hardware import Hardware, get_hardware, roofline
from lshsim.t5.scan import whole_cost, xla_cost

#: The ``XLA_FLAGS`` flag that creates host devices.
DEVICE_FLAG = "--xla_force_host_platform_device_count"
#: The ``XLA_FLAGS`` flag that skips LLVM's optimisation of the CPU code.
FAST_COMPILE = "--xla_backend_optimization_level=0"


def host_device_flags(devices: int, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment variables that give a fresh JAX process ``devices`` CPU devices.

    ``XLA_FLAGS`` keeps its other flags; a device-count flag already there is replaced. LLVM's
    optimisation of the CPU code is turned off (:data:`FAST_COMPILE`): a plan never runs the
    code, and the memory and cost analyses come from the HLO passes before it (the same
    numbers, measured, in half the compile time on ``tiny``).
    """
    env = dict(os.environ if environ is None else environ)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith(DEVICE_FLAG)]
    flags.append(f"{DEVICE_FLAG}={devices}")
    if not any(f.startswith(FAST_COMPILE.split("=")[0]) for f in flags):
        flags.append(FAST_COMPILE)
    return {"XLA_FLAGS": " ".join(flags), "JAX_PLATFORMS": "cpu"}


def host_mesh(data: int, model: int):
    """A ``("data", "model")`` mesh over the first ``data * model`` CPU devices.

    Raises:
        ValueError: fewer CPU devices than ``data * model`` (JAX started without
            :func:`host_device_flags`).
    """
    import jax
    import numpy as np
    from jax.sharding import Mesh

    devices = jax.devices("cpu")
    n = data * model
    if n > len(devices):
        raise ValueError(
            f"mesh: data x model = {n} needs {n} host devices, JAX has {len(devices)} (start it "
            f"with XLA_FLAGS={DEVICE_FLAG}={n})"
        )
    return Mesh(np.asarray(devices[:n], dtype=object).reshape(data, model), ("data", "model"))


def state_shardings(config: T5Config, abstract_state, mesh):
    """The sharding pytree of the train state on ``mesh``, by the model's logical-axis rules.

    Raises:
        ValueError: a ``model`` size that does not divide a dimension it splits.
    """
    from lshsim.t5 import sharding
    from lshsim.t5.model import param_specs

    return sharding.state_shardings(abstract_state, mesh, param_specs(config))


def _lengths(config: T5Config, input_length: int | None, target_length: int | None):
    from lshsim.t5.budget import check_lengths
    from lshsim.t5.data.spans import compute_input_and_target_lengths

    input_length, target_length = check_lengths(input_length, target_length)
    length = input_length or config.input_length
    return length, target_length or compute_input_and_target_lengths(length)[1]


def abstract_batch(batch: int, input_length: int, target_length: int, sharding=None) -> dict:
    """The span-corruption batch as ``jax.ShapeDtypeStruct`` leaves (int32 ids and weights)."""
    import jax
    import jax.numpy as jnp

    def spec(n):
        return jax.ShapeDtypeStruct((batch, n), jnp.int32, sharding=sharding)

    return {
        "encoder_input_tokens": spec(input_length),
        "decoder_input_tokens": spec(target_length),
        "decoder_target_tokens": spec(target_length),
        "decoder_loss_weights": spec(target_length),
    }


def _shard_bytes(abstract, shardings) -> int:
    import jax

    leaves = jax.tree_util.tree_leaves(abstract)
    specs = jax.tree_util.tree_leaves(shardings)
    return sum(
        math.prod(s.shard_shape(x.shape)) * x.dtype.itemsize
        for x, s in zip(leaves, specs, strict=True)
    )


def _check_mesh(batch: int, accumulate: int, data: int, model: int) -> None:
    data = check_int("mesh data", data, 1)
    model = check_int("mesh model", model, 1)
    if batch % accumulate:
        raise ValueError(f"accumulate must divide the batch ({batch}), got {accumulate}")
    if (batch // accumulate) % data:
        raise ValueError(
            f"mesh: data={data} must divide the micro-batch (batch / accumulate = "
            f"{batch // accumulate})"
        )


def compile_step(
    config: T5Config, data: int, model: int, batch: int, accumulate: int, lengths: tuple[int, int]
) -> dict[str, Any]:
    """Lower and compile the train step for the mesh on abstract inputs.

    Returns:
        ``{"compiled", "params", "totals", "compile_seconds", "state_bytes", "batch_bytes"}``:
        the executable, the abstract parameters, ``totals()`` (the whole step's FLOPs and
        the loop factors of :func:`analyse`, computed when called: it lowers the body of
        each loop, :func:`lshsim.t5.scan.body_cost` (micro-batches, scanned layers), which a
        mesh that does not fit never needs), and the state's and the batch's bytes on one
        device (from the shardings, exact).
    """
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    from lshsim.t5.experts import priced_on_host
    from lshsim.t5.steps import make_train_step

    mesh = host_mesh(data, model)
    optimizer, state = _abstract(config)
    state_sh = state_shardings(config, state, mesh)
    batch_sh = NamedSharding(mesh, PartitionSpec("data"))
    out_sh = (state_sh, NamedSharding(mesh, PartitionSpec()))
    inputs = abstract_batch(batch, *lengths)
    step = jax.jit(
        make_train_step(config, optimizer, 0, accumulate),
        in_shardings=(state_sh, batch_sh),
        out_shardings=out_sh,
        donate_argnums=0,
    )
    t0 = time.perf_counter()
    with jax.set_mesh(mesh), priced_on_host():
        traced = step.trace(state, inputs)
        lowered = traced.lower()
        compiled = lowered.compile()
    seconds = time.perf_counter() - t0

    def totals() -> tuple[float, tuple[float, float]]:
        """``(flops_total, loop_scale)``: the unpartitioned step's FLOPs and the factors."""
        with jax.set_mesh(mesh):
            return whole_cost(traced, lowered)

    return {
        "compiled": compiled,
        "params": state["params"],
        "totals": totals,
        "compile_seconds": seconds,
        "state_bytes": _shard_bytes(state, state_sh),
        "batch_bytes": _shard_bytes(inputs, jax.tree_util.tree_map(lambda _: batch_sh, inputs)),
    }


@functools.lru_cache(maxsize=4)
def _abstract(config: T5Config):
    """``(optimizer, abstract train state)`` of ``config``, traced once per config.

    :func:`minimal_plan` needs the state for every mesh it tries, twice (the bound, then the
    compile): one ``jax.eval_shape`` of the initialisation (1.1-1.3 s of CPU for ``base``).
    """
    from lshsim.t5.steps import abstract_state, make_optimizer

    optimizer = make_optimizer(config)
    return optimizer, abstract_state(config, optimizer)


def analyse(compiled, loop_scale: tuple[float, float] = (1.0, 1.0)) -> dict[str, float]:
    """Per-device bytes (memory analysis) and FLOPs and bytes accessed (cost analysis).

    ``loop_scale``: factors for the FLOPs and bytes accessed of a step whose micro-batches
    run in a loop, whose body XLA's cost analysis counts once (see :func:`plan`).
    """
    mem = compiled.memory_analysis()
    flops, accessed = xla_cost(compiled.cost_analysis())
    out = {
        "argument_bytes": int(mem.argument_size_in_bytes),
        "output_bytes": int(mem.output_size_in_bytes),
        "temp_bytes": int(mem.temp_size_in_bytes),
        "alias_bytes": int(mem.alias_size_in_bytes),
        "generated_code_bytes": int(mem.generated_code_size_in_bytes),
    }
    out["per_device_bytes"] = (
        out["argument_bytes"] + out["output_bytes"] + out["temp_bytes"] - out["alias_bytes"]
    )
    out["flops_per_step"] = flops * loop_scale[0]
    out["bytes_accessed_per_step"] = accessed * loop_scale[1]
    return out


def target_config(config: T5Config | str) -> T5Config:
    """The config as the plan's accelerator runs it: ``expert_impl="auto"`` is ``ragged``.

    Args:
        config: a config or its name.

    Returns:
        The config with :func:`lshsim.t5.experts.resolve_expert_impl` applied for an
        accelerator (an explicit ``gather`` or ``ragged`` is kept).
    """
    from lshsim.t5.experts import resolve_expert_impl

    cfg = get_config(config)
    impl = resolve_expert_impl(cfg.expert_impl, "accelerator")
    return cfg if impl == cfg.expert_impl else cfg.replace(expert_impl=impl)


def plan(
    config: T5Config | str,
    *,
    data: int = 1,
    model: int = 1,
    batch: int | None = None,
    accumulate: int = 1,
    input_length: int | None = None,
    target_length: int | None = None,
    hardware: str | Hardware | None = None,
    hardware_table: Mapping[str, Hardware] | None = None,
    flops_when_unfit: bool = True,
) -> dict[str, Any]:
    """The per-device memory, FLOPs and roofline of one training step on a mesh.

    Args:
        config: a config or its name (its ``dtype`` is the compute dtype).
        data: devices along the batch axis.
        model: devices along the parameter axis.
        batch: examples per step (default: the config's).
        accumulate: micro-batches per step (divides ``batch``; ``data`` divides the
            micro-batch).
        input_length: encoder tokens (default: the config's).
        target_length: decoder tokens (default: what span corruption needs).
        hardware: a :data:`lshsim.t5.hardware.HARDWARE` name: adds ``fits``, the roofline
            and the MFU bound.
        hardware_table: look ``hardware`` up here instead (tests).
        flops_when_unfit: ``False``: a step that does not fit ``hardware`` is reported by its
            memory only (the FLOPs, ``flops_per_step*``, ``bytes_accessed_per_step`` and the
            roofline left out), sparing the whole step's FLOPs (with ``accumulate > 1``, a
            lowering of the micro-batch loop): :func:`minimal_plan`'s meshes that do not fit.

    Returns:
        A JSON-ready dict: ``mesh``, ``devices``, the shapes, ``expert_impl`` (the one
        planned), ``scan_layers`` (layers scanned or unrolled), ``params`` (counts by part),
        ``state_bytes`` and ``batch_bytes`` (per device, from the shardings), the
        :func:`analyse` figures (``per_device_bytes``, ``flops_per_step`` per device),
        ``flops_per_step_total``, ``compile_seconds``; with ``hardware`` also ``hardware``,
        ``fits`` and the :func:`lshsim.t5.hardware.roofline` figures.

    Raises:
        ValueError: invalid sizes (one line naming the parameter).
    """
    from lshsim.t5.params import count_tree

    cfg = target_config(config)
    batch = check_int("batch", cfg.batch_size if batch is None else batch, 1)
    accumulate = check_int("accumulate", accumulate, 1)
    _check_mesh(batch, accumulate, data, model)
    hw = None if hardware is None else get_hardware(hardware, hardware_table)
    lengths = _lengths(cfg, input_length, target_length)
    res = compile_step(cfg, data, model, batch, accumulate, lengths)
    out: dict[str, Any] = {
        "config": cfg.name,
        "dtype": cfg.dtype,
        "expert_impl": cfg.expert_impl,
        "scan_layers": cfg.scanned,
        "mesh": {"data": data, "model": model},
        "devices": data * model,
        "batch": batch,
        "accumulate": accumulate,
        "input_length": lengths[0],
        "target_length": lengths[1],
        "params": count_tree(res["params"]),
        "state_bytes": res["state_bytes"],
        "batch_bytes": res["batch_bytes"],
        **analyse(res["compiled"]),
        "compile_seconds": res["compile_seconds"],
    }
    if hw is not None and not flops_when_unfit and out["per_device_bytes"] > hw.hbm_bytes:
        for key in ("flops_per_step", "bytes_accessed_per_step"):
            del out[key]
        out.update(hardware=hw.to_dict(), fits=False)
        out["headroom_bytes"] = hw.hbm_bytes - out["per_device_bytes"]
        return out
    flops_total, loop_scale = res["totals"]()
    out.update(analyse(res["compiled"], loop_scale), flops_per_step_total=flops_total)
    if hw is not None:
        out.update(fit(out["per_device_bytes"], out["flops_per_step"], out, hw))
    return out


def fit(per_device_bytes: int, flops: float, row: Mapping[str, Any], hw: Hardware) -> dict:
    """``hardware``, ``fits``, ``headroom_bytes`` and the roofline of one planned step."""
    return {
        "hardware": hw.to_dict(),
        "fits": per_device_bytes <= hw.hbm_bytes,
        "headroom_bytes": hw.hbm_bytes - per_device_bytes,
        **roofline(flops, row.get("bytes_accessed_per_step", 0.0), hw),
    }


def candidate_meshes(max_devices: int, batch: int, accumulate: int) -> list[tuple[int, int]]:
    """``(data, model)`` in the order :func:`minimal_plan` tries them.

    Device counts 1, 2, 4, ... up to ``max_devices``; for each, ``model`` = 1, 2, 4, ...
    (``data`` the rest), keeping the meshes whose ``data`` divides the micro-batch.
    """
    out = []
    n = 1
    while n <= max_devices:
        model = 1
        while model <= n:
            data = n // model
            if (batch // accumulate) % data == 0:
                out.append((data, model))
            model *= 2
        n *= 2
    return out


def _state_bound(config: T5Config, data: int, model: int, batch: int, lengths) -> int:
    """The state's and batch's bytes on one device (a lower bound of the plan), no compile."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    mesh = host_mesh(data, model)
    state = _abstract(config)[1]
    inputs = abstract_batch(batch, *lengths)
    batch_sh = NamedSharding(mesh, PartitionSpec("data"))
    return _shard_bytes(state, state_shardings(config, state, mesh)) + _shard_bytes(
        inputs, jax.tree_util.tree_map(lambda _: batch_sh, inputs)
    )


def minimal_plan(
    config: T5Config | str,
    *,
    hardware: str | Hardware,
    batch: int | None = None,
    accumulate: int = 1,
    max_devices: int = 64,
    input_length: int | None = None,
    target_length: int | None = None,
    hardware_table: Mapping[str, Hardware] | None = None,
    on_try=None,
) -> dict[str, Any]:
    """The fewest devices, and the mesh, whose planned step fits ``hardware``'s memory.

    Tries :func:`candidate_meshes` in order and returns at the first whose
    ``per_device_bytes`` fits. A mesh whose state and batch shards alone exceed the memory
    (computed from the shardings, no compile) or whose ``model`` does not divide a sharded
    dimension is skipped without compiling.

    Args:
        config: a config or its name.
        hardware: the device (a :data:`lshsim.t5.hardware.HARDWARE` name or entry).
        batch: examples per step (default: the config's).
        accumulate: micro-batches per step.
        max_devices: the largest device count tried (needs that many host devices).
        input_length: encoder tokens (default: the config's).
        target_length: decoder tokens (default: what span corruption needs).
        hardware_table: look ``hardware`` up here instead (tests).
        on_try: called with each tried mesh's entry (progress).

    Returns:
        ``{"best": plan or None, "tried": [...], "max_devices", "hardware"}``; each tried
        entry has ``data``, ``model`` and ``per_device_bytes`` and ``fits``, or ``skipped``
        (the reason).

    Raises:
        ValueError: invalid sizes or an unknown hardware name.
    """
    cfg = target_config(config)
    hw = get_hardware(hardware, hardware_table)
    batch = check_int("batch", cfg.batch_size if batch is None else batch, 1)
    accumulate = check_int("accumulate", accumulate, 1)
    max_devices = check_int("max_devices", max_devices, 1)
    _check_mesh(batch, accumulate, 1, 1)
    lengths = _lengths(cfg, input_length, target_length)
    tried: list[dict[str, Any]] = []
    best = None
    for data, model in candidate_meshes(max_devices, batch, accumulate):
        entry: dict[str, Any] = {"data": data, "model": model}
        try:
            bound = _state_bound(cfg, data, model, batch, lengths)
        except ValueError as exc:  # a model axis that does not divide a sharded dimension
            entry["skipped"] = str(exc)
            bound = None
        if bound is not None and bound > hw.hbm_bytes:
            entry["skipped"] = f"state and batch alone {bound / 1e9:.2f} GB per device"
        if "skipped" not in entry:
            row = plan(
                cfg,
                data=data,
                model=model,
                batch=batch,
                accumulate=accumulate,
                input_length=lengths[0],
                target_length=lengths[1],
                hardware=hw,
                flops_when_unfit=False,
            )
            entry.update(per_device_bytes=row["per_device_bytes"], fits=row["fits"])
            best = row if row["fits"] else None
        tried.append(entry)
        if on_try is not None:
            on_try(entry)
        if best is not None:
            break
    return {"best": best, "tried": tried, "max_devices": max_devices, "hardware": hw.to_dict()}
