"""``lshsim plan``: per-device memory, FLOPs and roofline of a training step on a mesh.

The step is compiled ahead of time for host (CPU) devices standing in for the accelerators
(:mod:`lshsim.t5.plan`). A ``data x model`` mesh needs that many host devices, and JAX creates
them only from ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` read when its backend
starts. So the command checks its arguments without importing JAX, then: if JAX is not yet
imported in this process (the usual ``lshsim plan ...``), sets ``XLA_FLAGS`` and
``JAX_PLATFORMS=cpu`` and goes on; if it is (``lshsim.cli.main.main`` called from a program that
already uses JAX) and has too few devices, it runs itself again as a child process
(``python -m lshsim plan ...``) with those variables set and passes on its output and status.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from lshsim._validate import check_int
from lshsim.cli.checks import TRACE_RANGES, check_micro_batch, check_ranges, default_dtype
from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.model_flags import MEMORY_HELP, add_config_flag, add_memory_flags, config_from_args
from lshsim.cli.vocabulary import JSON_HELP
from lshsim.cli.work import start_work
from lshsim.t5.budget import check_lengths
from lshsim.t5.hardware import HARDWARE

_EPILOG = (
    """\
Memory per device is XLA's: arguments (state and batch shards) + outputs + temporaries -
aliased (the donated state counted once). FLOPs and bytes accessed come from XLA's cost
analysis of the partitioned program: per device; the total is the whole step's.

examples:
  lshsim plan --config tiny --mesh data=2,model=1 --batch 32
  lshsim plan --config base --lookup tokenid --rank 5 --mesh data=1,model=8 --batch 256 \\
      --accumulate 8 --hardware h100 --json
  lshsim plan --config large --memory altup --blocks 2 --batch 256 --minimal --hardware a100

"""
    + MEMORY_HELP
)

#: The plan parser (its actions rebuild the command line for the child process).
_PARSER: argparse.ArgumentParser | None = None
#: Set in the child process so that it never starts another.
_CHILD_ENV = "LSHSIM_PLAN_CHILD"
#: ``--minimal``'s default device limit.
MAX_DEVICES = 64
#: The most host devices a plan compiles for (1024 compile in about 10 s for tiny; XLA's CPU
#: client refuses 4096 as a multi-process computation).
MAX_HOST_DEVICES = 1024


def _local_devices() -> int:
    """The devices ``lshsim train`` would use here by default: all of the default backend's."""
    if os.environ.get(_CHILD_ENV):  # the child has host devices standing in: never the default
        return 1
    import jax

    return 1 if jax.default_backend() == "cpu" else jax.device_count()


