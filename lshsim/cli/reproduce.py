"""``lshsim reproduce``: run every study, check the claims, write the figures and REPORT.md."""

from __future__ import annotations

import argparse

from lshsim.cli.output import StepBar


def add_parser(sub) -> None:
    """Add ``reproduce`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    rep = sub.add_parser(
        "reproduce",
        help="run every study, check the claims, write figures/ and REPORT.md",
        description="The toolkit's main job: run the theory-vs-experiment studies on the "
        "embedded defaults (Theorem 1's collision studies, the routing probe of a tiny T5 at "
        "initialisation and after training, Theorem 2's width sweep; the model studies need "
        "the jax extra), evaluate Theorem 1's claims, and write PNG and SVG figures, "
        "REPORT.md and results.json (plus one JSON per study, with its config and seed) into "
        "--out. Same seed, same numbers. Exit status 0 when every claim holds, 1 otherwise.",
    )
    rep.add_argument(
        "--out", default="figures", metavar="DIR", help="output directory (default figures/)"
    )
    rep.add_argument("--seed", type=int, default=0, metavar="s", help="seed (default 0)")
    rep.add_argument(
        "--quick", action="store_true", help="small versions of every study (about 2 minutes)"
    )
    rep.set_defaults(func=run_reproduce)


def run_reproduce(args: argparse.Namespace) -> int:
    """Run :func:`lshsim.studies.reproduce.run` into ``--out`` and print a one-line summary.

    Args:
        args: the parsed ``reproduce`` arguments.

    Returns:
        The exit status: 0 when every claim holds, 1 otherwise.
    """
    from lshsim._validate import check_int
    from lshsim.studies import reproduce

    seed = check_int("seed", args.seed, 0)
    steps = 2 * len(reproduce.STUDIES) + 1  # each study, each figure, the claims
    with StepBar(steps, "reproduce", show=True) as progress:
        results = reproduce.run(args.out, quick=args.quick, seed=seed, progress=progress)
    held = sum(c["holds"] for c in results["claims"])
    print(
        f"{held}/{len(results['claims'])} claims hold; wrote {args.out}/REPORT.md, "
        f"{args.out}/results.json and {len(reproduce.STUDIES)} figures (png, svg)"
    )
    return 0 if results["holds"] else 1
