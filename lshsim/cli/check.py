"""``lshsim check``: evaluate the claims of Theorem 1 and print a verdict for each."""

from __future__ import annotations

import argparse
import json
import textwrap

from lshsim.cli.output import StepBar


def add_parser(sub) -> None:
    """Add ``check`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    chk = sub.add_parser(
        "check",
        help="evaluate every claim of Theorem 1 (exit 0 iff all hold)",
        description="Evaluate the precise claims of the paper's Theorem 1 (lshsim.theorems.claims; "
        "proofs/theorem1.md) and print id, verdict, statement and evidence. Exit status 0 "
        "when every claim holds, 1 otherwise.",
    )
    chk.add_argument("--claim", action="append", metavar="ID", help="only this claim (repeatable)")
    chk.add_argument("--json", action="store_true", help='print {"claims": [...]} as JSON')
    chk.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    """Evaluate the chosen claims (all by default) and print their verdicts.

    Args:
        args: the parsed ``check`` arguments.

    Returns:
        The exit status: 0 when every claim holds, 1 otherwise.
    """
    from lshsim.theorems import claims  # imports the estimators; keep `lshsim --help` light

    ids = args.claim or list(claims.CLAIMS)
    with StepBar(len(ids), "claims", show=not args.json) as progress:
        verdicts = claims.check(ids, progress=progress)
    ok = all(v.holds for v in verdicts)
    if args.json:
        print(json.dumps({"holds": ok, "claims": [v.to_dict() for v in verdicts]}))
    else:
        for v in verdicts:
            print(f"{v.id}  {'HOLDS' if v.holds else 'FAILS'}  ({v.seconds:.1f} s)  {v.test}")
            print(textwrap.fill(v.statement, 96, initial_indent="    ", subsequent_indent="    "))
            print(
                textwrap.fill(
                    "evidence: " + json.dumps(v.evidence, default=float),
                    96,
                    initial_indent="    ",
                    subsequent_indent="      ",
                )
            )
        held = sum(v.holds for v in verdicts)
        print(f"{held}/{len(verdicts)} claims hold")
    return 0 if ok else 1
