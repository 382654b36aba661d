"""The GPU check's workers: one measurement each, in the check's process or in a child.

A worker takes a job dict (:func:`lshsim.bench.gpu.settings.build_jobs`) and returns a
JSON-ready result with a ``status``; :func:`run_worker` turns an exception into a status, so
one failing row never stops the others.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from lshsim.bench.gpu.settings import GB, ROW_KEY, variant_config

_T0 = time.monotonic()


def phase(name: str) -> None:
    """Mark the phase a worker is in: logged, and kept for the parent's status at a timeout.

    Args:
        name: the phase (``build``, ``lower``, ``compile``, ``init``, ``steps``).
    """
    log(f"           phase {name} at {time.monotonic() - _T0:.1f} s")
    if os.environ.get("GPU_CHECK_PHASE"):
        Path(os.environ["GPU_CHECK_PHASE"]).write_text(f"{name} {time.monotonic() - _T0:.1f}")


def log(msg: str) -> None:
    """A progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


def _device_memory() -> dict[str, int] | None:
    """The first device's ``memory_stats()`` (None on backends without them, like the CPU)."""
    import jax

    stats = jax.devices()[0].memory_stats()
    return dict(stats) if stats else None


def _compile(job: dict[str, Any]):
    """``(config, optimizer, batch, compiled step, result so far)``: the row's step compiled.

    The result holds ``compile_s`` (tracing, lowering and XLA's compile, from a cold cache
    unless the check was given one), the executable's cost analysis
    (``flops_<backend>_cost_analysis``; a scanned stack's loop body counted once per layer,
    :func:`lshsim.t5.scan.whole_cost`) and ``compiled_per_device_bytes``.
    """
    import jax

    from lshsim.bench.t5_step import make_batch
    from lshsim.t5.plan import analyse
    from lshsim.t5.scan import whole_cost
    from lshsim.t5.steps import abstract_state, make_optimizer, make_train_step

    phase("build")
    cfg = variant_config(job["config"], job["variant"], job["dtype"])
    optimizer = make_optimizer(cfg, learning_rate=1.0, warmup_steps=10_000)
    host = make_batch(cfg, job["batch"], job["input_length"], job["target_length"], job["seed"])
    batch = jax.device_put(host)
    step = jax.jit(make_train_step(cfg, optimizer, job["seed"]), donate_argnums=0)
    t0 = time.perf_counter()
    phase("lower")
    traced = step.trace(abstract_state(cfg, optimizer), batch)
    lowered = traced.lower()
    phase("compile")
    compiled = lowered.compile()
    out: dict[str, Any] = {"compile_s": time.perf_counter() - t0, "scan_layers": cfg.scanned}
    try:
        analysis = analyse(compiled, whole_cost(traced, lowered)[1])
    except Exception as exc:  # a JAX whose analyses differ: the step is timed all the same
        analysis = {}
        out["analysis_error"] = f"{type(exc).__name__}: {exc}"[:300]
    out[f"flops_{jax.default_backend()}_cost_analysis"] = analysis.get("flops_per_step")
    out["compiled_per_device_bytes"] = analysis.get("per_device_bytes")
    out["bytes_limit"] = (_device_memory() or {}).get("bytes_limit")
    return cfg, optimizer, batch, compiled, out


def compile_step(job: dict[str, Any]) -> dict[str, Any]:
    """Compile one paper variant's train step without running it (its compile time).

    Args:
        job: as :func:`measure_step`'s (``warmup`` and ``steps`` unused).

    Returns:
        ``status``, ``compile_s``, ``scan_layers``, the cost and memory analyses' figures.
    """
    return {**_compile(job)[4], "status": "ok"}


def measure_step(job: dict[str, Any]) -> dict[str, Any]:
    """Compile, initialise, run and time one config's train step; its FLOPs and memory.

    Args:
        job: ``config``, ``variant``, ``dtype``, ``batch``, ``input_length``,
            ``target_length``, ``warmup``, ``steps`` and ``seed``.

    Returns:
        ``status`` (``ok``, or why not), ``times_s``, ``loss_at_init``, ``finite``,
        ``flops_<backend>_cost_analysis`` (XLA's cost analysis of the executable, e.g.
        ``flops_gpu_cost_analysis``), ``compiled_per_device_bytes`` (arguments + outputs +
        temporaries - aliases of the compiled step), ``peak_bytes``, ``bytes_limit``,
        ``compile_s``, ``init_s`` (compiling and running the initialisation),
        ``init_compile_s`` (its compile) and ``init_per_device_bytes`` (its arguments +
        outputs + temporaries, XLA's memory analysis).
    """
    import jax

    from lshsim.t5.plan import analyse
    from lshsim.t5.steps import seed_key_data, state_initializer

    cfg, optimizer, batch, compiled, out = _compile(job)
    need = out["compiled_per_device_bytes"]
    if out["bytes_limit"] and need and need > out["bytes_limit"]:
        text = f"{need / GB:.1f} GB, {out['bytes_limit'] / GB:.1f} GB usable"
        return {**out, "status": f"does not fit: XLA needs {text}"}
    t0 = time.perf_counter()
    phase("init")
    # Compiled with the seed as an input (lshsim.t5.steps.state_initializer): a jit without
    # arguments is all constants, which XLA's GPU compiler folds on its host.
    key = seed_key_data(job["seed"])
    init = jax.jit(state_initializer(cfg, optimizer)).lower(key).compile()
    out["init_compile_s"] = time.perf_counter() - t0
    try:
        out["init_per_device_bytes"] = analyse(init)["per_device_bytes"]
    except Exception as exc:  # a backend without the analysis: the init is run all the same
        out["init_analysis_error"] = f"{type(exc).__name__}: {exc}"[:300]
    state = init(key)
    jax.block_until_ready(state)
    out["init_s"] = time.perf_counter() - t0
    phase("steps")
    times = []
    for i in range(job["warmup"] + job["steps"]):
        t0 = time.perf_counter()
        state, metrics = compiled(state, batch)
        jax.block_until_ready((state, metrics))
        if i == 0:
            out["loss_at_init"] = float(metrics["loss"])
        if i >= job["warmup"]:
            times.append(time.perf_counter() - t0)
    out["finite"] = bool(metrics["finite"]) and bool(metrics["params_finite"])
    out["times_s"] = times
    out["peak_bytes"] = (_device_memory() or {}).get("peak_bytes_in_use")
    return {**out, "status": "ok"}


