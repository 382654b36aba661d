"""``lshsim compare A B``: does run B reproduce run A, number by number, by each one's promise?"""

from __future__ import annotations

import argparse
import json
import math

from lshsim.cli.formatting import Formatter, wrap
from lshsim.cli.vocabulary import JSON_HELP
from lshsim.cli.work import start_work


def add_parser(sub) -> None:
    """Add ``compare`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    cmp = sub.add_parser(
        "compare",
        help="compare two results.json of lshsim reproduce by what each number promises",
        formatter_class=Formatter,
        description=wrap(
            "Compare two results.json written by lshsim reproduce (A the reference, e.g. the "
            "committed figures/results.json; B a new run of the same profile and seed). Every "
            "number carries the kind of reproducibility it promises, recorded in results.json "
            "by the study that computed it: exact theory must agree to 1e-9 relative; "
            "Monte-Carlo estimates must be identical when both runs used the same versions of "
            "python, numpy, scipy, numba and llvmlite (otherwise their differences are "
            "reported, not a broken promise); numbers downstream of XLA (the T5 routing probe, "
            "Theorem 2's trained students) may move across platforms, and the difference is "
            "reported. A number in one file only breaks its promise. Prints a row per "
            "quantity (kind, numbers, how many differ, the largest difference, verdict)."
        )
        + "\n\n"
        + wrap(
            "Exit status: 0 when every promise holds, 1 when one is broken, 2 on bad input "
            "(a missing file, not a results.json, runs of different profiles or seeds). --json "
            "prints every quantity with up to 20 differences each."
        ),
        epilog="example:\n  lshsim compare figures/results.json runs/r1/results.json --json\n",
    )
    cmp.add_argument("a", metavar="A", help="the reference results.json")
    cmp.add_argument("b", metavar="B", help="the results.json to check against A")
    cmp.add_argument("--json", action="store_true", help=JSON_HELP)
    cmp.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    """Compare ``A`` and ``B`` and print the verdicts.

    Args:
        args: the parsed ``compare`` arguments.

    Returns:
        The exit status: 0 when every promise holds, 1 when one is broken.
    """
    from lshsim.studies.compare import check, compare, table

    pair = check(args.a, args.b)  # both files read and checked: one line naming a bad one
    start_work()
    result = compare(args.a, args.b, pair)
    if args.json:
        print(json.dumps(_json_safe(result.to_dict()), default=str, allow_nan=False))
    else:
        print("\n".join(table(result)))
    return 1 if result.broken else 0


def _json_safe(obj):
    """``obj`` with each non-finite float as a string: ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.

    JSON has no such numbers; ``json.dumps`` would print a bare ``NaN``.
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    return obj
