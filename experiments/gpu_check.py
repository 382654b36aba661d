"""One short GPU session's measurements of lshsim's T5: step time, MFU, memory, bf16 loss.

Usage, on the GPU machine, from the repository root (nothing to install)::

    PYTHONPATH=. python3 experiments/gpu_check.py --out $OUT/GPU.md --json $OUT/gpu.json

What it measures, in this priority order (the most wanted first), until ``--deadline-s``
(default 300 s) comes; then it writes what it has and exits 0:

1. ``small`` baseline train step; 2. bf16 vs float32 loss at initialisation (``small``);
3. ``base`` baseline; 4. the memory variants of ``small`` (AltUp K=2, product keys,
Token-ID partial experts rank 5), then of ``base``.

Per train-step row: the compiled step of :func:`lshsim.t5.steps.make_train_step` (T5's Adafactor
at the warmup rate 0.01, as ``lshsim.bench.t5_step``) with the state donated, on a seeded random
span-corruption-shaped batch (:func:`lshsim.bench.t5_step.make_batch`), bf16 compute (parameters
and logits stay float32). ``--warmup`` untimed steps, then ``--steps`` timed ones, each to
``jax.block_until_ready``: median and IQR. MFU is ``flops / median step time / peak`` with the
device's dense bf16 peak (:data:`lshsim.t5.hardware.HARDWARE`), where ``flops`` is the CPU
compiler's cost analysis of the same step (optimiser included): ``lshsim plan``'s
``flops_per_step`` from the background planner below (on the CPU fallback, the measured
executable's own). XLA's GPU cost analysis misses the work of the library (cuBLAS/cuDNN) custom
calls: it reported 1.26 TFLOP/step for ``small`` at batch 64, 512/114, where the CPU compiler
counts 5.83; it stays in the JSON as ``flops_gpu_cost_analysis``, unused. Without a plan
(``--no-plan``, or not planned by the deadline) the FLOPs are an analytic estimate of a dense T5
of the config's widths (matmuls, attention, logits; forward x 3), which leaves out the memory
layers' own work. ``flops_source`` says which count MFU used, and the log prints it. Memory:
``peak_bytes_in_use`` of the device after the timed steps, each row in a fresh process (the peak
only grows within a process), beside ``lshsim plan``'s ``per_device_bytes`` for the same config,
batch, lengths and a 1 x 1 mesh (:func:`lshsim.t5.plan.plan`, compiled for the CPU as ``lshsim
plan`` does, in a background process that plans the rows in the same order while the GPU
measures) and beside the same formula on the GPU executable's own ``memory_analysis()``.

Batches: the paper pretrains at batch 256 with lengths 512/114; here each step is one
batch of 64 (``small``) or 32 (``base``) at 512/114. ``lshsim plan`` (bf16, mesh 1x1, CPU
compiler of jax 0.10.2; jax 0.11.2's gives 19.7, 20.7, 31.1, 36.6, 38.4, 41.6 and 80.0 GB for
the same rows) puts them at 20.3 GB (small baseline), 21.4 (AltUp), 34.3 (Token-ID r5), 38.7
(base baseline), 40.5 (base AltUp) and 43.6 (base product keys): all fit an 80 GB device.
Base with Token-ID rank 5 (5.9e9 parameters, 24.7 GB of state) plans at 94.1 GB at batch 32
(76.1 GB at batch 8: the gradients and the update do not shrink with the batch): it fits a
141 GB H200, not an 80 GB H100. It comes last; a row whose GPU executable needs more memory
than the device gives this process is reported as not fitting, without running.

Compilation dominates (expected: tens of seconds per row on a GPU; a step takes
milliseconds); JAX's persistent cache in ``.jax_cache/`` (``--no-compile-cache`` to skip)
makes a rerun on the same machine fast.

Without a GPU (``jax.default_backend() == "cpu"``) it prints ``no GPU: jax backend is cpu;
running the tiny CPU check`` and runs the same pipeline on ``tiny`` (baseline, batch 2,
lengths 32/8, all in this process): a smoke test of the script, not a measurement.

Outputs (rewritten atomically after every measurement, so a killed run leaves a file):
Markdown (``--out``, default ``figures/GPU.md``) and JSON (``--json``, default
``figures/gpu.json``). A SIGTERM writes them too, marking the unfinished rows, and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = "lshsim-gpu-check/1"
NO_GPU = "no GPU: jax backend is {}; running the tiny CPU check"

#: The measured variants: config-field changes on top of a named config.
VARIANTS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "tokenid-r5": {"lookup": "tokenid", "expert_rank": 5},
    "altup-k2": {"memory": "altup", "memory_k": 2},
    "productkey": {"lookup": "productkey", "buckets": 1024, "topk": 2},
}
#: What each variant is (the Markdown's legend).
VARIANT_NOTES = {
    "baseline": "no external memory",
    "tokenid-r5": "Token-ID partial experts, rank 5, every layer (--lookup tokenid --rank 5)",
    "altup-k2": "AltUp, K = 2 (--memory altup --K 2)",
    "productkey": "product keys, 1024 slots, top-2 (--lookup productkey --buckets 1024 --topk 2; "
    "as lshsim cost --compare)",
}
#: Order in which the non-baseline variants are measured (cheapest, surest to fit, first).
RUN_ORDER = ("altup-k2", "productkey", "tokenid-r5")
#: Per-step batch on an accelerator (the paper's 256 is reached with accumulation).
GPU_BATCH = {"tiny": 256, "small": 64, "base": 32, "large": 8}
PAPER_BATCH, PAPER_LENGTHS = 256, (512, 114)
#: Defaults by mode: configs, variants, batch (None: GPU_BATCH), lengths, timed steps,
#: warm-up steps, the loss check's config and batch, rows to plan (None: all).
MODES = {
    "gpu": {
        "configs": ("small", "base"),
        "variants": tuple(VARIANTS),
        "batch": None,
        "lengths": PAPER_LENGTHS,
        "steps": 15,
        "warmup": 2,
        "loss_config": "small",
        "loss_batch": 8,
        "plan_rows": None,
    },
    "cpu": {
        "configs": ("tiny",),
        "variants": ("baseline",),
        "batch": 2,
        "lengths": (32, 8),
        "steps": 3,
        "warmup": 1,
        "loss_config": "tiny",
        "loss_batch": 2,
        "plan_rows": 1,
    },
}
#: The GPU memory fraction each row's process may take (JAX's default is 0.75).
MEM_FRACTION = "0.90"
#: A job is not started with fewer seconds than this left; a child gets the rest less MARGIN_S.
MIN_JOB_S, MARGIN_S = 3.0, 2.0
#: Dense bf16 peaks of parts :data:`lshsim.t5.hardware.HARDWARE` does not list (data sheets).
EXTRA_PEAKS = {"h100 pcie": 756e12, "h100 nvl": 835e12, "h200 nvl": 835e12}
GB = 1e9
_T0 = time.monotonic()


# ---------------------------------------------------------------------------------------------
# Workers: one measurement each, in this process or in a child (``--worker``).


def variant_config(config: str, variant: str, dtype: str):
    """The named config with a variant's memory fields and the compute dtype.

    Args:
        config: a :data:`lshsim.t5.configs.CONFIGS` name.
        variant: a :data:`VARIANTS` key.
        dtype: the compute dtype (``bfloat16`` or ``float32``).

    Returns:
        The :class:`lshsim.t5.configs.T5Config`.
    """
    from lshsim.t5.configs import get_config

    return get_config(config).replace(dtype=dtype, **VARIANTS[variant])


def _device_memory() -> dict[str, int] | None:
    """The first device's ``memory_stats()`` (None on backends without them, like the CPU)."""
    import jax

    stats = jax.devices()[0].memory_stats()
    return dict(stats) if stats else None


