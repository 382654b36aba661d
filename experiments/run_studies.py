"""Run theory-vs-experiment studies and write one JSON per study (data, config, seed).

Usage: python experiments/run_studies.py [--study NAME ...] [--quick] [--seed s] [--out DIR]

The studies are those of ``lshsim reproduce`` (``lshsim.studies.reproduce.STUDIES``); this
script runs
any subset without plotting or checking claims. Plot the files with
``experiments/plot_studies.py``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from lshsim.studies import reproduce


def main() -> None:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--study", action="append", choices=list(reproduce.STUDIES))
    ap.add_argument("--quick", action="store_true", help="the small configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("figures"))
    args = ap.parse_args()
    cfg = reproduce.QUICK if args.quick else reproduce.DEFAULT
    config = {"name": "quick" if args.quick else "default", **asdict(cfg)}
    for name in args.study or list(reproduce.STUDIES):
        data = reproduce.STUDIES[name](cfg, args.seed)
        path = args.out / f"{name}.json"
        reproduce.write_atomic(
            path, json.dumps({"config": config, "seed": args.seed, "data": data})
        )
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
