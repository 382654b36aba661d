"""Write figures/PLAN.md: every configuration of the paper's tables, planned on 80 GB devices.

For each configuration (the S, B and L rows of the paper's Tables 1-8: baselines, Sum,
SameUp, AltUp K=2 and K=4, and the lookups' best points, Table 6's Token-ID rank 5 among
them) at batch 256 in 8 micro-batches, lengths 512/114, bf16 compute: the fewest H100-sized
devices (80 GB) and the mesh that fit it (``lshsim.t5.plan.minimal_plan``), per-device bytes
and FLOPs per step, beside the replicated (model = 1) mesh of as many devices.

Planning one B mesh takes 42 s (1 x 1) to 56 s (1 x 2) of CPU here (Token-ID rank 5, most
of it XLA's compile; 1.5-2 minutes of wall time on the busy 2-core machine), and a search
may compile several meshes per row: the script
records each row in ``figures/plan.json`` as it finishes and rewrites PLAN.md, and
``--resume`` skips the rows already there (JAX's persistent compilation cache in
``.jax_cache/`` also serves repeated compiles).

Usage: python experiments/plan_table.py [--resume] [--only TEXT [--redo]] [--max-devices N]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_DEVICES = 64

if __name__ == "__main__":  # host devices must exist before JAX starts
    from lshsim.t5.plan import host_device_flags

    os.environ.update(host_device_flags(MAX_DEVICES))
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(ROOT / ".jax_cache"))

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

from lshsim._io import write_atomic  # noqa: E402

BATCH, ACCUMULATE, INPUT, TARGET, HARDWARE = 256, 8, 512, 114, "h100"
_MEM = {
    "Sum K=2": {"memory": "sum", "memory_k": 2},
    "SameUp K=2": {"memory": "sameup", "memory_k": 2},
    "AltUp K=2": {"memory": "altup", "memory_k": 2},
    "AltUp K=4": {"memory": "altup", "memory_k": 4},
}


def _lookup(kind: str, rank: int, buckets: int = 0) -> dict:
    out = {"lookup": kind, "expert_rank": rank}
    return out | ({"buckets": buckets} if buckets else {})


#: (size, label, config changes, the paper's tables that report it; this repo's numbering:
#: 1/7 memory methods, 2 quality, 3 sizes, 4 lookups at 2^15 parameters, 5/8 memory sizes,
#: 6 the final comparison).
_ROWS = [
    *[
        (size, "Baseline", {}, tables)
        for size, tables in (("small", "2-4, 6-8"), ("base", "1-6"), ("large", "2, 3, 6-8"))
    ],
    *[
        (size, label, _MEM[label], tables)
        for size in ("small", "base", "large")
        for label, tables in (
            ("Sum K=2", "1" if size == "base" else "7"),
            ("SameUp K=2", "1" if size == "base" else "7"),
            ("AltUp K=2", "1-3, 5, 6" if size == "base" else "2, 3, 6-8"),
            ("AltUp K=4", "5" if size == "base" else "8"),
        )
    ],
    ("small", "Token-ID r0", _lookup("tokenid", 0), "4, 6"),
    ("small", "Softmax r256 b128", _lookup("softmax", 256, 128), "4"),
    ("small", "Softmax r128 b64", _lookup("softmax", 128, 64), "6"),
    ("small", "LSH r128 b128", _lookup("lsh", 128, 128), "4, 6"),
    ("base", "Token-ID r0", _lookup("tokenid", 0), "4"),
    ("base", "Token-ID r5", _lookup("tokenid", 5), "6"),
    ("base", "Softmax r256 b128", _lookup("softmax", 256, 128), "4"),
    ("base", "Softmax r128 b64", _lookup("softmax", 128, 64), "6"),
    ("base", "LSH r128 b128", _lookup("lsh", 128, 128), "4"),
    ("base", "LSH r10 b1024", _lookup("lsh", 10, 1024), "6"),
    ("large", "Token-ID r0", _lookup("tokenid", 0), "6"),
    ("large", "Softmax r16 b32", _lookup("softmax", 16, 32), "6"),
    ("large", "LSH r10 b1024", _lookup("lsh", 10, 1024), "6"),
]
#: Grouped by size, small first (the cheapest to compile).
ROWS = sorted(_ROWS, key=lambda r: ("small", "base", "large").index(r[0]))


def key(row) -> str:
    """A row's name: ``small Baseline``."""
    return f"{row[0]} {row[1]}"