def measure_step(job: dict[str, Any]) -> dict[str, Any]:
    """Compile, run and time one config's train step; its FLOPs and memory.

    Args:
        job: ``config``, ``variant``, ``dtype``, ``batch``, ``input_length``,
            ``target_length``, ``warmup``, ``steps`` and ``seed``.

    Returns:
        ``status`` (``ok``, or why not), ``times_s``, ``loss_at_init``, ``finite``,
        ``flops_<backend>_cost_analysis`` (XLA's cost analysis of the executable, e.g.
        ``flops_gpu_cost_analysis``), ``compiled_per_device_bytes`` (arguments + outputs +
        temporaries - aliases of the compiled step), ``peak_bytes``, ``bytes_limit``,
        ``compile_s`` and ``init_s``.
    """
    import jax
    import jax.numpy as jnp

    from lshsim.bench.t5_step import make_batch
    from lshsim.t5.plan import analyse
    from lshsim.t5.scan import whole_cost
    from lshsim.t5.steps import abstract_state, init_state, make_optimizer, make_train_step

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
    out: dict[str, Any] = {"compile_s": time.perf_counter() - t0}
    try:  # a scanned stack's loop body counted once per layer (lshsim.t5.scan.whole_cost)
        analysis = analyse(compiled, whole_cost(traced, lowered)[1])
    except Exception as exc:  # a JAX whose analyses differ: the step is timed all the same
        analysis = {}
        out["analysis_error"] = f"{type(exc).__name__}: {exc}"[:300]
    out[f"flops_{jax.default_backend()}_cost_analysis"] = analysis.get("flops_per_step")
    need = out["compiled_per_device_bytes"] = analysis.get("per_device_bytes")
    out["bytes_limit"] = (_device_memory() or {}).get("bytes_limit")
    if out["bytes_limit"] and need and need > out["bytes_limit"]:
        text = f"{need / GB:.1f} GB, {out['bytes_limit'] / GB:.1f} GB usable"
        return {**out, "status": f"does not fit: XLA needs {text}"}
    t0 = time.perf_counter()
    phase("init")
    # The seed's key is an argument: a jit of no arguments is all constants, which XLA's GPU
    # compiler constant-folds (threefry over every parameter, on its slow evaluator): base's
    # init ran over 120 s on an H100 that way, where the CPU compiles it in 14 s.
    state = jax.jit(lambda key: init_state(cfg, optimizer, key))(jnp.asarray(job["seed"]))
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
    import jax.numpy as jnp
    import numpy as np

    from lshsim.bench.t5_step import make_batch
    from lshsim.t5.model import T5, init_params

    cfg = variant_config(job["config"], "baseline", "float32")
    params = jax.jit(lambda seed: init_params(cfg, jax.random.key(seed)))(jnp.asarray(job["seed"]))
    host = make_batch(cfg, job["batch"], job["input_length"], job["target_length"], job["seed"])
    batch = jax.device_put(host)

    def per_token(dtype: str):
        model = T5(cfg.replace(dtype=dtype))

        def ce(p, b):
            logits = model.apply(
                {"params": p},
                b["encoder_input_tokens"],
                b["decoder_input_tokens"],
                b["decoder_target_tokens"],
            )
            target = jnp.take_along_axis(logits, b["decoder_target_tokens"][..., None], -1)
            return jax.nn.logsumexp(logits, axis=-1) - target[..., 0]

        return np.asarray(jax.jit(ce)(params, batch), np.float64)

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
        entry = {k: row[k] for k in _ROW_KEY}
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


