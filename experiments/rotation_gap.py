"""How far the orthogonal and Hadamard cross-polytopes are from the Gaussian-projection formula.

For each ``(d, n, a)`` it estimates the collision probability of ``rotation="orthogonal"`` and
``rotation="hadamard"`` (full mode: real ``d``-dimensional vectors, a fresh function per trial,
seeded) with a Wilson 95% interval, next to the exact Gaussian-projection value
(``lshsim.theory``) and, at ``d = m = 2``, the exact orthogonal value ``1 - 2 theta / pi``.
It then reruns one point (:data:`RERUN`) with more pairs and another seed. The numbers are
those of ``proofs/lsh_exponent.md`` §3, rendered from ``figures/rotation_gap.json``, which

    OPENBLAS_NUM_THREADS=1 python experiments/rotation_gap.py --out figures/rotation_gap.json

writes (3.4 minutes of wall time, 1.7 of CPU, on a loaded 2-core machine, the rerun included).
Without ``--out`` it prints the tables.

Each orthogonal trial draws a fresh Haar rotation (a ``d x d`` QR): run it with single-threaded
BLAS (``OPENBLAS_NUM_THREADS=1``); a threaded OpenBLAS on a busy machine is far slower. Each
row records its wall time (``seconds``) and the file the machine it ran on.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

from lshsim import theory
from lshsim.bench.machine import loadavg, machine_info
from lshsim.bench.report import command_line, write_record
from lshsim.estimate import estimate_collision

#: (d, n, a): m = n/2 equal to d (a full rotation) or far below it
POINTS = [
    (2, 4, 0.5),
    (8, 16, 0.0),
    (8, 16, 0.5),
    (64, 128, 0.0),
    (64, 128, 0.5),
    (64, 16, 0.0),
    (64, 16, 0.5),
    (128, 16, 0.5),
]
#: The point rerun with three times the pairs and another seed (its first Hadamard row sat
#: far from the orthogonal one).
RERUN = {"point": (64, 128, 0.5), "samples": 60_000, "seed": 7}
ROTATIONS = ("orthogonal", "hadamard")


def rows(points: list[tuple[int, int, float]], samples: int, seed: int) -> list[dict]:
    """One row per point and rotation.

    Args:
        points: ``(d, n, a)`` triples.
        samples: pairs per row (a fresh function per pair).
        seed: the estimates' seed.

    Returns:
        Dicts with the estimate, its interval, the Gaussian-projection value, the relative gap,
        ``z`` = (estimate - Gaussian value) / binomial s.d. at the Gaussian value, the exact
        orthogonal value where known (``d = 2``) and the row's wall time.
    """
    out = []
    for d, n, a in points:
        gauss = theory.probability("crosspolytope", n, a)
        for rotation in ROTATIONS:
            start = time.perf_counter()
            e = estimate_collision(
                "crosspolytope", n, cosine=a, dim=d, samples=samples, seed=seed, rotation=rotation
            )
            seconds = time.perf_counter() - start
            sd = math.sqrt(gauss * (1 - gauss) / e.samples)
            exact = None
            if rotation == "orthogonal" and d == 2:
                exact = max(0.0, 1.0 - 2.0 * math.acos(a) / math.pi)
            out.append(
                {
                    "d": d,
                    "n": n,
                    "cosine": a,
                    "rotation": rotation,
                    "estimate": e.estimate,
                    "ci": [e.ci_low, e.ci_high],
                    "samples": e.samples,
                    "seed": seed,
                    "gaussian_projection": gauss,
                    "relative_gap": e.estimate / gauss - 1.0,
                    "z": (e.estimate - gauss) / sd,
                    "exact": exact,
                    "seconds": seconds,
                }
            )
    return out


def document(samples: int, seed: int, rerun: bool) -> dict:
    """The whole study as ``figures/rotation_gap.json`` holds it.

    Args:
        samples: pairs per row of the main table.
        seed: the main table's seed.
        rerun: also rerun :data:`RERUN`'s point.

    Returns:
        ``{"command", "machine", "settings", "rows", "rerun"}`` (``rerun`` empty without it).
    """
    machine = machine_info()
    blas = os.environ.get("OPENBLAS_NUM_THREADS")
    machine["env"]["OPENBLAS_NUM_THREADS"] = blas
    prefix = f"OPENBLAS_NUM_THREADS={blas} " if blas is not None else ""
    doc = {
        "command": command_line("experiments/rotation_gap.py", prefix=prefix),
        "machine": machine,
        "settings": {
            "points": POINTS,
            "samples": samples,
            "seed": seed,
            "rerun": RERUN if rerun else None,
        },
        "rows": rows(POINTS, samples, seed),
        "rerun": rows([RERUN["point"]], RERUN["samples"], RERUN["seed"]) if rerun else [],
    }
    machine["loadavg_at_end"] = loadavg()
    return doc


def print_table(table: list[dict]) -> None:
    """Print rows as a Markdown table."""
    print("| d | n | a | rotation | estimate [95% CI] | gaussian-projection | gap | z | s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in table:
        lo, hi = r["ci"]
        print(
            f"| {r['d']} | {r['n']} | {r['cosine']} | {r['rotation']} | {r['estimate']:.4f} "
            f"[{lo:.4f}, {hi:.4f}] | {r['gaussian_projection']:.4f} | "
            f"{100 * r['relative_gap']:+.1f}% | {r['z']:+.1f} | {r['seconds']:.1f} |"
        )


def main() -> None:
    """Print the tables, or write the JSON (``--out``)."""
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Run with OPENBLAS_NUM_THREADS=1 (each orthogonal trial is a d x d QR).",
    )
    ap.add_argument("--samples", type=int, default=20_000, help="pairs per row (20000)")
    ap.add_argument("--seed", type=int, default=0, help="the main table's seed (0)")
    ap.add_argument("--no-rerun", action="store_true", help="skip the rerun of RERUN's point")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of printing tables")
    args = ap.parse_args()
    doc = document(args.samples, args.seed, not args.no_rerun)
    if args.out is not None:
        write_record(doc, args.out)
        return
    print_table(doc["rows"])
    if doc["rerun"]:
        print(f"\nrerun: {RERUN['samples']} pairs, seed {RERUN['seed']}")
        print_table(doc["rerun"])


if __name__ == "__main__":
    main()
