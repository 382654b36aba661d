"""The GPU check's report: derived statistics, the targets, Markdown and JSON.

:class:`Report` holds the JSON-ready results and rewrites both files atomically after every
change, so a killed check leaves what it measured.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic
from lshsim.bench.gpu.settings import (
    GB,
    PAPER_BATCH,
    PAPER_LENGTHS,
    TARGET_COMPILE_S,
    TARGET_MFU,
    VARIANT_NOTES,
    is_paper_variant,
    variant_config,
)
from lshsim.bench.gpu.worker import log


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
    times = f" {_fmt(row.get('compile_s'), '.1f')} | {_fmt(row.get('init_s'), '.1f')} |"
    if "step_s_median" not in row:
        return f"{head} {row.get('status', 'pending')} | | | | | |{mem}{times}"
    step = f"{row['step_s_median'] * 1e3:.2f} ({row['step_s_iqr'] * 1e3:.2f})"
    mfu, flops = row.get("mfu"), row.get("flops_per_step")
    gpu = row.get("flops_gpu_cost_analysis")
    return (
        f"{head} {step} | {row['tokens_per_s']:,.0f} |"
        f" {_fmt(None if flops is None else flops / 1e12, '.3g')} | {row.get('flops_source')} |"
        f" {_fmt(None if mfu is None else 100 * mfu, '.1f')} |"
        f" {_fmt(None if gpu is None else gpu / 1e12, '.3g')} |{mem}{times}"
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
        " plan GB | peak/plan | compile s | init s |",
        "|---|---|---:|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(_row_line(r) for r in report["rows"] if r.get("kind", "step") == "step"),
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
        " GB = 1e9 bytes. compile s: tracing, lowering and XLA's compile of the step"
        " (cold, unless the environment gave JAX a persistent compilation cache); init s: the"
        " compiled initialisation, run.",
        "",
        *(f"- {name}: {VARIANT_NOTES[name]}" for name in s["variants"]),
        "",
        *_compile_table(report),
        *_targets_lines(report),
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


def _compile_table(report: dict[str, Any]) -> list[str]:
    """The compile-only rows (the other paper variants): their compile time and XLA bytes."""
    rows = [r for r in report["rows"] if r.get("kind") == "compile"]
    if not rows:
        return []
    lines = [
        "## Compile of the other paper variants",
        "",
        "| config | variant | batch | lengths | status | compile s | XLA GB | plan GB |",
        "|---|---|---:|---|---|---:|---:|---:|",
    ]
    for r in rows:
        gb = {k: (r[k] / GB if r.get(k) else None) for k in _BYTES}
        lines.append(
            f"| {r['config']} | {r['variant']} | {r['batch']} | {r['input_length']}/"
            f"{r['target_length']} | {r.get('status', 'pending')} |"
            f" {_fmt(r.get('compile_s'), '.1f')} | {_fmt(gb['compiled_per_device_bytes'], '.2f')} |"
            f" {_fmt(gb['plan_per_device_bytes'], '.2f')} |"
        )
    return [*lines, ""]


def targets(report: dict[str, Any]) -> dict[str, Any]:
    """The targets of :mod:`lshsim.bench.gpu.settings` against the report's rows.

    The compile target is judged on the paper variants of the configs whose variants the
    check compiles (``settings["compile_configs"]``, ``base`` on a GPU): the measured rows
    that are paper variants and the compile-only rows. A row that failed to compile misses
    it; one not reached leaves it undecided.

    Args:
        report: the JSON-ready report (``mode``, ``settings``, ``rows``).

    Returns:
        ``{"mfu": {...}, "compile": {...}}``: the ``base`` baseline's MFU (bf16) against
        :data:`~lshsim.bench.gpu.settings.TARGET_MFU`, and the judged rows' compile times
        against :data:`~lshsim.bench.gpu.settings.TARGET_COMPILE_S`; each with ``met``
        (``None``: not measured here).
    """
    rows = report["rows"]
    base = next((r for r in rows if (r["config"], r["variant"]) == ("base", "baseline")), None)
    mfu = None if base is None else base.get("mfu")
    on_gpu = report.get("mode") == "gpu" and report["settings"].get("dtype") == "bfloat16"
    configs = tuple(report["settings"].get("compile_configs", ()))
    judged = [r for r in rows if r["config"] in configs and is_paper_variant(**_name(r))]
    compiled = [r for r in judged if r.get("compile_s") is not None]
    slow = [_label(r) for r in compiled if r["compile_s"] > TARGET_COMPILE_S]
    failed = [_label(r) for r in judged if r.get("compile_s") is None and _failed(r)]
    missing = [_label(r) for r in judged if r.get("compile_s") is None and not _failed(r)]
    decided = report.get("mode") == "gpu" and judged and not missing
    return {
        "mfu": {
            "target": TARGET_MFU,
            "measured": mfu,
            "met": None if mfu is None or not on_gpu else mfu >= TARGET_MFU,
        },
        "compile": {
            "target_s": TARGET_COMPILE_S,
            "configs": list(configs),
            "compiled": len(compiled),
            "over_target": slow,
            "failed": failed,
            "not_compiled": missing,
            "slowest_s": max((r["compile_s"] for r in compiled), default=None),
            "met": (not slow and not failed) if decided else (False if slow or failed else None),
        },
    }


def _name(row: dict[str, Any]) -> dict[str, str]:
    return {"config": row["config"], "variant": row["variant"]}


def _label(row: dict[str, Any]) -> str:
    return f"{row['config']} {row['variant']}"


def _failed(row: dict[str, Any]) -> bool:
    """A row that ended without a compile (an error, out of memory), not one not reached."""
    status = str(row.get("status", "pending"))
    return not status.startswith(("pending", "running", "not run", "not finished", "ok"))


def _verdict(met: bool | None) -> str:
    return {True: "met", False: "NOT met", None: "not measured here"}[met]


def _targets_lines(report: dict[str, Any]) -> list[str]:
    t = targets(report)
    mfu, comp = t["mfu"], t["compile"]
    measured = "n/a" if mfu["measured"] is None else f"{100 * mfu['measured']:.1f} %"
    which = ", ".join(comp["configs"]) or "no config (--compile-configs none)"
    lines = [
        "## Targets",
        "",
        f"- `base` baseline MFU >= {100 * mfu['target']:.0f} % in bf16 on an H100-class device:"
        f" {_verdict(mfu['met'])} (measured {measured}).",
        f"- every paper variant of {which} compiled in <= {comp['target_s']:.0f} s:"
        f" {_verdict(comp['met'])} ({comp['compiled']} compiled, slowest"
        f" {_fmt(comp['slowest_s'], '.1f')} s",
    ]
    for key, text in (("over_target", "over"), ("failed", "failed"), ("not_compiled", "not yet")):
        if comp[key]:
            lines[-1] += f"; {text}: " + ", ".join(comp[key])
    lines[-1] += ")."
    return [*lines, ""]


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
            self.data["targets"] = targets(self.data)
            write_atomic(self.json_path, json.dumps(self.data, indent=1, default=str) + "\n")
            write_atomic(self.out, render_markdown(self.data))

    def abort(self, status: str) -> None:
        """Mark unfinished work, write, stop the children and leave the process (exit 0).

        Args:
            status: why the run stops (``deadline``, ``terminated``).
        """
        with self.lock:
            for row in [*self.data["rows"], self.data.get("bf16_vs_fp32") or {}]:
                if row.get("status") in (None, "pending"):
                    row["status"] = f"not run: {status}"
                elif row.get("status") == "running":
                    row["status"] = f"not finished: {status}"
            self.write(status)
            for child in self.children:
                kill(child)
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
        log(f"{status}: results written to {self.out} and {self.json_path}")
        os._exit(0)


def kill(proc: subprocess.Popen) -> None:
    """End a child this script started (its own process group), if it still runs."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def summary(job: dict[str, Any]) -> str:
    """One line of a finished job's result (its status when it did not finish).

    Args:
        job: a step, compile or loss job with its result merged in.

    Returns:
        The line (step time, MFU and FLOPs; a compile-only row's compile time; the losses).
    """
    if job.get("status") != "ok":
        return str(job.get("status"))
    if job.get("kind") == "loss":
        return f"bf16 {job['loss_bfloat16']:.5f} vs f32 {job['loss_float32']:.5f}"
    if "step_s_median" not in job:  # a compile-only row
        return f"compiled in {job['compile_s']:.1f} s"
    text = f"{job['step_s_median'] * 1e3:.2f} ms/step"
    if job.get("mfu"):
        text += f", MFU {100 * job['mfu']:.1f}%"
    if job.get("flops_per_step"):
        source = FLOPS_SOURCES[job["flops_source"]]
        text += f" ({job['flops_per_step'] / 1e12:.3g} TFLOP/step from {source})"
    return text
