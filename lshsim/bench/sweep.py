"""A Monte-Carlo-bound sweep on 2 local Dask workers against 1: ``experiments/bench_sweep.py``.

Both LocalClusters are started (and warmed: every worker has loaded the kernels) before any
timing; then each round sweeps the same spec once on each cluster, in an order that rotates
every round (:func:`lshsim.bench.timing.interleaved`), into a fresh folder. The statistic is
the ratio of median wall times (1 worker / 2 workers; the issue's goal is >= 1.7), with the
check that both give the same rows. The cells are full-mode Voronoi estimates at a cosine:
each is a few tenths of a second of Numba work on one thread, so the sweep is bound by the
Monte Carlo, not by Dask's scheduling. Cluster start-up is reported beside, not in, the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path
from typing import Any

from lshsim.bench.machine import loadavg, machine_info
from lshsim.bench.report import emit, log, positive
from lshsim.bench.timing import interleaved, speedup_row
from lshsim.hashing import Voronoi


def bench_spec(cells: int, samples: int) -> dict:
    """The benchmark's spec: ``cells`` full-mode Voronoi cells at ``n = 256``, ``d = 64``.

    Args:
        cells: the number of cells (cosines spread over ``[0.05, 0.95]``).
        samples: pairs per cell.

    Returns:
        A SPEC dict.
    """
    cosines = [round(0.05 + 0.9 * i / max(cells - 1, 1), 6) for i in range(cells)]
    grid = {"command": "simulate", "family": [Voronoi.name], "buckets": [256], "cosine": cosines}
    grid = {**grid, "samples": [samples], "dim": [64], "mode": ["full"]}  # not auto: reduced
    return {"seed": 0, "grids": [grid]}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The benchmark's options."""
    p = argparse.ArgumentParser(
        prog="bench_sweep.py",
        description="Time a Monte-Carlo-bound sweep on LocalClusters of 1 and 2 workers "
        "(interleaved rounds) and report the speed-up (goal >= 1.7).",
    )
    p.add_argument("--cells", type=positive, default=16, help="cells per sweep (default 16)")
    p.add_argument("--samples", type=positive, default=2000, help="pairs per cell (default 2000)")
    p.add_argument("--rounds", type=positive, default=3, help="timed rounds (default 3)")
    p.add_argument("--json", action="store_true", help="print the JSON (the table on stderr)")
    p.add_argument("--out", help="also write the JSON here (e.g. figures/bench_sweep.json)")
    return p.parse_args(argv)


def run(cells: int, samples: int, rounds: int) -> dict[str, Any]:
    """Start both clusters, warm them, time the interleaved rounds; return the result row.

    Args:
        cells: cells per sweep.
        samples: pairs per cell.
        rounds: timed rounds.

    Returns:
        A :func:`lshsim.bench.timing.speedup_row` with start-up times and the row check.
    """
    from lshsim.sweep import parse_spec
    from lshsim.sweep.execute import dask_client, run_sweep
    from lshsim.sweep.store import read_table

    spec = parse_spec(bench_spec(cells, samples))
    tables: dict[str, list] = {}
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        addresses, startup = {}, {}
        for name, workers in (("1 worker", 1), ("2 workers", 2)):
            t0 = time.perf_counter()
            client = stack.enter_context(dask_client(workers))
            startup[name] = time.perf_counter() - t0
            addresses[name] = client.scheduler.address
        count = iter(range(10**6))

        def sweep(name: str):
            out = tmp / f"{name.replace(' ', '_')}-{next(count)}"
            run_sweep(spec, out, scheduler=addresses[name])
            tables[name] = sorted(read_table(out).drop(["seconds"]).to_pylist(), key=str)

        log(f"bench_sweep: {cells} cells x {samples} pairs, {rounds} rounds")
        timings = interleaved(
            {n: (lambda n=n: sweep(n)) for n in addresses}, rounds=rounds, paired=False
        )
    return speedup_row(
        f"sweep of {cells} voronoi full-mode cells (n=256, d=64, {samples} pairs): 2 vs 1",
        timings,
        "2 workers",
        "1 worker",
        goal=1.7,
        ours="LocalCluster, 2 single-threaded workers",
        peer="LocalCluster, 1 single-threaded worker",
        checks={"same rows": tables["1 worker"] == tables["2 workers"]},
        startup_s=startup,
        times_s={n: t["times"] for n, t in timings.items()},
    )


def format_table(r: dict[str, Any]) -> str:
    """The result as a few aligned lines."""
    return "\n".join(
        [
            r["name"],
            f"  1 worker : {r['peer_s']:.2f} s (median; IQR {r['peer_iqr_s']:.2f})",
            f"  2 workers: {r['ours_s']:.2f} s (median; IQR {r['ours_iqr_s']:.2f})",
            f"  speed-up : {r['ratio']:.2f}x (goal {r['goal']}; same rows: "
            f"{r['checks']['same rows']}; meets: {r['meets']})",
        ]
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; print the table (or JSON) and write it with ``--out``.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).

    Returns:
        ``{"machine", "results"}``.
    """
    args = parse_args(argv)
    machine = machine_info()
    result = run(args.cells, args.samples, args.rounds)
    payload = {"machine": {**machine, "loadavg_at_end": loadavg()}, "results": [result]}
    emit(payload, format_table(result), as_json=args.json, out=args.out)
    return payload
