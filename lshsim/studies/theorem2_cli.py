"""Theorem 2 width sweep: how wide must a student be with and without upper-layer lookups?

Trains two students on y(u, q) = <Psi(u), Phi(q)> (Phi: a ReLU teacher of width d, Psi: a
table of N rows) over a grid of widths w, online (fresh samples every step), and reports the
smallest width whose held-out normalised MSE (1 - R^2) reaches the target loss:

  A  the lookup E(u) is added to the input only        (theory: exact at width 2d)
  B  a lookup at every layer and per-u output weights  (theory: exact at width d)

Writes <out>/theorem2_width.json ({"config", "seed", "data"}, as `lshsim reproduce` does; data:
every run, minimal widths per seed and their
median, the ratio A/B, the exact constructions' errors) atomically and draws
<out>/theorem2_width.png and .svg. Statement, proofs and measured numbers: proofs/theorem2.md.

Examples:
  python experiments/theorem2_width.py              # DEFAULT: d = 4 and 8, 3 seeds (~6 min)
  python experiments/theorem2_width.py --quick      # d = 4, 2 seeds (~35 s)
  python experiments/theorem2_width.py --seed 1 --seeds 5 --out /tmp/t2 --json --no-plot
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

PROG = "theorem2_width"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``theorem2_width: error: ...``."""

    def error(self, message: str) -> NoReturn:
        """Print one line and exit 2."""
        self.exit(2, f"{PROG}: error: {message}\n")


def _positive_ints(text: str) -> tuple[int, ...]:
    values = tuple(int(x) for x in text.split(","))
    if not values or min(values) < 1:
        raise ValueError
    return values


def _positive_floats(text: str) -> tuple[float, ...]:
    values = tuple(float(x) for x in text.split(","))
    if not values or not min(values) > 0:
        raise ValueError
    return values


def build_parser() -> argparse.ArgumentParser:
    """The command line (see ``--help``)."""
    ap = _Parser(
        prog=PROG,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the QUICK config (one d, 2 seeds)")
    size.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny config for tests (seconds; numbers mean little)",
    )
    ap.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    ap.add_argument("--seeds", type=int, help="replicates per width (default: the config's)")
    ap.add_argument("--steps", type=int, help="training steps (default: the config's)")
    ap.add_argument("--dims", help="teacher widths d, comma-separated (default: the config's)")
    ap.add_argument("--width-ratios", help="widths w/d to sweep, comma-separated")
    ap.add_argument("--out", type=Path, default=Path("figures"), help="output folder (figures)")
    ap.add_argument("--json", action="store_true", help="print the result JSON to stdout")
    ap.add_argument("--no-plot", action="store_true", help="do not draw the figure")
    return ap


def make_config(args: argparse.Namespace, ap: argparse.ArgumentParser) -> Any:
    """The config the arguments ask for; bad values exit 2 with one line naming the option."""
    from lshsim.theorems import theorem2

    base = theorem2.SMOKE if args.smoke else theorem2.QUICK if args.quick else theorem2.DEFAULT
    over: dict[str, Any] = {}
    if args.seed < 0:
        ap.error(f"--seed: must be >= 0, got {args.seed}")
    for flag, field in (("seeds", "seeds"), ("steps", "steps")):
        value = getattr(args, flag)
        if value is not None:
            if value < 1:
                ap.error(f"--{flag}: must be >= 1, got {value}")
            over[field] = value
    if args.steps is not None:
        over["warmup_steps"] = min(base.warmup_steps, args.steps // 10)
    for flag, field, parse in (
        ("dims", "dims", _positive_ints),
        ("width_ratios", "width_ratios", _positive_floats),
    ):
        text = getattr(args, flag)
        if text is not None:
            try:
                over[field] = parse(text)
            except ValueError:
                ap.error(
                    f"--{flag.replace('_', '-')}: expected positive numbers a,b,..., got {text!r}"
                )
    config = dataclasses.replace(base, **over)
    try:
        config.validate()
    except ValueError as exc:
        ap.error(str(exc))
    return config


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep, write the JSON and the figure.

    Args:
        argv: Arguments (default ``sys.argv[1:]``).

    Returns:
        0 on success (bad arguments exit 2).
    """
    ap = build_parser()
    args = ap.parse_args(argv)
    config = make_config(args, ap)

    from lshsim._io import write_atomic
    from lshsim.theorems import theorem2

    start = time.perf_counter()
    result = theorem2.run_sweep(
        config, args.seed, progress=lambda msg: print(f"[{PROG}] {msg}", file=sys.stderr)
    )
    # the layout `lshsim reproduce` writes for its studies: config, seed, data
    doc = {
        "config": result["config"],
        "seed": args.seed,
        "data": result,
        "elapsed_s": round(time.perf_counter() - start, 1),
    }
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    write_atomic(args.out / "theorem2_width.json", text)
    if not args.no_plot:
        from lshsim.plots import save_figure
        from lshsim.plots.theorem2 import width_figure

        save_figure(width_figure(result), args.out / "theorem2_width")
    for d, by_arch in result["minimal"].items():
        summary = ", ".join(f"{a} {v['median_over_d']}" for a, v in by_arch.items())
        print(
            f"[{PROG}] d={d}: median minimal width / d ({summary}); ratio A/B "
            f"{result['ratio'][d]}; target {config.target_loss}",
            file=sys.stderr,
        )
    print(
        f"[{PROG}] {doc['elapsed_s']} s; wrote {args.out / 'theorem2_width.json'}", file=sys.stderr
    )
    if args.json:
        sys.stdout.write(text)
    return 0
