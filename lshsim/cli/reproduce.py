"""``lshsim reproduce``: run every study, check the claims, write the figures and REPORT.md."""

from __future__ import annotations

import argparse

from lshsim.cli.output import StepBar
from lshsim.cli.work import start_work


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
        "--out, and last manifest.json (seed, profile, config, versions, every file's "
        "SHA-256). Same seed, same numbers. Exit status 0 when every claim holds, 1 otherwise. "
        "--verify DIR checks a folder against its manifest instead: exit 0 when it holds "
        "exactly one finished run, 1 (one line per problem) when the run was interrupted or "
        "files are missing, changed or left over from another run.",
        epilog="examples:\n  lshsim reproduce --quick --out runs/quick\n"
        "  lshsim reproduce --verify figures\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument(
        "-o",
        "--out",
        default=None,
        metavar="DIR",
        help="output directory (default figures/: the committed figures are regenerated)",
    )
    rep.add_argument("--seed", type=int, default=None, metavar="s", help="seed (default 0)")
    rep.add_argument(
        "--quick",
        action="store_true",
        help="small versions of every study and each claim's quick check (about 2 minutes)",
    )
    rep.add_argument(
        "--verify",
        metavar="DIR",
        help="run nothing: check that DIR holds one finished run, unchanged (its manifest.json)",
    )
    rep.set_defaults(func=run_reproduce)


def verify_folder(folder: str) -> int:
    """Print whether ``folder`` holds one finished, unchanged run (``--verify``).

    Args:
        folder: the folder to check.

    Returns:
        0 when it is complete, 1 when it is not (one line per problem on stdout).

    Raises:
        ValueError: If ``folder`` is not a folder.
    """
    from pathlib import Path

    from lshsim.studies import manifest

    if not Path(folder).is_dir():
        raise ValueError(f"--verify: {folder} is not a folder")
    ok, lines = manifest.summary(folder)
    print("\n".join(lines))
    return 0 if ok else 1


def run_reproduce(args: argparse.Namespace) -> int:
    """Run :func:`lshsim.studies.reproduce.run` into ``--out`` and print a one-line summary.

    Args:
        args: the parsed ``reproduce`` arguments.

    Returns:
        The exit status: 0 when every claim holds (``--verify``: the folder is complete), 1
        otherwise.
    """
    from lshsim._io import check_output_dir
    from lshsim._validate import check_int

    if args.verify is not None:
        given = [f for f, v in (("--out", args.out), ("--seed", args.seed)) if v is not None]
        given += ["--quick"] if args.quick else []
        if given:
            raise ValueError(f"--verify: runs nothing, so {given[0]} has no effect with it")
        start_work()
        return verify_folder(args.verify)
    seed = check_int("seed", 0 if args.seed is None else args.seed, 0)
    out = check_output_dir("figures" if args.out is None else args.out, "--out")
    start_work()

    from lshsim.studies import reproduce

    steps = 2 * len(reproduce.STUDIES) + 1  # each study, each figure, the claims
    with StepBar(steps, "reproduce", show=True) as progress:
        results = reproduce.run(out, quick=args.quick, seed=seed, progress=progress)
    held = sum(c["holds"] for c in results["claims"])
    print(
        f"{held}/{len(results['claims'])} claims hold; wrote {out}/REPORT.md, "
        f"{out}/results.json, {len(reproduce.STUDIES)} figures (png, svg) and last "
        f"{out}/manifest.json"
    )
    return 0 if results["holds"] else 1
