"""``lshsim calibrate``: how often lshsim's 95% intervals cover the truth, row by row."""

from __future__ import annotations

import argparse
import json
import sys

from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.work import start_work

#: Seeds per row of ``--quick``.
QUICK_SEEDS = 300


def add_parser(sub) -> None:
    """Add ``calibrate`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    from lshsim.estimation.calibrate import SEEDS

    cal = sub.add_parser(
        "calibrate",
        help="coverage of the 95%% intervals over many seeds, row by row (exit 0 iff calibrated)",
        formatter_class=Formatter,
        description=wrap(
            "For every family x input kind (cosine, half-cosines, overlap) x mode (full, "
            "reduced) x statistic (top-1, top-k, positions, windows) that lshsim estimates, at "
            "a small number of pairs, run the estimate under many seeds and count how often "
            "its 95% interval holds the truth (the exact law where there is one, else the "
            "pooled estimate), with the 99% Wilson band of that coverage; the interval before "
            "issue 32 is scored on the same runs. Exit status 0 when every row meets the goal "
            "for lshsim's interval (0.95 inside its band and within 0.95 +- 0.015; a row of one "
            "trial per pair: the Wilson interval's exact coverage inside its band, and within "
            "0.95 +- 0.015), 1 otherwise, 2 on bad input."
        ),
        epilog="examples:\n  lshsim calibrate --quick\n"
        "  lshsim calibrate --row voronoi --workers 2 --out runs/calibration\n",
    )
    rows = cal.add_argument_group("which rows")
    sampling = cal.add_argument_group("seeds")
    execution = cal.add_argument_group("execution")
    output = cal.add_argument_group("output")
    sampling.add_argument(
        "--seeds",
        type=int,
        default=None,
        help=f"runs per row (default {SEEDS}; with --quick {QUICK_SEEDS})",
    )
    rows.add_argument("--quick", action="store_true", help="only the test suite's few rows")
    rows.add_argument(
        "--row",
        action="append",
        metavar="TEXT",
        help="only the rows whose label contains TEXT (repeatable)",
    )
    execution.add_argument(
        "--workers",
        type=int,
        default=0,
        help="rows run in this many processes; 0: in this process (the numbers do not change)",
    )
    sampling.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the first seed of every row (its runs: seed, seed+1, ...)",
    )
    output.add_argument(
        "--out",
        metavar="DIR",
        help="also write DIR/CALIBRATION.md and DIR/calibration.json",
    )
    output.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object instead of the text (no progress bar)",
    )
    cal.set_defaults(func=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    """Run the calibration rows and print (and with ``--out`` write) the table.

    Args:
        args: the parsed ``calibrate`` arguments.

    Returns:
        0 when every row is calibrated under lshsim's interval, 1 otherwise.
    """
    from lshsim._io import check_output_dir, write_atomic
    from lshsim._validate import check_int
    from lshsim.estimation import calibrate as cal

    rows = cal.QUICK_ROWS if args.quick else cal.ROWS
    if args.row:
        rows = tuple(r for r in rows if any(t in r.label for t in args.row))
        if not rows:
            raise ValueError(f"row: no calibration row's label contains {args.row}")
    seeds = args.seeds if args.seeds is not None else (QUICK_SEEDS if args.quick else cal.SEEDS)
    seeds = check_int("seeds", seeds, 10)
    workers = check_int("workers", args.workers, 0, 64)
    seed = check_int("seed", args.seed, 0)
    out = None if args.out is None else check_output_dir(args.out, "--out")
    start_work()

    def show(res) -> None:
        if not args.json:
            cov = "  ".join(f"{r} {res.coverage[r]:.4f}" for r in res.rules)
            print(f"{res.row['label']}: {cov}  ({res.seconds:.0f} s)", file=sys.stderr)

    results = cal.calibrate(rows, seeds, first_seed=seed, progress=show, workers=workers)
    payload = {"seeds": seeds, "first_seed": seed, "rows": [r.to_dict() for r in results]}
    if out is not None:
        write_atomic(out / "calibration.json", json.dumps(payload, indent=1) + "\n")
        write_atomic(out / "CALIBRATION.md", cal.markdown(results))
    if args.json:
        print(json.dumps(payload))
    else:
        print(cal.markdown(results))
    return 0 if all(cal.row_verdict(r.to_dict(), r.rules[0])[0] for r in results) else 1
