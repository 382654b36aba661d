"""Train-step time of memory-augmented T5 variants against the plain baseline, same batch.

Usage::

    python experiments/bench_memory.py                    # tiny (batch 32) and small (batch 8)
    python experiments/bench_memory.py --configs tiny --variants baseline "altup K=2"
    python experiments/bench_memory.py --quick --json     # a few steps, for a smoke test

Each variant's full training step (forward, backward, Adafactor update; lshsim's jitted
``make_train_step``, as in :mod:`lshsim.bench.t5_step`) runs on the same seeded random batch
(the config's input length, span corruption's target length, no padding). After compiling and
warming every variant, ``--rounds`` rounds each time ``--steps`` steps of every variant in
turn (the order rotating every round), so the noise of a shared machine hits all of them
alike. Reported per variant: median seconds per step and ``ratio = variant / baseline``
(< 1.10 is the goal for AltUp K=2), next to XLA's FLOP ratio (``lshsim.t5.cost``) for the
same shapes, and the machine's load. Results go to ``figures/bench_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from lshsim._io import write_atomic
from lshsim.bench.machine import loadavg
from lshsim.bench.report import log, positive
from lshsim.bench.t5_step import JaxRunner, lengths, make_batch
from lshsim.bench.timing import summary, timed

#: Variant name -> config changes (``baseline`` first; the others are timed against it).
VARIANTS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "altup K=2": {"memory": "altup", "memory_k": 2},
    "altup K=2 collapsed": {
        "memory": "altup",
        "memory_k": 2,
        "memory_cross": "sum",
        "memory_output": "sum",
    },
    "altup K=4": {"memory": "altup", "memory_k": 4},
    "sameup K=2": {"memory": "sameup", "memory_k": 2},
    "sum K=2": {"memory": "sum", "memory_k": 2},
    "tokenid rank 0": {"lookup": "tokenid"},
    "softmax rank 16, 64 buckets": {"lookup": "softmax", "expert_rank": 16, "buckets": 64},
    "lsh rank 16, 64 buckets": {"lookup": "lsh", "expert_rank": 16, "buckets": 64},
}
QUICK_VARIANTS = ["baseline", "altup K=2", "altup K=2 collapsed"]
DEFAULT_BATCH = {"tiny": 32, "small": 8}
#: Default output: ``figures/bench_memory.json`` of the repository (this file's tree).
OUT = Path(__file__).resolve().parents[2] / "figures" / "bench_memory.json"


def bench_config(
    name: str, variants: list[str], batch_size: int, steps: int, warmup: int, rounds: int
) -> list[dict[str, Any]]:
    """Time every variant of config ``name``; one row per variant."""
    from lshsim.t5.configs import get_config
    from lshsim.t5.cost import flops_per_token

    base = get_config(name)
    length, targets = lengths(base)
    batch = make_batch(base, batch_size, length, targets, seed=0)
    runners, flops = {}, {}
    for v in variants:
        cfg = base.replace(**VARIANTS[v])
        log(f"{name}: compiling {v}")
        runners[v] = JaxRunner(cfg, batch, seed=0)
        for _ in range(warmup + 1):
            runners[v].step()
        flops[v] = flops_per_token(cfg, input_length=length, target_length=targets)
    times: dict[str, list[float]] = {v: [] for v in variants}
    for r in range(rounds):
        order = variants[r % len(variants) :] + variants[: r % len(variants)]
        for v in order:
            times[v].extend(timed(runners[v].step)[0] for _ in range(steps))
        log(f"{name}: round {r + 1}/{rounds} done")
    base_t = summary(times["baseline"])["median"]
    base_f = flops["baseline"]["train_flops_per_token"]
    rows = []
    for v in variants:
        s = summary(times[v])
        rows.append(
            {
                "config": name,
                "variant": v,
                "changes": VARIANTS[v],
                "batch": batch_size,
                "input_length": length,
                "target_length": targets,
                "s_per_step": s["median"],
                "iqr": s["iqr"],
                "s_per_step_all": times[v],
                "ratio": s["median"] / base_t,
                "train_flops_per_token": flops[v]["train_flops_per_token"],
                "flops_ratio": flops[v]["train_flops_per_token"] / base_f,
                "loss": runners[v].loss(),
            }
        )
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table: config, variant, s/step, time ratio, FLOP ratio."""
    lines = [
        "| config | variant | s/step (median) | time / baseline | FLOPs / baseline |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} (batch {r['batch']}) | {r['variant']} | {r['s_per_step']:.4f} | "
            f"{r['ratio']:.3f} | {r['flops_ratio']:.3f} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None, default_out: Path = OUT) -> argparse.Namespace:
    """Command-line options.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).
        default_out: where the JSON goes without ``--out``.

    Returns:
        The options, with ``variants`` completed (``baseline`` first).
    """
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--configs", nargs="+", default=["tiny", "small"], choices=["tiny", "small"])
    p.add_argument("--variants", nargs="+", choices=list(VARIANTS), help="default: all")
    p.add_argument("--batch", type=positive, help="batch (default tiny 32, small 8)")
    p.add_argument("--steps", type=positive, help="timed steps per round (tiny 10, small 2)")
    p.add_argument("--rounds", type=positive, default=4, help="alternating rounds (4)")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps after compiling (2)")
    p.add_argument("--quick", action="store_true", help="tiny, 3 variants, 2 rounds of 2 steps")
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    p.add_argument("--out", type=Path, default=default_out, help="where the JSON goes")
    args = p.parse_args(argv)
    if args.quick:
        args.configs = ["tiny"]
        args.variants = args.variants or QUICK_VARIANTS
        args.steps, args.rounds, args.warmup = args.steps or 2, 2, 1
    args.variants = args.variants or list(VARIANTS)
    if "baseline" not in args.variants:
        args.variants = ["baseline", *args.variants]
    return args


def main(argv: list[str] | None = None, default_out: Path = OUT) -> dict[str, Any]:
    """Run the benchmark; write and return the JSON payload.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).
        default_out: where the JSON goes without ``--out`` (the script passes its own tree's
            ``figures/bench_memory.json``).

    Returns:
        ``{"machine", "results"}``: one row per config and variant.
    """
    import jax

    args = parse_args(argv, default_out)
    rows = []
    for name in args.configs:
        batch = args.batch or DEFAULT_BATCH[name]
        steps = args.steps or (10 if name == "tiny" else 2)
        rows += bench_config(name, args.variants, batch, steps, args.warmup, args.rounds)
    payload = {
        "machine": {
            "jax": jax.__version__,
            "backend": jax.default_backend(),
            "cores": os.cpu_count(),
            "loadavg_at_end": loadavg(),
        },
        "results": rows,
    }
    write_atomic(args.out, json.dumps(payload, indent=1) + "\n")
    print(json.dumps(payload) if args.json else format_table(rows))
    return payload