WORKERS = {"step": measure_step, "loss": measure_loss, "plans": plan_rows}
_ROW_KEY = ("config", "variant", "dtype", "batch", "input_length", "target_length")


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


# ---------------------------------------------------------------------------------------------
# The report: results, Markdown and JSON, written atomically after every change.


def _fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)


#: What each ``flops_source`` means (the log, the Markdown and the JSON's ``flops_note``).
FLOPS_SOURCES = {
    "cpu-plan": "XLA's CPU compiler, cost analysis of the same step (lshsim plan, mesh 1x1)",
    "cpu-step": "XLA's CPU compiler, cost analysis of the measured step itself",
    "analytic": "analytic estimate: dense T5 of the config's widths (matmuls, attention, "
    "logits), forward x 3; the memory layers' own work not counted",
    "none": "no FLOP count",
}
FLOPS_NOTE = (
    "MFU uses flops_per_step, from flops_source (see flops_sources). flops_gpu_cost_analysis "
    "is XLA's cost analysis of the GPU executable, kept for reference and not used: it misses "
    "the library (cuBLAS/cuDNN) custom-call matrix products: on an H100 it gave 0.21 to 0.24 "
    "of the CPU compiler's count of the same step (small, batch 64, 512/114)."
)


def analytic_flops(config, batch: int, input_length: int, target_length: int) -> float:
    """FLOPs of one train step of a dense T5 of ``config``'s widths: the forward pass x 3.

    Per layer and token, 2 FLOPs per weight of the attention projections and the gated MLP,
    plus the attention scores and the weighted sum (``4 x keys x heads x d_kv``); the decoder's
    cross-attention keys and values are computed once per encoder token; the logits cost
    ``2 d_model vocab`` per target token. The backward pass is counted as twice the forward.
    Norms, the optimiser and the memory layers' own work (AltUp's extra blocks, lookups,
    experts) are not counted.

    Args:
        config: a :class:`lshsim.t5.configs.T5Config`.
        batch: examples per step.
        input_length: encoder tokens per example.
        target_length: decoder tokens per example.

    Returns:
        FLOPs per step.
    """
    d, inner, ff = config.d_model, config.num_heads * config.d_kv, config.d_ff
    enc_len, dec_len = input_length, target_length
    attn, mlp = 4 * d * inner, 3 * d * ff
    encoder = enc_len * config.num_encoder_layers * (2 * (attn + mlp) + 4 * enc_len * inner)
    per_target = config.num_decoder_layers * (
        2 * (attn + 2 * d * inner + mlp) + 4 * (dec_len + enc_len) * inner
    )
    cross_kv = enc_len * config.num_decoder_layers * 2 * (2 * d * inner)
    decoder = dec_len * (per_target + 2 * d * config.vocab_size)
    return 3.0 * batch * (encoder + cross_kv + decoder)


def step_flops(row: dict[str, Any]) -> tuple[float | None, str]:
    """The FLOPs per step behind MFU, and their :data:`FLOPS_SOURCES` key.

    The CPU compiler's count of the same step first (``plan_flops_per_step``, from
    ``lshsim plan``; on the CPU backend the measured executable's own), then the analytic
    estimate (:func:`analytic_flops`). XLA's GPU cost analysis is never used: it misses the
    library matrix products.

    Args:
        row: a step row (``config``, ``variant``, ``dtype``, ``batch``, the lengths, and
            ``plan_flops_per_step`` or ``flops_cpu_cost_analysis`` where known).

    Returns:
        ``(flops or None, "cpu-plan" | "cpu-step" | "analytic" | "none")``.
    """
    if row.get("plan_flops_per_step"):
        return float(row["plan_flops_per_step"]), "cpu-plan"
    if row.get("flops_cpu_cost_analysis"):
        return float(row["flops_cpu_cost_analysis"]), "cpu-step"
    try:
        cfg = variant_config(row["config"], row["variant"], row["dtype"])
        flops = analytic_flops(cfg, row["batch"], row["input_length"], row["target_length"])
    except (KeyError, ValueError):
        return None, "none"
    return flops, "analytic"


