"""Draw the figures from study JSON files (as written by run_studies.py or lshsim reproduce).

Usage: python experiments/plot_studies.py [DIR] [--formats png svg]

For every ``<name>.json`` in DIR (default ``figures``) whose name is a figure of
``lshsim.plots.FIGURES``, writes ``<name>.png`` (and the other formats) next to it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lshsim import plots


def main() -> None:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dir", nargs="?", type=Path, default=Path("figures"))
    ap.add_argument("--formats", nargs="+", default=["png", "svg"])
    args = ap.parse_args()
    for name, draw in plots.FIGURES.items():
        path = args.dir / f"{name}.json"
        if not path.exists():
            continue
        fig = draw(json.loads(path.read_text())["data"])
        for out in plots.save_figure(fig, args.dir / name, formats=tuple(args.formats)):
            print(f"wrote {out}")


if __name__ == "__main__":
    main()
