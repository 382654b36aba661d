"""``lshsim sweep``: run grids of ``simulate``/``theory`` cells into a Parquet dataset; plot one.

The work is in :mod:`lshsim.sweep`; this module parses the flags, shows progress (a bar on a
terminal, else a line every :data:`LOG_SECONDS` on stderr) and prints the summary.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.vocabulary import JSON_HELP, install_aliases
from lshsim.cli.work import start_work
from lshsim.sweep.execute import BATCH, TIMEOUT

#: Seconds between progress lines when stderr is not a terminal (a batch job's log).
LOG_SECONDS = 30.0

_DESCRIPTION = wrap(
    "Run every cell of SPEC's grids and store one row per cell in a Parquet dataset at --out: "
    "the cell's options, estimate, ci_low, ci_high, exact (where the library has an exact "
    "value), seconds, its seed and the versions that computed it. SPEC (TOML or JSON) is "
    '{"seed": s, "grids": [{"command": "simulate" | "theory", OPTION: [values], ...}]}, '
    "options named as those commands spell them without dashes; each grid is the Cartesian "
    "product of its lists. A cell's seed derives from the sweep's seed and the cell's "
    "options only, so the rows do not depend on workers or order. A killed sweep continues "
    "with --resume (finished cells are skipped; every cell ends up in exactly one row)."
)

_EPILOG = """\
example SPEC (sweep.toml):
  seed = 0
  [[grids]]
  command = "simulate"
  family = ["voronoi", "crosspolytope"]
  buckets = [4, 16, 64, 256]
  cosine = [0.5, 0.9]
  mode = ["reduced"]
  samples = [10000]
  [[grids]]
  command = "theory"
  family = ["voronoi", "crosspolytope"]
  buckets = [4, 16, 64, 256]
  cosine = [0.5, 0.9]

examples:
  lshsim sweep sweep.toml -o runs/s1                      # one worker per core
  lshsim sweep sweep.toml --out runs/s1 --resume          # after a kill: the rest only
  lshsim sweep sweep.toml --out runs/s1 --scheduler tcp://10.0.0.5:8786
  lshsim sweep --plot runs/s1                             # runs/s1/_figures/*.png, *.svg
  python -c "import lshsim.sweep as s; print(s.read_table('runs/s1'))"  # the rows