def plan_row(row, max_devices: int) -> dict:
    """The search's result for one row, reduced to the table's figures."""
    from lshsim.t5.configs import get_config
    from lshsim.t5.plan import minimal_plan

    size, _, changes, _ = row
    cfg = get_config(size).replace(dtype="bfloat16", **changes)
    t0 = time.perf_counter()

    def progress(entry):
        what = entry.get("per_device_bytes", entry.get("skipped"))
        print(f"  {key(row)}: data={entry['data']} model={entry['model']}: {what}", flush=True)

    res = minimal_plan(
        cfg,
        hardware=HARDWARE,
        batch=BATCH,
        accumulate=ACCUMULATE,
        input_length=INPUT,
        target_length=TARGET,
        max_devices=max_devices,
        on_try=progress,
    )
    best = res["best"]
    out = {"seconds": time.perf_counter() - t0, "tried": res["tried"], "best": None}
    if best is not None:
        n = best["devices"]
        repl = next((t for t in res["tried"] if (t["data"], t["model"]) == (n, 1)), None)
        keep = ("mesh", "devices", "params", "per_device_bytes", "flops_per_step", "expert_impl")
        out["best"] = {k: best[k] for k in keep} | {
            "flops_per_step_total": best["flops_per_step_total"],
            "roofline_step_seconds": best["roofline_step_seconds"],
            "mfu_bound": best["mfu_bound"],
        }
        out["replicated"] = repl
    return out


def _gb(x) -> str:
    return f"{x / 1e9:.1f}"


def _replicated(entry: dict | None) -> str:
    if entry is None:
        return "n/a"
    if "per_device_bytes" in entry:
        return _gb(entry["per_device_bytes"])
    skipped = entry["skipped"]
    return f"> {skipped.split()[-3]} (state)" if skipped.startswith("state") else "n/a"


def experts(row, best: dict) -> str:
    """The expert implementation a row assumed (``-`` without rank-r experts).

    Rows computed before ``expert_impl`` was recorded ran ``gather`` (then the only one).
    """
    changes = row[2]
    if changes.get("lookup", "none") == "none" or not changes.get("expert_rank"):
        return "-"
    return best.get("expert_impl", "gather")