def measure_loss(job: dict[str, Any]) -> dict[str, Any]:
    """Cross-entropy at initialisation of the bf16 and the float32 model on one batch.

    The float32 reference runs with float32 matmuls (``jax.default_matmul_precision``; a GPU
    would otherwise use TF32 for them); the float32 model at the default precision and the
    bf16 model (default precision, as trained) are compared to it.

    Args:
        job: ``config``, ``batch``, ``input_length``, ``target_length`` and ``seed``.

    Returns:
        ``loss_float32``, ``loss_float32_default_precision``, ``loss_bfloat16``, their
        differences (``abs_diff``, ``rel_diff``: bf16 against the reference) and the
        per-token cross-entropy differences ``per_token_max`` and ``per_token_rms``.
    """
    import jax
    import numpy as np

    from lshsim.bench.t5_step import make_batch
    from lshsim.t5.bands import token_loss
    from lshsim.t5.steps import init_state, make_optimizer

    cfg = variant_config(job["config"], "baseline", "float32")
    params = init_state(cfg, make_optimizer(cfg), job["seed"])["params"]
    host = make_batch(cfg, job["batch"], job["input_length"], job["target_length"], job["seed"])
    batch = jax.device_put(host)

    def per_token(dtype: str):
        return np.asarray(token_loss(cfg.replace(dtype=dtype))(params, batch), np.float64)

    with jax.default_matmul_precision("float32"):
        ref = per_token("float32")
    # The CPU's default is float32 already: the same program, not compiled twice.
    default32 = ref if jax.default_backend() == "cpu" else per_token("float32")
    bf16 = per_token("bfloat16")
    weights = np.asarray(host["decoder_loss_weights"], np.float64)

    def loss(ce):
        return float(np.sum(ce * weights) / np.sum(weights))

    diff = (bf16 - ref)[weights > 0]
    out = {
        "loss_float32": loss(ref),
        "loss_float32_default_precision": loss(default32),
        "loss_bfloat16": loss(bf16),
        "per_token_max": float(np.max(np.abs(diff))),
        "per_token_rms": float(np.sqrt(np.mean(diff**2))),
        "tokens": int(diff.size),
    }
    out["abs_diff"] = out["loss_bfloat16"] - out["loss_float32"]
    out["rel_diff"] = abs(out["abs_diff"]) / abs(out["loss_float32"])
    return {**out, "status": "ok"}


def plan_rows(job: dict[str, Any]) -> dict[str, Any]:
    """``lshsim plan`` (:func:`lshsim.t5.plan.plan`, 1 x 1 mesh) of each row, one line each.

    Meant for a child process on the CPU backend with :func:`lshsim.t5.plan.host_device_flags`
    (as ``lshsim plan`` runs); appends a JSON line per row to ``job["lines"]`` as it goes.

    Args:
        job: ``rows`` (dicts with ``config``, ``variant``, ``dtype``, ``batch``,
            ``input_length``, ``target_length``) and ``lines`` (the JSON-lines file).

    Returns:
        ``{"status": "ok", "planned": n}``.
    """
    from lshsim.t5.plan import plan

    for row in job["rows"]:
        entry = {k: row[k] for k in ROW_KEY}
        try:
            res = plan(
                variant_config(row["config"], row["variant"], row["dtype"]),
                batch=row["batch"],
                input_length=row["input_length"],
                target_length=row["target_length"],
            )
            entry.update(
                per_device_bytes=res["per_device_bytes"],
                flops_per_step=res["flops_per_step"],
                compile_seconds=res["compile_seconds"],
            )
        except Exception as exc:  # a row that cannot be planned does not stop the others
            entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
        with open(job["lines"], "a") as fh:
            fh.write(json.dumps(entry) + "\n")
    return {"status": "ok", "planned": len(job["rows"])}


WORKERS = {"step": measure_step, "compile": compile_step, "loss": measure_loss, "plans": plan_rows}


def run_worker(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job, turning an exception into a ``status`` (out of memory, error).

    Args:
        job: a job dict with ``kind`` in :data:`WORKERS`.

    Returns:
        The worker's result, or ``{"status": "...", "error": ...}``.
    """
    try:
        return WORKERS[job["kind"]](job)
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}"
        oom = "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower()
        kind = "out of memory" if oom else "error"
        return {"status": f"{kind}: {text.splitlines()[0][:200]}", "error": text[-2000:]}