def derive(row: dict[str, Any], peak_flops: float | None) -> dict[str, Any]:
    """Add a measured row's statistics: step time, tokens/s, TFLOP/step, MFU, memory ratios.

    Args:
        row: a step row with the worker's result merged in.
        peak_flops: the device's dense bf16 FLOP/s (None: no MFU).

    Returns:
        ``row`` with ``step_s_median``, ``step_s_iqr``, ``step_s_min``, ``tokens_per_step``,
        ``tokens_per_s``, ``flops_per_step`` and ``flops_source`` (:func:`step_flops`),
        ``mfu`` and ``peak_over_plan`` where the inputs exist.
    """
    from lshsim.bench.timing import summary

    row["tokens_per_step"] = row["batch"] * (row["input_length"] + row["target_length"])
    if row.get("times_s"):
        stats = summary(row["times_s"])
        row["step_s_median"], row["step_s_iqr"], row["step_s_min"] = (
            stats["median"],
            stats["iqr"],
            stats["min"],
        )
        row["tokens_per_s"] = row["tokens_per_step"] / stats["median"]
        row["flops_per_step"], row["flops_source"] = step_flops(row)
        if peak_flops and row["flops_per_step"]:
            row["mfu"] = row["flops_per_step"] / stats["median"] / peak_flops
    if row.get("peak_bytes") and row.get("plan_per_device_bytes"):
        row["peak_over_plan"] = row["peak_bytes"] / row["plan_per_device_bytes"]
    return row


def _row_line(row: dict[str, Any]) -> str:
    lengths = f"{row['input_length']}/{row['target_length']}"
    head = f"| {row['config']} | {row['variant']} | {row['batch']} | {lengths} | {row['dtype']} |"
    gb = {k: (row[k] / GB if row.get(k) else None) for k in _BYTES}
    mem = (
        f" {_fmt(gb['peak_bytes'], '.2f')} | {_fmt(gb['compiled_per_device_bytes'], '.2f')} |"
        f" {_fmt(gb['plan_per_device_bytes'], '.2f')} | {_fmt(row.get('peak_over_plan'), '.2f')} |"
    )
    if "step_s_median" not in row:
        return f"{head} {row.get('status', 'pending')} | | | | |{mem}"
    step = f"{row['step_s_median'] * 1e3:.2f} ({row['step_s_iqr'] * 1e3:.2f})"
    mfu, flops = row.get("mfu"), row.get("flops_per_step")
    gpu = row.get("flops_gpu_cost_analysis")
    return (
        f"{head} {step} | {row['tokens_per_s']:,.0f} |"
        f" {_fmt(None if flops is None else flops / 1e12, '.3g')} | {row.get('flops_source')} |"
        f" {_fmt(None if mfu is None else 100 * mfu, '.1f')} |"
        f" {_fmt(None if gpu is None else gpu / 1e12, '.3g')} |{mem}"
    )


_BYTES = ("peak_bytes", "compiled_per_device_bytes", "plan_per_device_bytes")


def render_markdown(report: dict[str, Any]) -> str:
    """The Markdown of a report (see :class:`Report`).

    Args:
        report: the JSON-ready report dict.

    Returns:
        The Markdown text.
    """
    env, s = report["environment"], report["settings"]
    peak = report.get("peak_flops")
    peak_text = (
        f"{peak / 1e12:.0f} TFLOP/s dense bf16 ({report['peak_source']})" if peak else "unknown"
    )
    lines = [
        "# GPU check: lshsim's T5 train step",
        "",
        f"- date: {report['date']}",
        f"- device: {env['device_kind']} (jax backend {env['backend']}, {env['device_count']} "
        f"device(s)); peak {peak_text}",
        f"- jax {env['jax']} (jaxlib {env['jaxlib']}{env['plugins']}), flax {env['flax']}, "
        f"optax {env['optax']}, numpy {env['numpy']}, Python {env['python']}",
        f"- git commit: {report['git_commit']}",
        f"- compute: {s['dtype']} activations, float32 parameters and logits; T5 Adafactor "
        f"(rate 0.01); {s['warmup']} warm-up + {s['steps']} timed steps per row; "
        f"{'each row in a fresh process' if s['isolate'] else 'all rows in one process'}; "
        f"XLA_PYTHON_CLIENT_MEM_FRACTION={s['mem_fraction']}",
        f"- paper batch {PAPER_BATCH} at lengths {PAPER_LENGTHS[0]}/{PAPER_LENGTHS[1]}; "
        "measured at the per-step batch of each row",
        f"- status: {report['status']} after {report['elapsed_s']:.0f} s "
        f"(deadline {s['deadline_s']:.0f} s)",
        "",
        "## Train step",
        "",
        "| config | variant | batch | lengths | dtype | step ms (median, IQR) | tokens/s |"
        " TFLOP/step | FLOPs from | MFU % | GPU cost-analysis TFLOP | peak GB | XLA GB |"
        " plan GB | peak/plan |",
        "|---|---|---:|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
        *(_row_line(r) for r in report["rows"]),
        "",
        "tokens = batch x (input + target length). TFLOP/step: the FLOPs MFU uses, from (FLOPs"
        " from): "
        + "; ".join(f"`{k}` = {v}" for k, v in FLOPS_SOURCES.items() if k != "none")
        + ". MFU = TFLOP/step / median step time / peak. GPU cost-analysis TFLOP: XLA's"
        " `compiled.cost_analysis()` of the GPU executable, not used: it misses the library"
        " (cuBLAS/cuDNN) matrix products. peak GB:"
        " the device's `peak_bytes_in_use` after the timed steps. XLA GB: arguments + outputs +"
        " temporaries - aliases of the executable measured (`memory_analysis()`). plan GB:"
        " `lshsim plan`'s `per_device_bytes` (`lshsim.t5.plan.plan`, mesh 1x1, CPU compiler)."
        " GB = 1e9 bytes.",
        "",
        *(f"- {name}: {VARIANT_NOTES[name]}" for name in s["variants"]),
        "",
        "## bf16 vs float32 loss at initialisation",
        "",
    ]
    loss = report.get("bf16_vs_fp32") or {}
    if loss.get("status") == "ok":
        lines += [
            "| config | batch | lengths | loss float32 | loss bf16 | bf16 - f32 | relative |"
            " per-token max | per-token rms | f32 at default precision |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
            f"| {loss['config']} | {loss['batch']} | {loss['input_length']}/"
            f"{loss['target_length']} | {loss['loss_float32']:.6f} | {loss['loss_bfloat16']:.6f}"
            f" | {loss['abs_diff']:+.2e} | {loss['rel_diff']:.2e} | {loss['per_token_max']:.2e}"
            f" | {loss['per_token_rms']:.2e} | {loss['loss_float32_default_precision']:.6f} |",
            "",
            "Same parameters (seed 0) and batch; float32 = float32 matmuls throughout; per-token:"
            " |bf16 - f32| cross-entropy over the target tokens.",
        ]
    else:
        lines.append(f"Not measured: {loss.get('status', 'pending')}.")
    return "\n".join(lines) + "\n"