def render(results: dict, meta: dict) -> str:
    """PLAN.md from the rows computed so far."""
    lines = [
        "# The paper's configurations, planned",
        "",
        "Generated by `python experiments/plan_table.py` (see `lshsim plan --help`). Every row:",
        f"batch {BATCH} in {ACCUMULATE} micro-batches, lengths {INPUT}/{TARGET}, bf16 compute "
        "with f32 parameters, T5's Adafactor; the fewest devices of 80 GB (H100) in powers of "
        "two, and the first mesh of that many (model = 1, 2, 4, ...) whose step fits, from "
        "XLA's ahead-of-time memory analysis on forced host devices (CPU compiler: the "
        "arguments are exact, temporaries an estimate). *Replicated* is the same number of "
        "devices with model = 1 (parameters on every device); `> X (state)` means the state "
        "shard alone exceeds X GB, so it was not compiled. FLOPs from XLA's cost analysis, "
        "per device and for the whole step. *Experts*: the rank-r experts' implementation "
        "the row assumed: `ragged` (tokens sorted by bucket, `jax.lax.ragged_dot`, what "
        "`--expert-impl auto` runs on a GPU/TPU and what `lshsim plan` assumes; priced on the "
        "CPU compiler as one product of the same operands, `lshsim.t5.experts`) or `gather` "
        "(each token's expert weights materialised, `N d r` memory).",
        "",
        f"{meta['done']} of {len(ROWS)} rows computed; their searches took {meta['seconds']:.0f} "
        f"s of wall time in all (summed over rows) on {meta['machine']}, busy with other "
        "work (each row's seconds and tried meshes are in `figures/plan.json`).",
        "",
        "| model | variant | paper tables | experts | params | devices | mesh (data x model) | "
        "GB per device | replicated GB | FLOPs/step per device | FLOPs/step total | "
        "H100 roofline s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        res = results.get(key(row))
        head = f"| {row[0]} | {row[1]} | {row[3]} |"
        if res is None:
            lines.append(f"{head} | not computed yet | | | | | | | |")
        elif res["best"] is None:
            lines.append(f"{head} | | > {meta['max_devices']} | none fits | | | | | |")
        else:
            b = res["best"]
            lines.append(
                f"{head} {experts(row, b)} | {b['params']['total']:.3g} | {b['devices']} | "
                f"{b['mesh']['data']} x {b['mesh']['model']} | {_gb(b['per_device_bytes'])} | "
                f"{_replicated(res['replicated'])} | {b['flops_per_step']:.3g} | "
                f"{b['flops_per_step_total']:.3g} | {b['roofline_step_seconds']:.3g} |"
            )
    before = [
        f"- {name}: {p['devices']} devices ({p['mesh']['data']} x {p['mesh']['model']}), "
        f"{_gb(p['per_device_bytes'])} GB per device with `{p.get('expert_impl', 'gather')}`"
        for name, res in results.items()
        if (p := res.get("previous")) is not None
    ]
    if before:
        lines += [
            "",
            "Rows whose plan moved when recomputed (`--redo`, or the implementation of "
            "their experts changed), as they were before:",
            "",
            *before,
        ]
    return "\n".join(lines) + "\n"


def short_table(results: dict) -> str:
    """The README's short version: the computed rows' devices, mesh and GB per device."""
    lines = [
        "| model | variant | H100s | mesh | GB per device | replicated GB |",
        "|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        res = results.get(key(row))
        if res is None or res["best"] is None:
            continue
        b = res["best"]
        lines.append(
            f"| {row[0]} | {row[1]} | {b['devices']} | {b['mesh']['data']} x "
            f"{b['mesh']['model']} | {_gb(b['per_device_bytes'])} | "
            f"{_replicated(res['replicated'])} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    """Plan every row (or those matching ``--only``) and write PLAN.md and plan.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "figures" / "PLAN.md")
    ap.add_argument("--json", type=Path, default=ROOT / "figures" / "plan.json")
    ap.add_argument("--resume", action="store_true", help="skip the rows in --json")
    ap.add_argument("--only", help="plan only the rows whose name contains this text")
    ap.add_argument(
        "--redo",
        action="store_true",
        help="with --only: recompute those rows of --json, keep the others (the old figures "
        "are listed under the table)",
    )
    ap.add_argument("--max-devices", type=int, default=MAX_DEVICES)
    ap.add_argument("--short", action="store_true", help="print the README table of --json")
    args = ap.parse_args(argv)
    if args.short:
        print(short_table(json.loads(args.json.read_text())["rows"]))
        return
    if args.redo and not args.only:
        ap.error("--redo needs --only")
    keep = (args.resume or args.redo) and args.json.exists()
    doc = json.loads(args.json.read_text()) if keep else {}
    results, seconds = doc.get("rows", {}), doc.get("seconds", 0.0)
    for row in ROWS:
        redo = args.redo and args.only in key(row) and key(row) in results
        if (key(row) in results and not redo) or (args.only and args.only not in key(row)):
            continue
        print(f"{key(row)} ...", file=sys.stderr, flush=True)
        old = results.get(key(row))
        results[key(row)] = plan_row(row, args.max_devices)
        if redo and old is not None:
            results[key(row)]["previous"] = old.get("previous", old["best"])
            seconds -= old["seconds"]
        seconds += results[key(row)]["seconds"]
        _write(args, results, seconds)
    _write(args, results, seconds)


def _write(args, results: dict, seconds: float) -> None:
    """Record the rows so far in ``--json`` and render ``--out``."""
    meta = {
        "done": len(results),
        "seconds": seconds,
        "machine": f"{os.cpu_count()} shared CPU cores",
        "max_devices": args.max_devices,
    }
    write_atomic(args.json, json.dumps({"rows": results, "seconds": seconds}, indent=1))
    write_atomic(args.out, render(results, meta))


if __name__ == "__main__":
    main()
