"""Run theory-vs-experiment studies and write one JSON per study (data, config, seed).

Usage: python experiments/run_studies.py [--study NAME ...] [--quick] [--seed s] [--out DIR]

The studies are those of ``lshsim reproduce`` (the registry ``lshsim.studies.STUDIES``); this
script runs any subset without plotting or checking claims. Plot the files with
``experiments/plot_studies.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lshsim.studies import STUDIES
from lshsim.studies.reproduce import DEFAULT, QUICK, run_config, write_study


def main() -> None:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--study", action="append", choices=list(STUDIES))
    ap.add_argument("--quick", action="store_true", help="the small configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("figures"))
    args = ap.parse_args()
    profile = QUICK if args.quick else DEFAULT
    config = run_config(profile)
    for name in args.study or list(STUDIES):
        data = STUDIES[name](profile, args.seed)
        print(f"wrote {write_study(args.out, name, config, args.seed, data)}")


if __name__ == "__main__":
    main()