class Report:
    """The results so far, written as Markdown and JSON after every change (thread-safe)."""

    def __init__(self, out: Path, json_path: Path, data: dict[str, Any]):
        """Hold ``data`` (the JSON-ready report) and where it goes.

        Args:
            out: the Markdown file.
            json_path: the JSON file.
            data: the initial report (environment, settings, pending rows).
        """
        self.out, self.json_path, self.data = out, json_path, data
        self.lock = threading.RLock()
        self.t0 = time.monotonic()
        self.children: list[subprocess.Popen] = []
        self.tmp: Path | None = None

    def write(self, status: str | None = None) -> None:
        """Write both files atomically (with ``status``, when given).

        Args:
            status: the report's new status (``running``, ``complete``, ``deadline``, ...).
        """
        with self.lock:
            if status:
                self.data["status"] = status
            self.data["elapsed_s"] = time.monotonic() - self.t0
            write_atomic(self.json_path, json.dumps(self.data, indent=1, default=str) + "\n")
            write_atomic(self.out, render_markdown(self.data))

    def abort(self, status: str) -> None:
        """Mark unfinished work, write, stop the children and leave the process (exit 0).

        Args:
            status: why the run stops (``deadline``, ``terminated``).
        """
        with self.lock:
            for row in self.data["rows"]:
                if row.get("status") in (None, "pending", "running"):
                    row["status"] = f"not run: {status}"
            loss = self.data.get("bf16_vs_fp32") or {}
            if loss.get("status") in (None, "pending", "running"):
                loss["status"] = f"not run: {status}"
            self.write(status)
            for child in self.children:
                _kill(child)
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
        log(f"{status}: results written to {self.out} and {self.json_path}")
        os._exit(0)


def phase(name: str) -> None:
    """Mark the phase a worker is in: logged, and kept for the parent's status at a timeout.

    Args:
        name: the phase (``build``, ``lower``, ``compile``, ``init``, ``steps``).
    """
    log(f"           phase {name} at {time.monotonic() - _T0:.1f} s")
    if os.environ.get("GPU_CHECK_PHASE"):
        Path(os.environ["GPU_CHECK_PHASE"]).write_text(f"{name} {time.monotonic() - _T0:.1f}")


def log(msg: str) -> None:
    """A progress line on stderr.

    Args:
        msg: the line.
    """
    print(msg, file=sys.stderr, flush=True)


def _kill(proc: subprocess.Popen) -> None:
    """End a child this script started (its own process group), if it still runs."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


# ---------------------------------------------------------------------------------------------
# The orchestration: environment, jobs in priority order, children, deadline.


def peak_flops(device_kind: str, override_tflops: float | None = None) -> tuple[float | None, str]:
    """The dense bf16 peak FLOP/s of a device, from its ``device_kind``.

    Args:
        device_kind: e.g. ``NVIDIA H100 80GB HBM3``.
        override_tflops: a peak given by hand (TFLOP/s), used as is.

    Returns:
        ``(flops_per_s or None, where it comes from)``.
    """
    from lshsim.t5.hardware import HARDWARE

    if override_tflops:
        return override_tflops * 1e12, "--peak-tflops"
    kind = device_kind.lower()
    for name, flops in EXTRA_PEAKS.items():
        part, form = name.split()
        if part in kind and form in kind:
            return flops, f"{name}, vendor data sheet"
    for name in ("h200", "h100", "a100"):
        if name in kind:
            return HARDWARE[name].peak_flops, f"{name}, lshsim/t5/hardware.py"
    return None, "unknown device"


def git_commit() -> str:
    """``HEAD``'s hash (with ``+ uncommitted changes`` when tracked files differ), or why not."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git checkout)"
    return head + (" + uncommitted changes" if dirty else "")


