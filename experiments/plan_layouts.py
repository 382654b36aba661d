"""Write figures/plan_layouts.json: one planned step in the variations the scale-out guide weighs.

The step is the one ``docs/guide/scaleout.md`` plans first: the paper's Table 6 Token-ID rank 5
T5 Base (``base Token-ID r5`` of :data:`lshsim.t5.paper_variants.PAPER_VARIANTS`) at batch 256
in 8 micro-batches, lengths 512/114, bf16 compute, on a 1 x 2 mesh of forced host devices,
priced for an H100 (:func:`lshsim.t5.plan.plan`, what ``lshsim plan`` runs). With layers
scanned (the default), two variations of the default plan (``figures/plan.json`` holds the
default itself):

- ``saves_everything``: the scanned backward pass keeps every intermediate of the forward pass
  (``jax.checkpoint_policies.everything_saveable`` in place of
  :data:`lshsim.t5.layer_stack.SCAN_SAVES`, ``checkpoint_dots``): nothing is recomputed;
- ``gather``: the rank-5 experts as ``--expert-impl gather`` (every token's expert weights
  materialised) instead of ``ragged``, which ``lshsim plan`` assumes.

Each is one compile, about half a minute of CPU::

    python experiments/plan_layouts.py --out figures/plan_layouts.json

Without ``--out`` it prints the JSON. Each entry holds the plan's per-device bytes, FLOPs,
roofline and compile time (``compile_seconds``); the file records the machine.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # the host devices must exist before JAX starts
    from lshsim.t5.plan import host_device_flags

    os.environ.update(host_device_flags(2))

import argparse
from pathlib import Path

from lshsim.bench.machine import machine_info
from lshsim.bench.report import command_line, write_record

ROW = "base Token-ID r5"
STEP = {"batch": 256, "accumulate": 8, "input_length": 512, "target_length": 114}
MESH = {"data": 1, "model": 2}
HARDWARE = "h100"
#: What each entry keeps of :func:`lshsim.t5.plan.plan`'s result.
KEEP = (
    "expert_impl",
    "scan_layers",
    "per_device_bytes",
    "state_bytes",
    "temp_bytes",
    "flops_per_step",
    "flops_per_step_total",
    "bytes_accessed_per_step",
    "roofline_step_seconds",
    "fits",
    "compile_seconds",
)


def plan_variant(name: str) -> dict:
    """Plan the step in one variation (``saves_everything`` or ``gather``).

    Args:
        name: the variation.

    Returns:
        The fields :data:`KEEP` of the plan.
    """
    import jax

    from lshsim.t5 import layer_stack
    from lshsim.t5.paper_variants import PAPER_VARIANTS
    from lshsim.t5.plan import plan

    row = next(r for r in PAPER_VARIANTS if r.name == ROW)
    more = {"expert_impl": "gather"} if name == "gather" else {}
    config = row.config(dtype="bfloat16", **more)
    saves = layer_stack.SCAN_SAVES
    if name == "saves_everything":
        layer_stack.SCAN_SAVES = jax.checkpoint_policies.everything_saveable
    try:
        res = plan(config, **MESH, **STEP, hardware=HARDWARE)
    finally:
        layer_stack.SCAN_SAVES = saves
    return {k: res[k] for k in KEEP}


def main(argv: list[str] | None = None) -> None:
    """Parse the options, plan both variations and write (or print) the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the JSON here (default: print it)")
    args = ap.parse_args(argv)
    rerun = [] if args.out is None else ["--out", args.out.as_posix()]
    doc = {
        "command": command_line("experiments/plan_layouts.py", rerun),
        "machine": machine_info(),
        "row": ROW,
        "settings": {**STEP, "mesh": MESH, "hardware": HARDWARE, "dtype": "bfloat16"},
        "plans": {name: plan_variant(name) for name in ("gather", "saves_everything")},
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
