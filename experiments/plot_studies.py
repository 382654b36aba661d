"""Draw the figures from study JSON files (as written by run_studies.py or lshsim reproduce).

Usage: python experiments/plot_studies.py [DIR] [--formats png svg]

For every study of ``lshsim.studies.STUDIES`` whose ``<name>.json`` is in DIR (default
``figures``), writes ``<name>.png`` (and the other formats) next to it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lshsim.plots import save_figure
from lshsim.studies import STUDIES


def main() -> None:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dir", nargs="?", type=Path, default=Path("figures"))
    ap.add_argument("--formats", nargs="+", default=["png", "svg"])
    args = ap.parse_args()
    for name, study in STUDIES.items():
        path = args.dir / f"{name}.json"
        if not path.exists():
            continue
        fig = study.figure(json.loads(path.read_text())["data"])
        for out in save_figure(fig, args.dir / name, formats=tuple(args.formats)):
            print(f"wrote {out}")


if __name__ == "__main__":
    main()