def environment() -> dict[str, Any]:
    """Backend, device and library versions (initialises JAX's backend).

    Returns:
        ``backend``, ``device_kind``, ``device_count``, ``jax``, ``jaxlib``, ``plugins``
        (the CUDA plugin's version, text), ``flax``, ``optax``, ``numpy``, ``python``.
    """
    from importlib import metadata

    import flax
    import jax
    import jaxlib
    import numpy as np
    import optax

    plugins = sorted(
        f"{d.metadata['Name']} {d.version}"
        for d in metadata.distributions()
        if (d.metadata["Name"] or "").lower().replace("_", "-").startswith("jax-cuda")
    )
    return {
        "backend": jax.default_backend(),
        "device_kind": jax.devices()[0].device_kind,
        "device_count": jax.device_count(),
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "plugins": "".join(f", {p}" for p in plugins),
        "flax": flax.__version__,
        "optax": optax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def build_jobs(s: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs in priority order: first baseline, the loss check, other baselines, variants.

    Args:
        s: the resolved settings.

    Returns:
        Job dicts (``kind`` ``step`` or ``loss``); step jobs share their dict with the
        report's row.
    """
    rows = {}
    for config in s["configs"]:
        for variant in s["variants"]:
            rows[config, variant] = {
                "kind": "step",
                "config": config,
                "variant": variant,
                "dtype": s["dtype"],
                "batch": s["batch"] or GPU_BATCH.get(config, 8),
                "input_length": s["lengths"][0],
                "target_length": s["lengths"][1],
                "warmup": s["warmup"],
                "steps": s["steps"],
                "seed": 0,
                "status": "pending",
            }
    order = [rows[c, "baseline"] for c in s["configs"] if (c, "baseline") in rows]
    loss = {
        "kind": "loss",
        "config": s["loss_config"],
        "batch": s["loss_batch"],
        "input_length": s["lengths"][0],
        "target_length": s["lengths"][1],
        "seed": 0,
        "status": "pending" if s.get("loss", True) else "skipped (--no-loss)",
    }
    if s.get("loss", True):
        order.insert(1 if order else 0, loss)
    order += [rows[c, v] for c in s["configs"] for v in RUN_ORDER if (c, v) in rows]
    return order


def _child_env() -> dict[str, str]:
    """The environment of a measuring child: the user's, with the repository importable."""
    env = dict(os.environ)
    if env.pop("_GPU_CHECK_PREALLOC", None):  # set for the parent only, which just looks
        env.pop("XLA_PYTHON_CLIENT_PREALLOCATE", None)
    env.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", MEM_FRACTION)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def run_child(job: dict[str, Any], timeout: float, tmp: Path, report: Report) -> dict[str, Any]:
    """Run one job in a fresh Python process (``--worker``), killed at ``timeout`` seconds.

    Args:
        job: the job.
        timeout: seconds before the child is killed.
        tmp: a folder for the result file.
        report: where the running child is registered (so an abort can stop it).

    Returns:
        The worker's result, or a ``status`` saying why there is none.
    """
    result = tmp / f"result-{time.monotonic_ns()}.json"
    phase_file = result.with_suffix(".phase")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)]
    proc = subprocess.Popen(
        [*cmd, "--result", str(result)],
        env={**_child_env(), "GPU_CHECK_PHASE": str(phase_file)},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    report.children.append(proc)
    try:
        output, _ = proc.communicate(timeout=max(timeout, 1.0))
    except subprocess.TimeoutExpired:
        _kill(proc)
        where = ""
        if phase_file.exists():
            name, since = phase_file.read_text().split()
            where = f", in its {name} phase (begun at {since} s)"
        return {"status": f"not finished: stopped at the deadline, after {timeout:.0f} s{where}"}
    finally:
        report.children.remove(proc)
    if result.exists():
        return json.loads(result.read_text())
    tail = (output or "").strip().splitlines()[-1:] or [""]
    return {"status": f"error: exit {proc.returncode}: {tail[0][:200]}", "error": output[-2000:]}


def start_plans(s: dict[str, Any], rows: list[dict], tmp: Path) -> tuple[subprocess.Popen, Path]:
    """Start the background child that plans ``rows`` on the CPU, as ``lshsim plan`` does.

    Args:
        s: the resolved settings.
        rows: step rows, in priority order.
        tmp: a folder for the JSON-lines output and the log.

    Returns:
        ``(process, lines file)``.
    """
    from lshsim.t5.plan import host_device_flags

    lines = tmp / "plans.jsonl"
    job = {
        "kind": "plans",
        "rows": [{k: r[k] for k in _ROW_KEY} for r in rows],
        "lines": str(lines),
    }
    env = _child_env()
    env.update(host_device_flags(1, env))
    env.pop("XLA_PYTHON_CLIENT_MEM_FRACTION", None)
    with open(tmp / "plans.log", "w") as logfile:
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)],
            env=env,
            cwd=ROOT,
            stdout=logfile,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return proc, lines


