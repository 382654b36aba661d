"""Where a T5 train step spends its time: XLA's per-operation profile, grouped by model part.

Usage::

    python experiments/profile_t5.py                      # tiny, batch 32, 3 profiled steps
    python experiments/profile_t5.py --config small --batch 8 --steps 1 --top 40

The jitted train step of :mod:`lshsim.bench.t5_step` (same batch) runs under
``jax.profiler.trace``; the Perfetto trace's complete events are summed per executed XLA
operation (thunk) and joined to the compiled HLO's ``op_name`` metadata, which says which
model function produced each operation and whether it belongs to the forward pass or to the
gradient (``transpose(jvp(...))``). Printed: milliseconds per step by (pass, part), the
share of matrix products, and the ``--top`` operations with their shapes. On CPU the thunk
executor may run independent operations concurrently, so the sum can exceed the step time.

Findings that this tool produced on the 2-core CI machine (issue 8): XLA:CPU summed the
position-bias gradient over the batch axis 25x slower than a matrix-vector product would
(now :func:`lshsim.t5.model.add_position_bias`), and argmax's (value, index) reduction over
the vocabulary cost 64 ms of small's step (now a max).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import tempfile
from pathlib import Path
from typing import Any


def part_of(op_name: str) -> str:
    """The model part an HLO ``op_name`` belongs to."""
    for key, part in (
        ("adafactor", "optimizer"),
        ("attention", "attention"),
        ("mlp", "mlp"),
        ("expert", "expert"),
        ("altup", "altup"),
        ("layer_norm", "norm"),
        ("_norm", "norm"),
        ("logits_dense", "logits"),
        ("relpos", "position bias"),
        ("token_embedder", "embedding"),
    ):
        if key in op_name:
            return part
    return "loss/other" if "T5" not in op_name else "other"


def hlo_metadata(hlo_text: str) -> dict[str, tuple[str, str]]:
    """Instruction name -> (result shape, op_name) from compiled HLO text."""
    meta = {}
    pattern = r"^\s*(?:ROOT )?%?([\w.\-]+) = (\S+) .*?op_name=\"([^\"]+)\""
    for m in re.finditer(pattern, hlo_text, re.M):
        meta[m.group(1)] = (m.group(2), m.group(3))
    return meta


def profile(config: str, batch_size: int, steps: int) -> dict[str, Any]:
    """Profile ``steps`` train steps; returns per-op and per-part milliseconds per step."""
    import jax

    from lshsim.bench.t5_step import WARMUP_STEPS, lengths, make_batch
    from lshsim.t5.configs import get_config
    from lshsim.t5.steps import init_state, make_optimizer, make_train_step

    cfg = get_config(config).replace(dropout_rate=0.0)
    length, targets = lengths(cfg)
    batch = jax.device_put(make_batch(cfg, batch_size, length, targets, seed=0))
    optimizer = make_optimizer(cfg, 1.0, WARMUP_STEPS)
    state = init_state(cfg, optimizer, 0)
    step = jax.jit(make_train_step(cfg, optimizer, 0))
    meta = hlo_metadata(step.lower(state, batch).compile().as_text())
    for _ in range(2):  # compile and warm up
        state, _ = step(state, batch)
    jax.block_until_ready(state)
    with tempfile.TemporaryDirectory() as tmp:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            for _ in range(steps):
                state, _ = step(state, batch)
                jax.block_until_ready(state)
        (trace,) = Path(tmp).rglob("*.trace.json.gz")
        events = json.loads(gzip.decompress(trace.read_bytes()))
    events = events["traceEvents"] if isinstance(events, dict) else events
    per_op: collections.Counter = collections.Counter()
    step_us = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        if e["name"] in meta:
            per_op[e["name"]] += e.get("dur", 0)
        elif e["name"] == "ThunkExecutor::Execute (wait for completion)":
            step_us += e.get("dur", 0)
    parts: collections.Counter = collections.Counter()
    rows = []
    dots = 0.0
    for name, us in per_op.items():
        shape, op = meta[name]
        grad = "gradient" if "transpose(" in op else "forward"
        parts[(grad, part_of(op))] += us
        if "dot_general" in op or name.startswith("dot"):
            dots += us
        rows.append({"op": name, "ms": us / steps / 1e3, "shape": shape, "op_name": op})
    rows.sort(key=lambda r: -r["ms"])
    return {
        "config": config,
        "batch": batch_size,
        "steps": steps,
        "step_ms": step_us / steps / 1e3,
        "ops_ms": sum(per_op.values()) / steps / 1e3,
        "dot_ms": dots / steps / 1e3,
        "parts": [
            {"pass": g, "part": p, "ms": us / steps / 1e3}
            for (g, p), us in sorted(parts.items(), key=lambda kv: -kv[1])
        ],
        "ops": rows,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Profile and print the report."""
    from lshsim.t5.configs import CONFIGS

    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--config", default="tiny", choices=sorted(CONFIGS))
    p.add_argument("--batch", type=int, default=32, help="examples per step (32)")
    p.add_argument("--steps", type=int, default=3, help="profiled steps (3)")
    p.add_argument("--top", type=int, default=25, help="operations listed (25)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the report")
    args = p.parse_args(argv)
    for opt in ("batch", "steps", "top"):
        if getattr(args, opt) < 1:
            p.error(f"--{opt} must be >= 1, got {getattr(args, opt)}")
    got = profile(args.config, args.batch, args.steps)
    if args.json:
        print(json.dumps(got, indent=1))
        return got
    print(
        f"{got['config']}, batch {got['batch']}: step {got['step_ms']:.1f} ms; operations "
        f"{got['ops_ms']:.1f} ms, of which matrix products {got['dot_ms']:.1f} ms "
        f"({got['dot_ms'] / got['ops_ms']:.0%})"
    )
    for r in got["parts"]:
        print(f"{r['ms']:9.2f} ms  {r['pass']:8s} {r['part']}")
    print(f"\ntop {args.top} operations (ms per step, shape, producer):")
    for r in got["ops"][: args.top]:
        print(f"{r['ms']:8.2f}  {r['shape'][:30]:30s} {r['op_name'][:100]}")
    return got
