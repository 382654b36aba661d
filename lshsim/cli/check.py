"""``lshsim check``: evaluate the claims of Theorem 1 and print a verdict for each."""

from __future__ import annotations

import argparse
import json
import textwrap

from lshsim.cli.output import StepBar
from lshsim.cli.vocabulary import JSON_HELP
from lshsim.cli.work import start_work


def add_parser(sub) -> None:
    """Add ``check`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    chk = sub.add_parser(
        "check",
        help="evaluate every claim of Theorem 1 (exit 0 iff all hold)",
        description="Evaluate the precise claims of the paper's Theorem 1 (lshsim.theorems.claims; "
        "proofs/theorem1.md) and print id, verdict, statement and evidence. With --mutate, "
        "also run each claim's check against its named mutation (a deliberately broken "
        "library function, e.g. the exact Voronoi probability scaled by 1.01), under which "
        "the check must fail: this shows that the check can fail. Exit status 0 when every "
        "claim holds (and, with --mutate, every claim fails under its mutation), 1 otherwise. "
        "No --seed: each claim's Monte-Carlo evidence uses the fixed seeds the claim states.",
        epilog="examples:\n  lshsim check\n  lshsim check --claim T1.a1 --mutate --json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chk.add_argument("--claim", action="append", metavar="ID", help="only this claim (repeatable)")
    chk.add_argument(
        "--mutate",
        action="store_true",
        help="also run each check under its mutation, where it must fail (about doubles the time)",
    )
    chk.add_argument("--json", action="store_true", help=JSON_HELP)
    chk.set_defaults(func=run_check)


def _print_verdict(v, mutate: bool) -> None:
    print(f"{v.id}  {'HOLDS' if v.holds else 'FAILS'}  ({v.seconds:.1f} s)  {v.test}")
    if mutate:
        outcome = "fails, as it must" if v.fails_under_mutation else "STILL HOLDS"
        print(f"    under mutation {v.mutation}: {outcome}  ({v.mutation_seconds:.1f} s)")
    print(textwrap.fill(v.statement, 96, initial_indent="    ", subsequent_indent="    "))
    print(
        textwrap.fill(
            "evidence: " + json.dumps(v.evidence, default=float),
            96,
            initial_indent="    ",
            subsequent_indent="      ",
        )
    )


def run_check(args: argparse.Namespace) -> int:
    """Evaluate the chosen claims (all by default) and print their verdicts.

    Args:
        args: the parsed ``check`` arguments.

    Returns:
        The exit status: 0 when every claim holds (and, with ``--mutate``, every claim fails
        under its mutation), 1 otherwise.
    """
    from lshsim.theorems import claims  # imports the estimators; keep `lshsim --help` light

    ids = args.claim or list(claims.CLAIMS)
    unknown = [i for i in ids if i not in claims.CLAIMS]
    if unknown:
        raise ValueError(
            f"--claim: unknown id(s) {', '.join(map(repr, unknown))} (lshsim check --help)"
        )
    start_work()
    with StepBar(len(ids), "claims", show=not args.json) as progress:
        verdicts = claims.check(ids, progress=progress, mutate=args.mutate)
    held = sum(v.holds for v in verdicts)
    caught = sum(bool(v.fails_under_mutation) for v in verdicts)
    ok = held == len(verdicts) and (not args.mutate or caught == len(verdicts))
    if args.json:
        out = {"holds": held == len(verdicts), "claims": [v.to_dict() for v in verdicts]}
        if args.mutate:
            out["all_fail_under_mutation"] = caught == len(verdicts)
        print(json.dumps(out))
    else:
        for v in verdicts:
            _print_verdict(v, args.mutate)
        print(f"{held}/{len(verdicts)} claims hold")
        if args.mutate:
            print(f"{caught}/{len(verdicts)} claims fail under their mutation")
    return 0 if ok else 1
