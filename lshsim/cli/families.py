"""``lshsim families``: the hash families, their inputs, parameters and exact laws.

Everything printed comes from the family objects of the registry
(:data:`lshsim.hashing.FAMILIES`), so a family registered from outside the package
(``register_family`` or the entry-point group ``lshsim.families``) is listed like the others.
"""

from __future__ import annotations

import argparse
import json

from lshsim.cli.vocabulary import JSON_HELP
from lshsim.cli.work import start_work
from lshsim.hashing import FAMILIES, LAWS, family_names


def family_help() -> dict[str, str]:
    """One line per family (its ``help``), shown by ``lshsim families`` and ``--help``."""
    return {name: FAMILIES[name].help for name in family_names()}


def add_parser(sub) -> None:
    """Add ``families`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    fam = sub.add_parser(
        "families",
        help="list the hash families, their inputs, parameters and exact laws",
        description="List the registered lookup families: name, input kind, whether a "
        "reduced (sufficient-statistics) sampler exists, a one-line description, the "
        "parameters and the exact laws each family has. Families from other packages "
        "appear here once registered (lshsim.register_family or the entry-point group "
        "lshsim.families).",
        epilog="examples:\n  lshsim families\n  lshsim families --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fam.add_argument("--json", action="store_true", help=JSON_HELP)
    fam.set_defaults(func=run_families)


def run_families(args: argparse.Namespace) -> int:
    """Print the family registry as a table or as ``{"families": [...]}``.

    A plug-in that failed to load is not listed: it was named in one warning line when the
    registry loaded the entry points (:func:`lshsim.hashing.load_entry_points`).

    Args:
        args: the parsed ``families`` arguments.

    Returns:
        The exit status, 0.
    """
    start_work()
    rows = [_row(name, FAMILIES[name]) for name in family_names()]
    if args.json:
        print(json.dumps({"families": rows}))
    else:
        for r in rows:
            print(f"{r['name']:<14s} {r['input']:<11s} {r['description']}")
    return 0


def _row(name: str, cls) -> dict:
    """The ``lshsim families --json`` record of one family."""
    return {
        "name": name,
        "input": cls.input_kind,
        "reduced": cls.reduced,
        "description": cls.help,
        "parameters": [p.name for p in cls.parameters],
        "laws": [law for law in LAWS if cls.has_law(law)],
        "topk": cls.has_topk,
    }
