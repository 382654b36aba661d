"""Frequency-aware collisions of a corpus: the study of ``lshsim reproduce`` on your text.

Usage: python experiments/frequency_collisions.py [--corpus PATH ...] [--documents N]
       [--quick] [--seed s] [--out DIR]

Tokenizes the corpus (text files, JSON lines with a ``"text"`` field, or folders; default: the
embedded corpus) with the tokenizer ``lshsim train --config tiny`` would train on it, and
writes ``<out>/frequency_collisions.json`` and its figure (PNG, SVG), and prints the report
section: the share of token and 2-gram occurrences whose bucket holds another distinct key,
measured with the real hashes against the exact ideal-hash law (:mod:`lshsim.laws.frequency`,
``proofs/frequency.md``), per frequency band, and the LongCat table-size rule.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from lshsim.plots import save_figure
from lshsim.studies import STUDIES
from lshsim.studies.reproduce import DEFAULT, QUICK, run_config, write_study

NAME = "frequency_collisions"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (2 with one line on bad input)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", nargs="+", metavar="PATH", help="text or JSON lines (embedded)")
    ap.add_argument("--documents", type=int, metavar="N", help="only the first N documents")
    ap.add_argument("--quick", action="store_true", help="the small configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("frequency_out"))
    args = ap.parse_args(argv)
    study = STUDIES[NAME]
    profile = QUICK if args.quick else DEFAULT
    cfg = study.config(profile)
    if args.corpus:
        cfg = dataclasses.replace(cfg, frequency_corpus=tuple(args.corpus))
    if args.documents is not None:
        if args.documents < 1:
            print("documents: must be an integer >= 1", file=sys.stderr)
            return 2
        cfg = dataclasses.replace(cfg, frequency_documents=args.documents)
    try:
        data = study.compute(cfg, args.seed)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    config = {**run_config(profile, [study]), **dataclasses.asdict(cfg)}
    print(f"wrote {write_study(args.out, NAME, config, args.seed, data)}")
    save_figure(study.figure(data), args.out / NAME)
    print("\n".join(study.section(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
