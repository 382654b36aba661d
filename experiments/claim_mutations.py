"""The claims' evidence under their mutations: the numbers the proofs quote when a check fails.

``lshsim check --mutate`` runs every claim's check under its named mutation (a deliberately
broken library function) and requires it to fail. This script runs the claims that
``proofs/theorem1.md`` and ``proofs/lsh_exponent.md`` quote under their mutations (Theorem 1's
``T1.*``) and keeps, per claim, the mutation's name, whether the check failed and the evidence
it computed; plus :data:`CROSS`, checks run under another claim's mutation (to show what an
error the statement cannot see does). ``figures/claim_mutations.json`` is written by

    python experiments/claim_mutations.py --out figures/claim_mutations.json

(about a minute: each check runs once plain and once mutated). Without ``--out`` it prints the
JSON. The checks are seeded, so a rerun gives the same numbers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lshsim.bench.report import command_line, write_record
from lshsim.theorems import claims
from lshsim.theorems._one_thread import one_thread
from lshsim.theorems.theorem1.mutations import MUTATIONS

#: (claim, mutation): a claim's check under a mutation that is not its own.
CROSS = (("T1.d2", "voronoi-probability-x1.01"),)


def mutated(ids: list[str]) -> list[dict]:
    """Each claim's check under its own mutation.

    Args:
        ids: claim ids.

    Returns:
        ``{"id", "mutation", "fails_under_mutation", "mutation_evidence"}`` per claim.
    """
    keep = ("id", "mutation", "fails_under_mutation", "mutation_evidence")
    return [{k: v.to_dict()[k] for k in keep} for v in claims.check(ids, mutate=True)]


def cross() -> list[dict]:
    """The :data:`CROSS` checks, on one thread as ``lshsim check`` runs them.

    Returns:
        ``{"id", "mutation", "holds", "evidence"}`` per check.
    """
    out = []
    for cid, name in CROSS:
        with one_thread(), MUTATIONS[name].apply():
            holds, evidence = claims.CLAIMS[cid].check()
        out.append({"id": cid, "mutation": name, "holds": bool(holds), "evidence": evidence})
    return out


def main() -> None:
    """Print the JSON, or write it (``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--claim", action="append", help="only this claim (repeatable; default: every T1.*)"
    )
    ap.add_argument("--out", type=Path, help="write the JSON here instead of printing it")
    args = ap.parse_args()
    ids = args.claim or [c for c in claims.CLAIMS if c.startswith("T1.")]
    doc = {
        "command": command_line("experiments/claim_mutations.py"),
        "claims": mutated(ids),
        "cross": cross(),
    }
    write_record(doc, args.out)


if __name__ == "__main__":
    main()
