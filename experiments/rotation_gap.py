"""How far the orthogonal and Hadamard cross-polytopes are from the Gaussian-projection formula.

For each ``(d, n, a)`` it estimates the collision probability of ``rotation="orthogonal"`` and
``rotation="hadamard"`` (full mode: real ``d``-dimensional vectors, a fresh function per trial,
seeded) with a Wilson 95% interval, next to the exact Gaussian-projection value
(``lshsim.theory``) and, at ``d = m = 2``, the exact orthogonal value ``1 - 2 theta / pi``.
The numbers are those of ``proofs/lsh_exponent.md``.

Usage: OPENBLAS_NUM_THREADS=1 python experiments/rotation_gap.py [--samples S] [--seed s] [--json]

Each orthogonal trial draws a fresh Haar rotation (a ``d x d`` QR): single-threaded BLAS keeps
that at ~2 ms for ``d = 128``; a threaded OpenBLAS on a busy machine was measured 400x slower.
"""

from __future__ import annotations

import argparse
import json
import math

from lshsim import theory
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


def rows(samples: int, seed: int) -> list[dict]:
    """One row per point and rotation: estimate, interval, Gaussian value, gap in sigmas."""
    out = []
    for d, n, a in POINTS:
        gauss = theory.probability("crosspolytope", n, a)
        for rotation in ("orthogonal", "hadamard"):
            e = estimate_collision(
                "crosspolytope", n, cosine=a, dim=d, samples=samples, seed=seed, rotation=rotation
            )
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
                    "gaussian_projection": gauss,
                    "relative_gap": e.estimate / gauss - 1.0,
                    "z": (e.estimate - gauss) / sd,
                    "exact": exact,
                }
            )
    return out


def main() -> None:
    """Print the table (or ``--json``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    table = rows(args.samples, args.seed)
    if args.json:
        print(json.dumps(table))
        return
    print("| d | n | a | rotation | estimate [95% CI] | gaussian-projection | gap | z |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in table:
        lo, hi = r["ci"]
        print(
            f"| {r['d']} | {r['n']} | {r['cosine']} | {r['rotation']} | {r['estimate']:.4f} "
            f"[{lo:.4f}, {hi:.4f}] | {r['gaussian_projection']:.4f} | "
            f"{100 * r['relative_gap']:+.1f}% | {r['z']:+.1f} |"
        )


if __name__ == "__main__":
    main()