def add_parser(sub) -> None:
    """Add ``plan`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    global _PARSER
    p = sub.add_parser(
        "plan",
        help="per-device memory, FLOPs and roofline of a train step on a mesh (nothing allocated)",
        description=wrap(
            "Compile the training step ahead of time for a data x model mesh of host devices "
            "on abstract inputs and report, per device, XLA's memory (arguments, outputs, "
            "temporaries) and cost analysis (FLOPs, bytes accessed), the parameters by part, "
            "and for the named accelerator whether it fits, the roofline step time and the MFU "
            "bound. --minimal finds the fewest devices (powers of two) that fit."
        ),
        epilog=_EPILOG,
        formatter_class=Formatter,
    )
    add_config_flag(p)
    add_memory_flags(p)
    dev = p.add_argument_group("devices")
    dev.add_argument(
        "--mesh",
        metavar="data=A,model=B",
        help="the mesh (default, as train: data = every device of this machine's default "
        f"backend, model = 1; at most {MAX_HOST_DEVICES} devices; not with --minimal)",
    )
    step = p.add_argument_group("the training step")
    step.add_argument("--batch", type=int, metavar="B", help="examples per step (config default)")
    step.add_argument(
        "--accumulate", type=int, default=1, metavar="k", help="micro-batches per step (1)"
    )
    step.add_argument("--input-length", type=int, metavar="L", help="encoder tokens (config)")
    step.add_argument("--target-length", type=int, metavar="T", help="decoder tokens (spans)")
    step.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        help="compute dtype (default by backend, as train: bfloat16 on the --hardware "
        "accelerator); parameters stay float32",
    )
    dev.add_argument("--hardware", choices=list(HARDWARE), default="h100", help="device (h100)")
    dev.add_argument(
        "--minimal", action="store_true", help="search the smallest mesh that fits (not --mesh)"
    )
    dev.add_argument(
        "--max-devices",
        type=int,
        metavar="N",
        help=f"with --minimal: the most devices tried ({MAX_DEVICES}; at most {MAX_HOST_DEVICES})",
    )
    step.add_argument(
        "--finetune",
        choices=["glue", "super_glue", "squad"],
        help="plan the fine-tuning step: dropout 0.1, batch 256 and T5's lengths for the "
        "benchmark (512/84, 512/62, 512/97) unless given",
    )
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=run_plan)
    _PARSER = p


def parse_mesh(text: str) -> tuple[int, int]:
    """``"data=A,model=B"`` -> ``(A, B)``; an omitted axis is 1.

    Raises:
        ValueError: an unknown or repeated axis, or a size that is not an integer >= 1.
    """
    sizes: dict[str, int] = {}
    for item in str(text).split(","):
        name, sep, value = (s.strip() for s in item.partition("="))
        if not sep or name not in ("data", "model") or name in sizes:
            raise ValueError(f"mesh: expected data=A,model=B, got {text!r}")
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"mesh: {name} must be an integer >= 1, got {value!r}")
        sizes[name] = int(value)
    return sizes.get("data", 1), sizes.get("model", 1)


def _check(args: argparse.Namespace, batch: int) -> tuple[int, int]:
    """Validate the sizes without JAX; return the mesh."""
    if args.accumulate < 1:
        raise ValueError(f"accumulate must be an integer >= 1, got {args.accumulate}")
    if batch < 1:
        raise ValueError(f"batch must be an integer >= 1, got {batch}")
    if batch % args.accumulate:
        raise ValueError(f"accumulate must divide the batch ({batch}), got {args.accumulate}")
    if args.minimal and args.mesh is not None:
        raise ValueError("--mesh has no effect with --minimal (it searches the meshes itself)")
    if not args.minimal and args.max_devices is not None:
        raise ValueError("--max-devices has no effect without --minimal")
    if args.max_devices is not None:
        check_int("--max-devices", args.max_devices, 1, MAX_HOST_DEVICES)
    data, model = parse_mesh(args.mesh) if args.mesh is not None else (_local_devices(), 1)
    if data * model > MAX_HOST_DEVICES:
        raise ValueError(
            f"--mesh: data x model = {data * model} devices; plan compiles for host devices and "
            f"takes at most {MAX_HOST_DEVICES}"
        )
    if not args.minimal:
        check_micro_batch(batch, args.accumulate, data)
    return data, model


def _argv(args: argparse.Namespace) -> list[str]:
    """The command line of ``args`` (the non-default options), for the child process."""
    out = ["plan"]
    for action in _PARSER._actions:
        value = getattr(args, action.dest, None)
        if not action.option_strings or value is None or value == action.default:
            continue
        flag = action.option_strings[-1]
        out += [flag] if action.nargs == 0 else [flag, str(value)]
    return out


def _ensure_devices(args: argparse.Namespace, need: int) -> int | None:
    """Give this process ``need`` host devices, or run the command in a child that has them.

    Returns:
        ``None`` to go on here, or the child's exit status.
    """
    from lshsim.t5.plan import host_device_flags

    if "jax" not in sys.modules:
        os.environ.update(host_device_flags(need))
        return None
    import jax

    if len(jax.devices("cpu")) >= need or os.environ.get(_CHILD_ENV):
        return None
    env = {**os.environ, **host_device_flags(need), _CHILD_ENV: "1"}
    return subprocess.run([sys.executable, "-m", "lshsim", *_argv(args)], env=env).returncode


def run_plan(args: argparse.Namespace) -> int:
    """Plan the step on ``--mesh`` (or the smallest fitting mesh) and print the figures.

    Args:
        args: the parsed ``plan`` arguments.

    Returns:
        The exit status: 0, or 1 when ``--minimal`` finds no mesh that fits.
    """
    check_ranges(args, TRACE_RANGES)
    config = config_from_args(args)
    if args.dtype is None:
        config = config.replace(dtype=default_dtype("gpu"))  # every --hardware is an accelerator
    if args.finetune:
        from lshsim.t5.finetune.plan import finetune_step

        config = finetune_step(config, args)
    batch = config.batch_size if args.batch is None else args.batch
    data, model = _check(args, batch)
    if args.mesh is None and not args.minimal:  # the child process plans the same mesh
        args.mesh = f"data={data},model={model}"
    max_devices = MAX_DEVICES if args.max_devices is None else args.max_devices
    check_lengths(args.input_length, args.target_length)
    start_work()
    status = _ensure_devices(args, max_devices if args.minimal else data * model)
    if status is not None:
        return status
    from lshsim.t5.plan import minimal_plan, plan

    kw = {
        "batch": batch,
        "accumulate": args.accumulate,
        "input_length": args.input_length,
        "target_length": args.target_length,
        "hardware": args.hardware,
    }
    if args.minimal:
        res = minimal_plan(config, max_devices=max_devices, on_try=_progress, **kw)
        row = res["best"]
    else:
        row = res = plan(config, data=data, model=model, **kw)
    if args.json:
        print(json.dumps(res))
    else:
        if args.minimal:
            print(format_search(res))
        if row is not None:
            print(format_plan(row))
    return 0 if row is not None else 1


def _progress(entry: dict) -> None:
    """One line on stderr per mesh the search has tried (each compile takes a while)."""
    what = _gb(entry["per_device_bytes"]) if "per_device_bytes" in entry else entry["skipped"]
    print(f"  tried data={entry['data']} x model={entry['model']}: {what}", file=sys.stderr)


def _gb(x: float) -> str:
    return f"{x / 1e9:.2f} GB"


def format_plan(row: dict) -> str:
    """The human-readable form of one :func:`lshsim.t5.plan.plan` result."""
    mesh, p, hw = row["mesh"], row["params"], row["hardware"]
    fits = "fits" if row["fits"] else "does NOT fit"
    return "\n".join(
        [
            f"{row['config']} ({row['dtype']}) on data={mesh['data']} x model={mesh['model']}"
            f" ({row['devices']} devices): batch {row['batch']} in {row['accumulate']} "
            f"micro-batch(es), lengths {row['input_length']}/{row['target_length']}"
            + ("; layers scanned" if row.get("scan_layers") else ""),
            f"parameters {p['total']:.3g} (embedding {p['embedding']:.3g}, non-embedding "
            f"{p['non_embedding']:.3g}, expert {p['expert']:.3g}; experts computed "
            f"{row.get('expert_impl', 'gather')})",
            f"per device: {_gb(row['per_device_bytes'])} = arguments "
            f"{_gb(row['argument_bytes'])} + outputs {_gb(row['output_bytes'])} + temporaries "
            f"{_gb(row['temp_bytes'])} - aliased {_gb(row['alias_bytes'])}",
            f"FLOPs per step: {row['flops_per_step']:.3g} per device, "
            f"{row['flops_per_step_total']:.3g} in all",
            f"{hw['name']} ({_gb(hw['hbm_bytes'])}): {fits}; roofline step "
            f"{row['roofline_step_seconds']:.3g} s (compute {row['compute_seconds']:.3g} s, "
            f"memory {row['memory_seconds']:.3g} s), MFU bound {row['mfu_bound']:.2f}",
            f"(compiled in {row['compile_seconds']:.1f} s on host devices)",
        ]
    )


def format_search(res: dict) -> str:
    """The meshes :func:`lshsim.t5.plan.minimal_plan` tried, one line each."""
    lines = []
    for t in res["tried"]:
        what = _gb(t["per_device_bytes"]) if "per_device_bytes" in t else t["skipped"]
        lines.append(f"  data={t['data']} x model={t['model']}: {what}")
    head = "no mesh fits" if res["best"] is None else "smallest mesh that fits"
    return f"{head} (tried, up to {res['max_devices']} devices):\n" + "\n".join(lines)
