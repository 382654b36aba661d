"""Write figures/TUNE.md and figures/tune_datasketch.json: datasketch's tuner beside lshsim's.

At datasketch's common settings (threshold 0.5 / 0.8 / 0.9, num_perm 128 / 256, weights
0.5 / 0.5): the (b, r) that ``MinHashLSH`` picks, the areas it minimises, the true
probabilities of that choice, and lshsim's exact optimum
(:func:`lshsim.bench.tune_peers.comparison_page`). Exact numbers, a second of CPU;
``tests/bench/test_tune_peers.py`` checks that the committed files are current.

Usage: python experiments/tune_table.py
"""

from __future__ import annotations

from pathlib import Path

from lshsim._io import write_atomic
from lshsim.bench.tune_peers import comparison_page

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Write both files and print the page."""
    page, data = comparison_page()
    write_atomic(ROOT / "figures" / "TUNE.md", page)
    write_atomic(ROOT / "figures" / "tune_datasketch.json", data)
    print(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