"""


def _options_text() -> str:
    """The sweepable options of each command, as their parsers define them."""
    from lshsim.sweep.spec import commands

    lines = ["options of a grid (as the command's flags, without dashes):"]
    for name, cmd in commands().items():
        lines.append(f"  {name + ':':10s} " + ", ".join(cmd.options))
    return "\n".join(lines) + "\n\n"


def add_parser(sub) -> None:
    """Add ``sweep`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    sw = sub.add_parser(
        "sweep",
        help="run a grid of simulate/theory cells (locally or on Dask) into Parquet",
        description=_DESCRIPTION,
        epilog=_options_text() + _EPILOG,
        formatter_class=Formatter,
    )
    sw.add_argument("spec", nargs="?", metavar="SPEC", help="the sweep's spec (.toml or .json)")
    run = sw.add_argument_group("running a sweep")
    run.add_argument(
        "-o", "--out", metavar="DIR", help="the Parquet dataset's folder (new or empty)"
    )
    run.add_argument(
        "--seed",
        type=int,
        metavar="s",
        help="the sweep's seed (default: the spec's seed, else 0); a cell's seed derives from it",
    )
    where = run.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="N >= 1: a local Dask cluster of N single-threaded processes (default: one per "
        "core); 0: run the cells in this process",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="an existing Dask scheduler, e.g. tcp://HOST:8786 (its workers need lshsim)",
    )
    run.add_argument("--resume", action="store_true", help="continue the sweep in --out")
    run.add_argument(
        "--part-rows",
        type=int,
        metavar="R",
        help=f"most rows per Parquet part file (default {BATCH}; formerly --batch)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help=f"with --workers N or --scheduler: seconds to reach the scheduler and see a worker "
        f"(default {TIMEOUT:g})",
    )
    plot = sw.add_argument_group("drawing a sweep")
    plot.add_argument(
        "--plot",
        metavar="DIR",
        help="run nothing: draw the sweep in DIR (collision against n per family)",
    )
    plot.add_argument(
        "--figures", metavar="DIR", help="with --plot: where to write (default DIR/_figures)"
    )
    out = sw.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=JSON_HELP)
    sw.set_defaults(func=run_sweep)
    install_aliases(sw, "sweep")


def _check_combination(args: argparse.Namespace) -> None:
    """Refuse flags that have no effect in the given combination."""
    run_flags = {
        "SPEC": args.spec,
        "--out": args.out,
        "--seed": args.seed,
        "--workers": args.workers,
        "--scheduler": args.scheduler,
        "--resume": args.resume or None,
        "--part-rows": args.part_rows,
        "--timeout": args.timeout,
    }
    if args.plot is not None:
        given = [k for k, v in run_flags.items() if v is not None]
        if given:
            raise ValueError(f"--plot: runs nothing, so {given[0]} has no effect with it")
        return
    if args.figures is not None:
        raise ValueError("--figures has no effect without --plot")
    if args.spec is None or args.out is None:
        raise ValueError("give SPEC and --out DIR (or --plot DIR)")
    if args.timeout is not None and args.workers == 0:
        raise ValueError("--timeout has no effect with --workers 0 (the cells run in this process)")


def _default_workers() -> int:
    """One worker per usable core."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class _Progress:
    """``progress(done, total)``: a bar on a terminal, else a line now and then on stderr."""

    def __init__(self, show: bool):
        from tqdm import tqdm

        self.tty = show and sys.stderr.isatty()
        self.bar = tqdm(disable=not self.tty, file=sys.stderr, unit="cell", desc="sweep")
        self.start = self.last = time.monotonic()
        self.first: int | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.first is None:
            self.first = done
            self.bar.reset(total)
        self.bar.update(done - self.bar.n)
        now = time.monotonic()
        if not self.tty and (now - self.last >= LOG_SECONDS or done == total):
            self.last = now
            rate = (done - self.first) / max(now - self.start, 1e-9)
            speed = f", {rate:.3g} cells/s" if rate > 0 else ""
            left = f", {(total - done) / rate:.0f} s left" if rate > 0 and done < total else ""
            print(
                f"lshsim sweep: {done}/{total} cells ({100 * done / max(total, 1):.0f}%)"
                f"{speed}{left}",
                file=sys.stderr,
            )

    def close(self) -> None:
        self.bar.close()


def run_sweep(args: argparse.Namespace) -> int:
    """Run the sweep (or ``--plot``) and print a summary line or one JSON object.

    Every check (the flags, the spec and each cell, the folder and its parts) comes before
    :func:`lshsim.cli.work.start_work`; the work (the progress bar, the folder, the figures)
    after it.

    Args:
        args: the parsed ``sweep`` arguments.

    Returns:
        The exit status, 0.
    """
    _check_combination(args)
    if args.plot is not None:
        return _plot(args)
    from lshsim.sweep import enumerate_cells, load_spec
    from lshsim.sweep.execute import check_run
    from lshsim.sweep.execute import run_sweep as execute
    from lshsim.sweep.spec import in_spec_file

    spec = load_spec(args.spec, seed=args.seed)
    try:
        cells = enumerate_cells(spec)
    except ValueError as exc:
        raise ValueError(in_spec_file(args.spec, str(exc))) from None
    workers = _default_workers() if args.workers is None else args.workers
    if args.workers is not None and args.workers > 4 * _default_workers():
        raise ValueError(
            f"--workers: {args.workers} processes on {_default_workers()} usable cores; give at "
            f"most {4 * _default_workers()} (or --scheduler for a larger cluster)"
        )
    options = {
        "workers": workers,
        "scheduler": args.scheduler,
        "resume": args.resume,
        "batch": BATCH if args.part_rows is None else args.part_rows,
        "timeout": TIMEOUT if args.timeout is None else args.timeout,
    }
    check_run(spec, args.out, **options)
    start_work()
    progress = _Progress(show=not args.json)
    try:
        summary = execute(spec, args.out, progress=progress, cells=cells, **options)
    finally:
        progress.close()
    if args.json:
        print(json.dumps(summary.to_dict()))
    else:
        print(
            f"{summary.cells} cells ({summary.skipped} already done, {summary.ran} run) in "
            f"{summary.seconds:.1f} s; {summary.parts} parts in {summary.out}"
        )
    return 0


def _plot(args: argparse.Namespace) -> int:
    """``--plot``: check the sweep and the figures' folder, then draw; print what was written."""
    from lshsim.sweep.plot import draw_plot, prepare_plot

    target, groups = prepare_plot(args.plot, args.figures)
    start_work()
    written = draw_plot(target, groups)
    if args.json:
        print(json.dumps({"figures": [str(p) for p in written]}))
    else:
        print(f"wrote {len(written)} files: " + ", ".join(str(p) for p in written))
    return 0