def collect_plans(lines: Path | None, report: Report, current: dict | None = None) -> None:
    """Copy the planned rows' ``per_device_bytes`` and ``flops_per_step`` into the report's rows.

    A measured row (other than ``current``, whose line is logged next) whose MFU now comes
    from the CPU compiler's count says so in the log.

    Args:
        lines: the plan child's JSON-lines file (None: no planning).
        report: the report.
        current: the row just measured.
    """
    if lines is None or not lines.exists():
        return
    plans = []
    for line in lines.read_text().splitlines():
        with contextlib.suppress(ValueError):  # a line the planner is still writing
            plans.append(json.loads(line))
    with report.lock:
        report.data["plans"] = plans
        by_key = {tuple(p[k] for k in _ROW_KEY): p for p in plans}
        for row in report.data["rows"]:
            plan = by_key.get(tuple(row[k] for k in _ROW_KEY))
            if plan and "per_device_bytes" in plan:
                before = row.get("flops_source")
                row["plan_per_device_bytes"] = plan["per_device_bytes"]
                row["plan_flops_per_step"] = plan.get("flops_per_step")
                derive(row, report.data.get("peak_flops"))
                if before and row.get("flops_source") != before and row is not current:
                    log(f"           {row['config']}/{row['variant']}: {_summary(row)}")


def _settings(args: argparse.Namespace, mode: str) -> dict[str, Any]:
    """The defaults of ``mode`` (``gpu`` or ``cpu``), overridden by the options given."""
    s = dict(MODES[mode])
    given = {
        "configs": _names(args.configs),
        "variants": _names(args.variants),
        "batch": args.batch,
        "steps": args.steps,
        "warmup": args.warmup,
        "loss_config": args.loss_config,
        "loss_batch": args.loss_batch,
    }
    s.update({k: v for k, v in given.items() if v is not None})
    if args.input_length or args.target_length:
        s["lengths"] = (args.input_length or s["lengths"][0], args.target_length or s["lengths"][1])
    s["plan_rows"] = 0 if args.no_plan else (args.plan_rows or s["plan_rows"])
    s["variants"] = tuple(v for v in VARIANTS if v in s["variants"])
    s.update(dtype=args.dtype, deadline_s=args.deadline_s, mem_fraction=_mem_fraction())
    s["loss"] = not args.no_loss
    return s


def _mem_fraction() -> str:
    return os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", MEM_FRACTION)


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(x.strip() for x in text.split(",") if x.strip())


def run(args: argparse.Namespace) -> int:
    """Measure in priority order until done or the deadline; write the report; return 0.

    Args:
        args: the parsed options.

    Returns:
        0 (a row that fails is reported in the files, not by the exit status).
    """
    start = time.monotonic()
    deadline = start + args.deadline_s
    if "XLA_PYTHON_CLIENT_PREALLOCATE" not in os.environ:  # this process only looks
        os.environ.update(XLA_PYTHON_CLIENT_PREALLOCATE="false", _GPU_CHECK_PREALLOC="1")
    if not args.no_compile_cache:
        os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(ROOT / ".jax_cache"))
    env = environment()
    mode = "cpu" if env["backend"] == "cpu" else "gpu"
    if mode == "cpu":
        print(NO_GPU.format(env["backend"]), flush=True)
    s = _settings(args, mode)
    s["isolate"] = args.isolate == "process" or (args.isolate == "auto" and mode == "gpu")
    peak, source = peak_flops(env["device_kind"], args.peak_tflops)
    jobs = build_jobs(s)
    steps = [j for j in jobs if j["kind"] == "step"]
    data = {
        "schema": SCHEMA,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "git_commit": args.commit or git_commit(),
        "environment": env,
        "mode": mode,
        "peak_flops": peak,
        "peak_source": source,
        "settings": {**s, "lengths": list(s["lengths"])},
        "status": "running",
        "elapsed_s": 0.0,
        "rows": sorted(steps, key=lambda r: (s["configs"].index(r["config"]), _vi(r))),
        "bf16_vs_fp32": loss_job(jobs, s),
        "plans": [],
        "flops_note": FLOPS_NOTE,
        "flops_sources": {k: v for k, v in FLOPS_SOURCES.items() if k != "none"},
    }
    report = Report(Path(args.out), Path(args.json), data)
    report.write()
    previous = signal.signal(signal.SIGTERM, lambda *_: report.abort("terminated"))
    # In one process a compile cannot be interrupted: at the deadline this thread writes the
    # report and ends the process. Children are killed by run_child at the deadline instead.
    grace = 10.0 if s["isolate"] else 0.0
    watchdog = threading.Timer(deadline - time.monotonic() + grace, report.abort, ["deadline"])
    watchdog.daemon = True
    if deadline > time.monotonic():
        watchdog.start()
    try:
        with tempfile.TemporaryDirectory(prefix="gpu_check_") as name:
            report.tmp = Path(name)
            _measure(jobs, s, report, deadline, report.tmp, peak)
    finally:
        watchdog.cancel()
        signal.signal(signal.SIGTERM, previous)
    report.write("complete" if all(_done(j) for j in jobs) else "deadline")
    for row in steps:
        if "step_s_median" in row:
            log(f"{row['config']}/{row['variant']}: {_summary(row)}")
    log(f"done in {time.monotonic() - start:.1f} s: {args.out}, {args.json}")
    return 0


