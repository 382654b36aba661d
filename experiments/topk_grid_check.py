"""The exact top-k overlap's quadrature against an independent brute-force grid quadrature.

``lshsim theory --topk k`` computes the Voronoi top-k overlap ``O_k(n, a)`` by an adaptive
multinomial quadrature (:func:`lshsim.laws.topk.topk_quadrature`). This script evaluates it
at the points of :data:`POINTS` next to :func:`lshsim.testing.reference.topk_overlap_grid` (a
tensor grid in ``(u, v)``, the both-above cell as a cumulative trapezoid sum, no Owen's T) and
records both values and their relative difference: the numbers of ``proofs/lookups_beyond.md``
(how the integral is checked), rendered from ``figures/topk_grid_check.json``, which

    python experiments/topk_grid_check.py --out figures/topk_grid_check.json

writes (about 15 s: the grids are 1601 x 1601). Without ``--out`` it prints them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lshsim.bench.report import command_line, write_record
from lshsim.laws.topk import topk_quadrature
from lshsim.testing.reference import topk_overlap_grid

#: (n, k, a): small n (the grid's accuracy), k up to 5, a of both signs.
POINTS = [(8, 2, 0.5), (16, 3, 0.3), (32, 4, 0.8), (64, 1, 0.6), (12, 5, -0.4)]
#: The grid's step and half-width (``topk_overlap_grid``'s defaults).
STEP, LIM = 0.01, 8.0


def rows() -> list[dict]:
    """One row per point: ``n``, ``k``, ``a``, ``quadrature``, ``grid``, ``relative_difference``."""
    out = []
    for n, k, a in POINTS:
        quadrature = topk_quadrature(n, k, a)
        grid = topk_overlap_grid(n, k, a, step=STEP, lim=LIM)
        out.append(
            {
                "n": n,
                "k": k,
                "a": a,
                "quadrature": quadrature,
                "grid": grid,
                "relative_difference": abs(quadrature / grid - 1.0),
            }
        )
    return out


def main() -> None:
    """Print the rows, or write the JSON (``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the JSON here instead of printing")
    args = ap.parse_args()
    table = rows()
    if args.out is None:
        for r in table:
            print(
                f"n={r['n']} k={r['k']} a={r['a']}: quadrature {r['quadrature']:.10f}, "
                f"grid {r['grid']:.10f}, relative difference {r['relative_difference']:.2e}"
            )
        return
    doc = {
        "command": command_line("experiments/topk_grid_check.py"),
        "settings": {"points": POINTS, "step": STEP, "lim": LIM},
        "rows": table,
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
