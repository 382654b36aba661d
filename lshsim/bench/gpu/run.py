"""The GPU check's orchestration: jobs in priority order, children, the planner, the deadline.

Each row runs in a fresh child process on a GPU (its peak memory is then its own), killed at
the deadline; a background child plans the same rows on the CPU (:func:`lshsim.t5.plan.plan`)
for their FLOPs and planned memory. See :mod:`lshsim.bench.gpu` for what is measured.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic
from lshsim.bench.gpu.report import FLOPS_NOTE, FLOPS_SOURCES, Report, derive, kill, summary
from lshsim.bench.gpu.settings import (
    MARGIN_S,
    MEM_FRACTION,
    MIN_JOB_S,
    MODES,
    NO_GPU,
    ROW_KEY,
    SCHEMA,
    VARIANTS,
    build_jobs,
    peak_flops,
)
from lshsim.bench.gpu.worker import log, run_worker
from lshsim.studies.manifest import git_commit

#: The checkout (or site-packages folder) that holds the ``lshsim`` package.
ROOT = Path(__file__).resolve().parents[3]
#: How a child runs one job.
WORKER_COMMAND = (sys.executable, "-m", "lshsim.bench.gpu", "--worker")
#: Where the report goes by default: a folder of the current directory, never ``figures/``.
DEFAULT_DIR = Path("gpu-check")


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
    cmd = [*WORKER_COMMAND, json.dumps(job)]
    proc = subprocess.Popen(
        [*cmd, "--result", str(result)],
        env={**_child_env(), "GPU_CHECK_PHASE": str(phase_file)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    report.children.append(proc)
    try:
        output, _ = proc.communicate(timeout=max(timeout, 1.0))
    except subprocess.TimeoutExpired:
        kill(proc)
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
        "rows": [{k: r[k] for k in ROW_KEY} for r in rows],
        "lines": str(lines),
    }
    env = _child_env()
    env.update(host_device_flags(1, env))
    env.pop("XLA_PYTHON_CLIENT_MEM_FRACTION", None)
    with open(tmp / "plans.log", "w") as logfile:
        proc = subprocess.Popen(
            [*WORKER_COMMAND, json.dumps(job)],
            env=env,
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
        by_key = {tuple(p[k] for k in ROW_KEY): p for p in plans}
        for row in report.data["rows"]:
            plan = by_key.get(tuple(row[k] for k in ROW_KEY))
            if plan and "per_device_bytes" in plan:
                before = row.get("flops_source")
                row["plan_per_device_bytes"] = plan["per_device_bytes"]
                row["plan_flops_per_step"] = plan.get("flops_per_step")
                derive(row, report.data.get("peak_flops"))
                if before and row.get("flops_source") != before and row is not current:
                    log(f"           {row['config']}/{row['variant']}: {summary(row)}")


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
    if args.compile_configs is not None:
        names = _names(args.compile_configs)
        s["compile_configs"] = () if names == ("none",) else names
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
    env = environment()
    mode = "cpu" if env["backend"] == "cpu" else "gpu"
    if mode == "cpu":
        print(NO_GPU.format(env["backend"]), flush=True)
    s = _settings(args, mode)
    s["isolate"] = args.isolate == "process" or (args.isolate == "auto" and mode == "gpu")
    peak, source = peak_flops(env["device_kind"], args.peak_tflops)
    jobs = build_jobs(s)
    rows = [j for j in jobs if j["kind"] in ("step", "compile")]
    data = {
        "schema": SCHEMA,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "git_commit": args.commit or git_commit() or "unknown (no git checkout)",
        "environment": env,
        "mode": mode,
        "peak_flops": peak,
        "peak_source": source,
        "settings": {**s, "lengths": list(s["lengths"])},
        "status": "running",
        "elapsed_s": 0.0,
        "rows": rows,
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
    for row in rows:
        if "step_s_median" in row:
            log(f"{row['config']}/{row['variant']}: {summary(row)}")
    log(f"done in {time.monotonic() - start:.1f} s: {args.out}, {args.json}")
    return 0


def loss_job(jobs: list[dict[str, Any]], s: dict[str, Any]) -> dict[str, Any]:
    """The loss check's job, or its skipped record under ``--no-loss``.

    Args:
        jobs: the jobs (:func:`lshsim.bench.gpu.settings.build_jobs`).
        s: the resolved settings.

    Returns:
        The job dict the report shows as ``bf16_vs_fp32``.
    """
    found = [j for j in jobs if j["kind"] == "loss"]
    if found:
        return found[0]
    return {"kind": "loss", "config": s["loss_config"], "status": "skipped (--no-loss)"}


def _done(job: dict[str, Any]) -> bool:
    return not str(job.get("status", "")).startswith(("not run", "not finished", "pending"))


def _measure(jobs, s, report: Report, deadline: float, tmp: Path, peak) -> None:
    """Run the jobs in order (and the planner beside them) until the deadline.

    The planner runs in its own process group: it is stopped on the way out, whatever
    happens here.
    """
    steps = [j for j in jobs if j["kind"] in ("step", "compile")][: s["plan_rows"]]
    planner, lines = None, None
    if steps and deadline - time.monotonic() > MIN_JOB_S:
        planner, lines = start_plans(s, steps, tmp)
        report.children.append(planner)
    try:
        for job in jobs:
            _run_job(job, s, report, deadline, tmp, peak, lines)
        if planner is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                planner.wait(timeout=max(deadline - time.monotonic(), 0.1))
    finally:
        if planner is not None:
            kill(planner)
    collect_plans(lines, report)


def _run_job(job, s, report: Report, deadline: float, tmp: Path, peak, lines) -> None:
    """Run one job (in a child when isolating) if time is left; record and log it."""
    left = deadline - time.monotonic()
    if left < MIN_JOB_S:
        job["status"] = "not run: deadline"
        return
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
    log(f"           {name}: {summary(job)}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options (``--help`` explains them).

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The parsed options.
    """
    import lshsim.bench.gpu as package

    p = argparse.ArgumentParser(
        prog="python -m lshsim.bench.gpu",
        description=package.__doc__.split("\n\n")[0],
        epilog=package.__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--configs", help="configs, comma-separated, in priority order (GPU: base,small; CPU: tiny)"
    )
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
    p.add_argument(
        "--out",
        default=str(DEFAULT_DIR / "GPU.md"),
        help="the Markdown file (default gpu-check/GPU.md in the current directory; the "
        "committed figures/GPU.md is written only when named here)",
    )
    p.add_argument(
        "--json", default=str(DEFAULT_DIR / "gpu.json"), help="the JSON file (gpu-check/gpu.json)"
    )
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
    p.add_argument(
        "--compile-configs",
        help="configs whose other paper variants are compiled, not run, for their compile "
        "time (GPU: base; CPU: none; 'none' for none)",
    )
    p.add_argument("--commit", help="the git commit to report (default: git rev-parse HEAD)")
    p.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak, by hand")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    from lshsim.t5.configs import CONFIGS
    from lshsim.t5.paper_variants import SIZES

    for name, choices in (
        ("configs", CONFIGS),
        ("variants", VARIANTS),
        ("compile_configs", (*SIZES, "none")),
    ):
        bad = [x for x in _names(getattr(args, name)) or () if x not in choices]
        if bad:
            flag = "--" + name.replace("_", "-")
            p.error(f"{flag}: unknown {', '.join(bad)}; choose from {', '.join(choices)}")
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