def loss_job(jobs: list[dict[str, Any]], s: dict[str, Any]) -> dict[str, Any]:
    """The loss check's job, or its skipped record under ``--no-loss``."""
    found = [j for j in jobs if j["kind"] == "loss"]
    if found:
        return found[0]
    return {"kind": "loss", "config": s["loss_config"], "status": "skipped (--no-loss)"}


def _vi(row: dict[str, Any]) -> int:
    return list(VARIANTS).index(row["variant"])


def _done(job: dict[str, Any]) -> bool:
    return not str(job.get("status", "")).startswith(("not run", "not finished", "pending"))


def _measure(jobs, s, report: Report, deadline: float, tmp: Path, peak) -> None:
    """Run the jobs in order (and the planner beside them) until the deadline."""
    steps = [j for j in jobs if j["kind"] == "step"][: s["plan_rows"]]
    planner, lines = None, None
    if steps and deadline - time.monotonic() > MIN_JOB_S:
        planner, lines = start_plans(s, steps, tmp)
        report.children.append(planner)
    for job in jobs:
        left = deadline - time.monotonic()
        if left < MIN_JOB_S:
            job["status"] = "not run: deadline"
            continue
        name = f"{job['config']}/{job.get('variant', 'bf16 vs fp32 loss')}"
        log(f"[{s['deadline_s'] - left:6.1f} s] {name} ...")
        with report.lock:
            job["status"] = "running"
        result = run_child(job, left - MARGIN_S, tmp, report) if s["isolate"] else run_worker(job)
        with report.lock:
            job.update(result)
            if job["kind"] == "step":
                derive(job, peak)
        collect_plans(lines, report, job)
        report.write()
        log(f"           {name}: {_summary(job)}")
    if planner is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            planner.wait(timeout=max(deadline - time.monotonic(), 0.1))
        _kill(planner)
        collect_plans(lines, report)


def _summary(job: dict[str, Any]) -> str:
    if job.get("status") != "ok":
        return str(job.get("status"))
    if job.get("kind") == "loss":
        return f"bf16 {job['loss_bfloat16']:.5f} vs f32 {job['loss_float32']:.5f}"
    text = f"{job['step_s_median'] * 1e3:.2f} ms/step"
    if job.get("mfu"):
        text += f", MFU {100 * job['mfu']:.1f}%"
    if job.get("flops_per_step"):
        source = FLOPS_SOURCES[job["flops_source"]]
        text += f" ({job['flops_per_step'] / 1e12:.3g} TFLOP/step from {source})"
    return text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options (``--help`` explains them).

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The parsed options.
    """
    p = argparse.ArgumentParser(
        prog="gpu_check.py",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--configs", help="configs, comma-separated (GPU: small,base; CPU: tiny)")
    p.add_argument(
        "--variants",
        help=f"variants, comma-separated, of {','.join(VARIANTS)} (GPU: all; CPU: baseline)",
    )
    p.add_argument("--steps", type=_positive, help="timed steps per row (GPU 15, CPU 3)")
    p.add_argument("--warmup", type=_positive, help="untimed steps first (GPU 2, CPU 1)")
    p.add_argument("--batch", type=_positive, help="per-step batch (GPU: small 64, base 32)")
    p.add_argument("--input-length", type=_positive, help="encoder length (GPU 512, CPU 32)")
    p.add_argument("--target-length", type=_positive, help="decoder length (GPU 114, CPU 8)")
    p.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    p.add_argument("--loss-config", help="config of the bf16 vs float32 loss (GPU small)")
    p.add_argument("--loss-batch", type=_positive, help="its batch (GPU 8, CPU 2)")
    p.add_argument(
        "--deadline-s",
        type=float,
        default=300.0,
        help="stop measuring after this many seconds, write what there is, exit 0 (300)",
    )
    p.add_argument("--out", default=str(ROOT / "figures" / "GPU.md"), help="the Markdown file")
    p.add_argument("--json", default=str(ROOT / "figures" / "gpu.json"), help="the JSON file")
    p.add_argument(
        "--isolate",
        choices=["auto", "process", "none"],
        default="auto",
        help="a fresh process per row (auto: on a GPU, for its peak memory) or none",
    )
    p.add_argument("--no-plan", action="store_true", help="skip lshsim plan's memory")
    p.add_argument(
        "--no-loss",
        action="store_true",
        help="skip the bf16 vs float32 loss check (a rerun that already has it)",
    )
    p.add_argument("--plan-rows", type=_positive, help="rows to plan (GPU: all, CPU: 1)")
    p.add_argument("--no-compile-cache", action="store_true", help="no .jax_cache/ reuse")
    p.add_argument("--commit", help="the git commit to report (default: git rev-parse HEAD)")
    p.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak, by hand")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    from lshsim.t5.configs import CONFIGS

    for name, choices in (("configs", CONFIGS), ("variants", VARIANTS)):
        bad = [x for x in _names(getattr(args, name)) or () if x not in choices]
        if bad:
            p.error(f"--{name}: unknown {', '.join(bad)}; choose from {', '.join(choices)}")
    return args


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the check (or, with ``--worker``, one job of it in this child process).

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status (0).
    """
    args = parse_args(argv)
    if args.worker:
        result = run_worker(json.loads(args.worker))
        if args.result:
            write_atomic(args.result, json.dumps(result, default=str))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
