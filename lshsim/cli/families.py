"""``lshsim families``: the hash families, their inputs and a one-line description each."""

from __future__ import annotations

import argparse
import json

from lshsim.hashing import FAMILIES

#: One line per family, shown by ``lshsim families`` and in ``lshsim simulate --help``.
FAMILY_HELP = {
    "simhash": "sign bits of k = log2(n) Gaussian projections (n a power of two)",
    "pstable": "Datar et al. equispaced hyperplanes, k directions of width w, radix map (n = r^k)",
    "voronoi": "argmax of n Gaussian centres = softmax top-1 with a random router",
    "crosspolytope": "closest ±e_j after A x, n = 2m (gaussian-projection, orthogonal, hadamard)",
    "minhash": "min-hash of the token set, exact mod 2^61-1; k concatenated min-hashes",
    "tokenid": "token id mod n (per-token routing; one trial per aligned position)",
    "ngram": "hashed N-gram ending at each position, H heads (Engram); one trial per window",
}


def add_parser(sub) -> None:
    """Add ``families`` to the CLI's subparsers.

    Args:
        sub: the root parser's subparsers action.
    """
    fam = sub.add_parser("families", help="list the hash families, their inputs and parameters")
    fam.add_argument("--json", action="store_true", help="print JSON")
    fam.set_defaults(func=run_families)


def run_families(args: argparse.Namespace) -> int:
    """Print the family registry as a table or as ``{"families": [...]}``.

    Args:
        args: the parsed ``families`` arguments.

    Returns:
        The exit status, 0.
    """
    rows = [
        {
            "name": name,
            "input": cls.input_kind,
            "reduced": cls.reduced,
            "description": FAMILY_HELP[name],
        }
        for name, cls in FAMILIES.items()
    ]
    if args.json:
        print(json.dumps({"families": rows}))
    else:
        for r in rows:
            print(f"{r['name']:<14s} {r['input']:<11s} {r['description']}")
    return 0
