"""Issue 33's goals that are not a kernel against a peer: sweep scaling and compile times.

* ``sweep_scaling``: :func:`lshsim.bench.sweep.run` (a Monte-Carlo-bound sweep on a Dask
  LocalCluster of 2 single-threaded workers against 1, interleaved rounds, same rows), goal
  >= 1.7x; the load average before and after is in the row (it needs 2 idle cores).
* ``compile``: CPU seconds (user + system of a fresh ``lshsim`` process, from
  ``resource.getrusage(RUSAGE_CHILDREN)``) of ``lshsim cost --config small --memory altup
  --blocks 64`` (goal: under 60 s, AltUp stacked so that tracing does not grow with K) and of
  ``lshsim plan`` of the paper's base Token-ID rank 5 on one mesh (1 x 2, batch 256 in 8,
  bf16, H100; goal: 15 s of CPU per mesh), scanned (the default: one scanned layer per
  stack) and unrolled (``--no-scan-layers``, the peer). ``--quick``: ``tiny`` stand-ins.
* ``scan_compile``: CPU seconds of ``lshsim plan`` of ``base`` for every paper variant,
  scanned against unrolled (issue 46; goal: 30 s of CPU scanned).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from typing import Any

from lshsim.bench.machine import loadavg
from lshsim.bench.timing import row
from lshsim.hashing import Engram, NGram, TokenID

_PLAN_B = ["plan", "--config", "base", "--lookup", TokenID.name, "--rank", "5", "--mesh",
           "data=1,model=2", "--batch", "256", "--accumulate", "8", "--dtype", "bfloat16",
           "--hardware", "h100", "--json"]  # fmt: skip
#: The compile rows: (name, command-line arguments of ``lshsim``, goal in CPU seconds[, the
#: same command as it was before, timed beside it]).
COMPILES = (
    (
        "AltUp K=64 small: lshsim cost (trace + lower + XLA cost analysis)",
        ["cost", "--config", "small", "--memory", "altup", "--blocks", "64", "--json"],
        60.0,
        None,
    ),
    (
        "plan B Token-ID r5, one mesh (1 x 2, batch 256 in 8, bf16, H100), scanned",
        _PLAN_B,
        15.0,
        [*_PLAN_B, "--no-scan-layers"],
    ),
)  # fmt: skip
#: ``--quick`` stand-ins (the same commands on ``tiny``).
QUICK_COMPILES = (
    ("AltUp K=4 tiny: lshsim cost", ["cost", "--config", "tiny", "--memory", "altup",
                                     "--blocks", "4", "--json"], 60.0, None),
    ("plan tiny Token-ID r5, one mesh (1 x 2), scanned",
     ["plan", "--config", "tiny", "--lookup", TokenID.name, "--rank", "5", "--mesh",
      "data=1,model=2", "--json"], 15.0,
     ["plan", "--config", "tiny", "--lookup", TokenID.name, "--rank", "5", "--mesh",
      "data=1,model=2", "--no-scan-layers", "--json"]),
)  # fmt: skip


def sweep_scaling(quick: bool) -> list[dict[str, Any]]:
    """Two Dask workers against one on the same Monte-Carlo-bound sweep."""
    from lshsim.bench.sweep import run

    before = loadavg()
    result = run(4, 200, 1) if quick else run(16, 2000, 3)
    return [{**result, "loadavg_before": before, "loadavg_after": loadavg()}]


def _cpu_seconds(argv: list[str]) -> tuple[float, float]:
    """``(CPU seconds, wall seconds)`` of ``python -m lshsim.cli ARGV``.

    Raises:
        RuntimeError: the command failed (its exit status and the end of its stderr).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "lshsim.cli", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        raise RuntimeError(f"lshsim {' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-300:]}")
    return cpu, wall


def _cpu_row(name: str, argv, goal: float, cpu: float, wall: float, peer: str, peer_s):
    """A row of a command's CPU seconds against its goal (``<=``), its peer beside it."""
    return row(
        name,
        ratio=cpu,
        goal=goal,
        op="<=",
        measure="CPU seconds of the whole command (a fresh process)",
        ours="lshsim " + " ".join(argv),
        peer=peer,
        ours_s=cpu,
        peer_s=peer_s,
        wall_s=wall,
    )


def compile_times(quick: bool) -> list[dict[str, Any]]:
    """CPU seconds of the compile-bound commands against their goals (and their peers')."""
    out = []
    for name, argv, goal, before in QUICK_COMPILES if quick else COMPILES:
        cpu, wall = _cpu_seconds(argv)
        peer, peer_s = f"the goal, {goal:g} s of CPU", None
        if before is not None:
            peer_s, _ = _cpu_seconds(before)
            peer += f"; lshsim {' '.join(before)}: {peer_s:.1f} s"
        out.append(_cpu_row(name, argv, goal, cpu, wall, peer, peer_s))
    return out


#: Issue 46's rows: ``lshsim plan`` of ``base`` (1 x 2 mesh, batch 128, bf16, H100), which
#: traces, lowers and compiles the train step, for every paper variant, scanned (the default)
#: against ``--no-scan-layers``; goal: 30 s of CPU scanned.
_PLAN_BASE = ["plan", "--config", "base", "--mesh", "data=1,model=2", "--batch", "128",
              "--dtype", "bfloat16", "--hardware", "h100", "--json"]  # fmt: skip
SCAN_VARIANTS = {
    "baseline": [],
    "Sum K=2": ["--memory", "sum"],
    "SameUp K=2": ["--memory", "sameup"],
    "AltUp K=2": ["--memory", "altup"],
    "AltUp (Gemma 3n) K=2": ["--memory", "gemma3n"],
    "Token-ID r5": ["--lookup", TokenID.name, "--rank", "5"],
    "Softmax 128": ["--lookup", "softmax", "--buckets", "128"],
    "LSH 128": ["--lookup", "lsh", "--buckets", "128"],
    "N-gram 2x1024": ["--lookup", NGram.name, "--heads", "2", "--buckets", "1024"],
    "Engram N=3, 2 heads": ["--lookup", Engram.name, "--ngram", "3", "--heads", "2"],
}


def scan_compile(quick: bool) -> list[dict[str, Any]]:
    """CPU seconds of planning ``base`` (``tiny`` with ``quick``), scanned against unrolled."""
    out = []
    for name, flags in SCAN_VARIANTS.items():
        argv = [*_PLAN_BASE, *flags]
        if quick:
            argv[argv.index("base")] = "tiny"
        cpu, wall = _cpu_seconds(argv)
        peer = "the goal, 30 s of CPU"
        peer_s, peer_wall = _cpu_seconds([*argv, "--no-scan-layers"])
        peer += f"; unrolled (--no-scan-layers): {peer_s:.1f} s ({peer_wall:.1f} s wall)"
        label = f"plan {'tiny' if quick else 'base'} {name}, 1 x 2, batch 128, scanned"
        out.append(_cpu_row(label, argv, 30.0, cpu, wall, peer, peer_s))
    return out


CASES = {"sweep_scaling": sweep_scaling, "compile": compile_times, "scan_compile": scan_compile}
